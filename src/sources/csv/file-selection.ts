import picomatch from 'picomatch';
import { STREAM_ORDER, type Stream } from '../../domain/records.js';

/**
 * Which files of the drop folder a pass takes, in which order, and when a file is complete.
 * Pure functions over names, sizes and times, so they are tested with a fake clock.
 */

/** Which files hold which kind: glob patterns per kind (`files:`), matched case-insensitively. */
export type FilePatterns = Partial<Record<Stream, readonly string[] | undefined>>;

/** The contract's names, for each kind `files:` does not set. */
export const DEFAULT_FILE_PATTERNS: Readonly<Record<Stream, readonly string[]>> = {
  accounts: ['accounts*.csv'],
  invoices: ['invoices*.csv'],
  creditNotes: ['credit-notes*.csv'],
};

/** Every pattern a source takes files by, kind after kind (`files:`, the contract's names where unset). */
export const filePatternsOf = (patterns: FilePatterns = {}): string[] =>
  STREAM_ORDER.flatMap((stream) => patterns[stream] ?? DEFAULT_FILE_PATTERNS[stream]);

/** Names never taken: hidden files and the usual "still being written" conventions. */
export function isIgnoredName(name: string): boolean {
  const lower = name.toLowerCase();
  return name.startsWith('.') || lower.endsWith('.tmp') || lower.endsWith('.part');
}

/**
 * The kind of a file by its name: the first kind (accounts, invoices, credit notes) one of whose
 * patterns it matches; null for a name never taken or matching none.
 */
export function fileKinds(patterns: FilePatterns = {}): (name: string) => Stream | null {
  const matchers = STREAM_ORDER.map((stream) => {
    const globs = patterns[stream] ?? DEFAULT_FILE_PATTERNS[stream];
    return [stream, picomatch([...globs], { nocase: true, dot: false })] as const;
  });
  return (name) => {
    if (isIgnoredName(name)) return null;
    for (const [stream, matches] of matchers) if (matches(name)) return stream;
    return null;
  };
}

/** The stream of a file by its contract name (`accounts*.csv`, `invoices*.csv`, `credit-notes*.csv`, any case). */
export const streamOfFileName: (name: string) => Stream | null = fileKinds();

export interface DropFileName {
  name: string;
  stream: Stream;
}

/**
 * Keeps the files a pass takes and orders them: accounts, invoices, credit notes; within a kind by
 * name, ignoring case as the pick does (`invoices-01.csv` before `INVOICES-02.csv`).
 */
export function orderDropFiles(
  names: Iterable<string>,
  kindOf: (name: string) => Stream | null = streamOfFileName,
): DropFileName[] {
  const files: DropFileName[] = [];
  for (const name of names) {
    const stream = kindOf(name);
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

/**
 * The files of the drop folder's root no kind takes (their names match no pattern of `files:`),
 * other than those never taken by convention (hidden, `.tmp`, `.part`): named to the user, so a
 * `Kunden.csv` waiting for a pattern is never silently left.
 */
export function ignoredDropFiles(
  names: Iterable<string>,
  kindOf: (name: string) => Stream | null = streamOfFileName,
): string[] {
  return [...names].filter((name) => !isIgnoredName(name) && kindOf(name) === null).sort();
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
