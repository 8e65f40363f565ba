import { readFile, rm, stat, utimes } from 'node:fs/promises';
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
 * The leases of `.processing/`: `<name>.lease`, created exclusively (`wx`) before a claim's rename,
 * so two processes never claim the same name; touched every LEASE_HEARTBEAT_MS while the file is
 * processed; removed once the file has left `.processing/`. A lease that stops being touched tells
 * the next pass, in any process, that the file was left behind by a crash and can be taken back.
 */
export class ClaimLeases {
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(
    readonly dir: string,
    private readonly clock: Clock,
  ) {}

  path(name: string): string {
    return join(this.dir, `${name}.lease`);
  }

  /** Takes the lease of `name`; false when another claim (live or dead) holds it. */
  async acquire(name: string): Promise<boolean> {
    const path = this.path(name);
    const claimedAt = this.clock.now();
    const content = `${JSON.stringify({ pid: process.pid, host: hostname(), claimedAt })}\n`;
    if (!(await createWhole(path, content))) return false;
    // Lease times follow the injected clock, the one staleness is judged by.
    await utimes(path, claimedAt, claimedAt);
    const timer = setInterval(() => {
      const now = this.clock.now();
      utimes(path, now, now).catch(() => undefined);
    }, LEASE_HEARTBEAT_MS);
    timer.unref();
    this.#timers.set(name, timer);
    return true;
  }

  /** True while this process holds the lease of `name`. */
  holds(name: string): boolean {
    return this.#timers.has(name);
  }

  /** Gives up the lease of `name` (ours, or a dead process's once its file is recovered). */
  async release(name: string): Promise<void> {
    clearInterval(this.#timers.get(name));
    this.#timers.delete(name);
    await rm(this.path(name), { force: true });
  }

  /**
   * True when there is no lease, when its holder was a process of this host that no longer runs
   * (a `sync --once` killed a moment ago is recovered at once), or when nobody touched it for
   * STALE_LEASE_MS (a holder on another host).
   */
  async isStale(name: string): Promise<boolean> {
    try {
      const [{ mtimeMs }, text] = await Promise.all([
        stat(this.path(name)),
        readFile(this.path(name), 'utf8'),
      ]);
      const age = this.clock.now().getTime() - mtimeMs;
      const holder = holderOf(text);
      if (holder === null) return age > UNREADABLE_LEASE_MS;
      if (holderIsDeadHere(holder)) return true;
      return age > STALE_LEASE_MS;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return true;
      throw error;
    }
  }
}
