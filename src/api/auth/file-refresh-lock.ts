import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { dirname } from 'node:path';
import { RefreshLockTimeoutError } from './auth-errors.js';
import { type HeldLock, type LockTiming, lockTiming, type RefreshLock, sleep } from './refresh-lock.js';

export interface FileRefreshLockProps extends LockTiming {
  /** The lock file, beside the credentials file: `${credentialsPath}.lock`. */
  path: string;
  random?: () => number;
}

const isErrno = (error: unknown, code: string) => (error as NodeJS.ErrnoException | null)?.code === code;

/**
 * A lock file created with O_EXCL and holding a random token; the holder touches it every ttl/3, and
 * a lock file untouched for `ttlMs` belongs to a dead process and is broken. It needs no Redis and
 * covers every process that shares the credentials file (which lives on one host).
 */
export class FileRefreshLock implements RefreshLock {
  readonly #path: string;
  readonly #timing: ReturnType<typeof lockTiming>;
  readonly #random: () => number;

  constructor(props: FileRefreshLockProps) {
    this.#path = props.path;
    this.#timing = lockTiming(props);
    this.#random = props.random ?? Math.random;
  }

  async withLock<T>(fn: (held: HeldLock) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const token = randomBytes(16).toString('hex');
    await this.#acquire(token, signal);
    let lost = false;
    const renew = async () => {
      if (lost) return false;
      if ((await this.#content()) !== token) {
        lost = true;
        return false;
      }
      const now = new Date();
      await utimes(this.#path, now, now).catch(() => {});
      return true;
    };
    const timer = setInterval(
      () => {
        renew().catch(() => {});
      },
      Math.max(10, Math.floor(this.#timing.ttlMs / 3)),
    );
    timer.unref();
    try {
      return await fn({ stillHeld: renew });
    } finally {
      clearInterval(timer);
      if ((await this.#content()) === token) await rm(this.#path, { force: true });
    }
  }

  async #acquire(token: string, signal?: AbortSignal): Promise<void> {
    await mkdir(dirname(this.#path), { recursive: true, mode: 0o700 });
    const deadline = performance.now() + this.#timing.waitTimeoutMs;
    for (;;) {
      signal?.throwIfAborted();
      if (await this.#tryCreate(token)) return;
      await this.#breakIfStale();
      if (performance.now() >= deadline) {
        throw new RefreshLockTimeoutError(
          `another process held the token refresh lock ${this.#path} for more than ${this.#timing.waitTimeoutMs} ms`,
        );
      }
      const pollMs = this.#timing.pollMs;
      await sleep(pollMs + Math.floor(this.#random() * pollMs), signal);
    }
  }

  async #tryCreate(token: string): Promise<boolean> {
    try {
      const handle = await open(this.#path, 'wx', 0o600);
      try {
        await handle.writeFile(token, 'utf8');
      } finally {
        await handle.close();
      }
      return true;
    } catch (error) {
      if (isErrno(error, 'EEXIST')) return false;
      throw error;
    }
  }

  /**
   * Moves a stale lock file aside. Two waiters may both judge it stale: the second one then moves
   * the first one's fresh lock; it notices (the content differs) and links it back. Should the
   * holder still lose its file, its `stillHeld()` says so before it spends a refresh token.
   */
  async #breakIfStale(): Promise<void> {
    let observed: string | undefined;
    try {
      observed = await this.#content();
      const { mtimeMs } = await stat(this.#path);
      if (Date.now() - mtimeMs <= this.#timing.ttlMs) return;
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return;
      throw error;
    }
    const aside = `${this.#path}.${randomBytes(6).toString('hex')}.stale`;
    try {
      await rename(this.#path, aside);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return;
      throw error;
    }
    const moved = await readFile(aside, 'utf8').catch(() => undefined);
    if (moved !== observed) await link(aside, this.#path).catch(() => {});
    await rm(aside, { force: true });
  }

  async #content(): Promise<string | undefined> {
    try {
      return await readFile(this.#path, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined;
      throw error;
    }
  }
}
