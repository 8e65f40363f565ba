import { constants } from 'node:fs';
import { type FileHandle, lstat, lutimes, open, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../domain/clock.js';
import { createWhole, holderIsDeadHere, holderOf } from '../../domain/holder-file.js';

/** How often a process touches the leases of the files it holds. */
export const LEASE_HEARTBEAT_MS = 30_000;
/** A lease not touched for this long belongs to a process that died: its file is taken back. */
export const STALE_LEASE_MS = 5 * 60_000;
/**
 * A lease that does not say who holds it (empty or cut: written by an older version that was killed
 * between creating and writing it) is its holder's only while it could still be writing it.
 */
export const UNREADABLE_LEASE_MS = 10_000;

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/**
 * The leases of `.processing/`: `<key>.lease`, created exclusively (`wx`) before a claim's rename,
 * so two processes never claim the same name; touched every LEASE_HEARTBEAT_MS while the file is
 * processed; removed once the file has left `.processing/`. A lease that stops being touched tells
 * the next pass, in any process, that the file was left behind by a crash and can be taken back.
 *
 * A lease is named by the file's key (`internalKey`: its name, or a hash of a long one), and is
 * never followed when it is a symbolic link: its times are set with `lutimes`, it is read with
 * O_NOFOLLOW, and removing it removes the link.
 */
export class ClaimLeases {
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(
    readonly dir: string,
    private readonly clock: Clock,
  ) {}

  path(key: string): string {
    return join(this.dir, `${key}.lease`);
  }

  /** Takes the lease of `key`; false when another claim (live or dead) holds it. */
  async acquire(key: string): Promise<boolean> {
    const path = this.path(key);
    const claimedAt = this.clock.now();
    const content = `${JSON.stringify({ pid: process.pid, host: hostname(), claimedAt })}\n`;
    if (!(await createWhole(path, content))) return false;
    // Lease times follow the injected clock, the one staleness is judged by.
    await lutimes(path, claimedAt, claimedAt);
    const timer = setInterval(() => {
      const now = this.clock.now();
      // lutimes: a lease swapped for a link meanwhile does not pass the touch on to its target.
      lutimes(path, now, now).catch(() => undefined);
    }, LEASE_HEARTBEAT_MS);
    timer.unref();
    this.#timers.set(key, timer);
    return true;
  }

  /** True while this process holds the lease of `key`. */
  holds(key: string): boolean {
    return this.#timers.has(key);
  }

  /** Gives up the lease of `key` (ours, or a dead process's once its file is recovered). */
  async release(key: string): Promise<void> {
    clearInterval(this.#timers.get(key));
    this.#timers.delete(key);
    await rm(this.path(key), { force: true });
  }

  /**
   * True when there is no lease, when its holder was a process of this host that no longer runs
   * (a `sync --once` killed a moment ago is recovered at once), or when nobody touched it for
   * STALE_LEASE_MS (a holder on another host).
   */
  async isStale(key: string): Promise<boolean> {
    try {
      const [{ mtimeMs }, text] = await Promise.all([lstat(this.path(key)), this.#textOf(key)]);
      const age = this.clock.now().getTime() - mtimeMs;
      const holder = text === null ? null : holderOf(text);
      if (holder === null) return age > UNREADABLE_LEASE_MS;
      if (holderIsDeadHere(holder)) return true;
      return age > STALE_LEASE_MS;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return true;
      throw error;
    }
  }

  /**
   * What the lease says; null when it is not a regular file (a link is not read through; a FIFO is
   * opened without waiting for a writer, then not read).
   */
  async #textOf(key: string): Promise<string | null> {
    let handle: FileHandle;
    try {
      handle = await open(this.path(key), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      if (errnoOf(error) === 'ELOOP') return null;
      throw error;
    }
    try {
      return (await handle.stat()).isFile() ? await handle.readFile('utf8') : null;
    } finally {
      await handle.close();
    }
  }
}
