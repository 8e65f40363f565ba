import { STREAM_ORDER, type Stream } from '../../domain/records.js';

/**
 * Which files of the drop folder a pass takes, in which order, and when a file is complete.
 * Pure functions over names, sizes and times, so they are tested with a fake clock.
 */

const PREFIXES: ReadonlyArray<readonly [string, Stream]> = [
  ['accounts', 'accounts'],
  ['invoices', 'invoices'],
  ['credit-notes', 'creditNotes'],
];

/** Names never taken: hidden files and the usual "still being written" conventions. */
export function isIgnoredName(name: string): boolean {
  const lower = name.toLowerCase();
  return name.startsWith('.') || lower.endsWith('.tmp') || lower.endsWith('.part');
}

/** The stream of a file by its name (`accounts*.csv`, `invoices*.csv`, `credit-notes*.csv`, any case). */
export function streamOfFileName(name: string): Stream | null {
  if (isIgnoredName(name)) return null;
  const lower = name.toLowerCase();
  if (!lower.endsWith('.csv')) return null;
  for (const [prefix, stream] of PREFIXES) {
    if (lower.startsWith(prefix)) return stream;
  }
  return null;
}

export interface DropFileName {
  name: string;
  stream: Stream;
}

/**
 * Keeps the files a pass takes and orders them: accounts, invoices, credit notes; within a kind by
 * name, ignoring case as the pick does (`invoices-01.csv` before `INVOICES-02.csv`).
 */
export function orderDropFiles(names: Iterable<string>): DropFileName[] {
  const files: DropFileName[] = [];
  for (const name of names) {
    const stream = streamOfFileName(name);
    if (stream !== null) files.push({ name, stream });
  }
  const rank = (stream: Stream): number => STREAM_ORDER.indexOf(stream);
  const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return files.sort(
    (a, b) =>
      rank(a.stream) - rank(b.stream) ||
      byCodeUnits(a.name.toLowerCase(), b.name.toLowerCase()) ||
      byCodeUnits(a.name, b.name),
  );
}

export interface FileStamp {
  size: number;
  mtimeMs: number;
}

/**
 * Decides when a file is complete: its size and mtime have not changed for `stableMs`.
 *
 * Without sleeping: a file whose mtime is at least `stableMs` before now is complete at once (every
 * write moves the mtime). A more recent file is skipped this pass; the tracker remembers its size and
 * mtime, and a later pass takes it once they have been seen unchanged for `stableMs`. That second
 * rule covers mtimes in the future (a writer's clock ahead of ours, network file systems).
 */
export class StabilityTracker {
  readonly #stableMs: number;
  readonly #seen = new Map<string, FileStamp & { since: number }>();

  constructor(stableSeconds: number) {
    this.#stableMs = stableSeconds * 1000;
  }

  isComplete(name: string, stamp: FileStamp, nowMs: number): boolean {
    const previous = this.#seen.get(name);
    const unchanged = previous?.size === stamp.size && previous.mtimeMs === stamp.mtimeMs;
    const since = unchanged ? previous.since : nowMs;
    if (!unchanged) this.#seen.set(name, { ...stamp, since });
    // An mtime in the past: nothing has written to the file since then.
    if (stamp.mtimeMs <= nowMs) return nowMs - stamp.mtimeMs >= this.#stableMs;
    return nowMs - since >= this.#stableMs;
  }

  /** Forgets a file once taken, or gone from the folder, so the map stays as small as the folder. */
  forget(name: string): void {
    this.#seen.delete(name);
  }

  /** Forgets every file not in `present`. */
  retainOnly(present: ReadonlySet<string>): void {
    for (const name of this.#seen.keys()) if (!present.has(name)) this.#seen.delete(name);
  }
}
