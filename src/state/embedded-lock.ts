import { unlinkSync } from 'node:fs';
import { readFile, rm, stat, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { AppError } from '../domain/errors.js';
import { createWhole, type FileHolder, holderIsDeadHere, holderOf } from '../domain/holder-file.js';

/** The lock of the embedded state DB, next to its PGlite folder in the data folder. */
export const EMBEDDED_LOCK_FILE = 'state-db.lock';

/** How often the holder touches its lock, and how old a lock of another host must be to be stale. */
export const LOCK_HEARTBEAT_MS = 10_000;
export const LOCK_STALE_MS = 60_000;

/** The lock files this process holds (with their heartbeat): a second open here is refused too. */
const held = new Map<string, NodeJS.Timeout>();
let releasedOnExit = false;

export interface EmbeddedLock {
  path: string;
  /** Removes the lock; safe to call more than once. */
  release(): Promise<void>;
}

/**
 * Another process (or an open not yet closed in this one) holds the embedded state DB. PGlite runs
 * Postgres inside one process: two processes on the same folder each write their own view of the
 * files, and the last to write wins, silently losing the other's writes.
 */
export class StateDbInUseError extends AppError {
  constructor(dataDir: string, holder: FileHolder) {
    const host = typeof holder.host === 'string' ? holder.host : 'an unknown host';
    const who =
      `process ${String(holder.pid)}${host === hostname() ? '' : ` on ${host}`}` +
      (typeof holder.command === 'string' ? ` (${holder.command})` : '');
    const gone =
      host === hostname()
        ? ''
        : `; if that process is gone, its lock lapses ${LOCK_STALE_MS / 1000} s after its last sign of life (or remove ${join(dataDir, EMBEDDED_LOCK_FILE)})`;
    super(
      'STATE_DB_IN_USE',
      `the embedded state DB in ${dataDir} is in use by ${who}; the embedded state DB serves one process at a time: stop it, or use Postgres (DATABASE_URL) to run several processes (worker + CLI)${gone}`,
    );
  }
}

/**
 * Takes the embedded state DB's lock of `dataDir` for this process, until `release()` (or, best
 * effort, the process's exit), or throws `StateDbInUseError`. A lock that names no readable holder,
 * a process of this host that no longer runs (killed), or this process's pid while this process
 * does not hold it (a container restarted under the same pid) is stale and taken over. A holder on
 * another host cannot be checked from here: its lock is stale once not touched for LOCK_STALE_MS
 * (the holder touches it every LOCK_HEARTBEAT_MS).
 */
export async function lockEmbeddedFolder(dataDir: string): Promise<EmbeddedLock> {
  const path = join(dataDir, EMBEDDED_LOCK_FILE);
  const content = `${JSON.stringify({
    pid: process.pid,
    host: hostname(),
    command: commandLine(),
    since: new Date().toISOString(),
  })}\n`;
  // A few rounds: a stale lock removed here may be taken by another process starting at once.
  for (let round = 0; round < 3; round++) {
    if (!held.has(path) && (await createWhole(path, content))) {
      // Touched while held: a lock of another host (a container recreated on the same volume) whose
      // holder stopped touching it is stale after LOCK_STALE_MS.
      const beat = setInterval(() => {
        const now = new Date();
        utimes(path, now, now).catch(() => undefined);
      }, LOCK_HEARTBEAT_MS);
      beat.unref();
      held.set(path, beat);
      releaseOnExit();
      return { path, release: () => release(path) };
    }
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text === undefined) continue; // released meanwhile: try again
    const holder = holderOf(text);
    const touchedMs = await stat(path).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    if (holder !== null && !isStale(path, holder, touchedMs)) throw new StateDbInUseError(dataDir, holder);
    // Removed only if it still says what was judged stale (not a lock another process just took).
    if ((await readFile(path, 'utf8').catch(() => undefined)) === text) await rm(path, { force: true });
  }
  throw new StateDbInUseError(dataDir, { pid: 'unknown' });
}

function isStale(path: string, holder: FileHolder, touchedMs: number): boolean {
  if (holder.host === hostname() && holder.pid === process.pid) return !held.has(path);
  if (holder.host !== hostname()) return Date.now() - touchedMs > LOCK_STALE_MS;
  return holderIsDeadHere(holder);
}

async function release(path: string): Promise<void> {
  const beat = held.get(path);
  if (!beat) return;
  clearInterval(beat);
  held.delete(path);
  await rm(path, { force: true });
}

/** On exit, whatever was not closed: a crash that still runs `exit` listeners leaves no lock. */
function releaseOnExit(): void {
  if (releasedOnExit) return;
  releasedOnExit = true;
  process.on('exit', () => {
    for (const path of held.keys()) {
      try {
        unlinkSync(path);
      } catch {
        // Best effort: the next open finds the lock stale anyway.
      }
    }
  });
}

/** The holder's command as its user typed it, short: `receivables-sync.js sync --once --source erp`. */
function commandLine(): string {
  const [script, ...args] = process.argv.slice(1);
  const line = [script ? basename(script) : basename(process.execPath), ...args].join(' ');
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
