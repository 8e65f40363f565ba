import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceProfile } from './source-profile.js';

/** A file in a drop folder's root, not taken yet. */
export interface WaitingDropFile {
  name: string;
  size: number;
  modifiedAt: Date;
  /**
   * - `writing`: modified less than `stableSeconds` ago: a pass leaves it until it stays unchanged;
   * - `ready`: the next pass takes it;
   * - `ignored`: no kind's pattern takes its name (`files:`), or its name says it is temporary.
   */
  state: 'writing' | 'ready' | 'ignored';
  /** The kind its name gives, for `writing` and `ready`. */
  kind: string | null;
}

/** At most this many files are listed (a folder of thousands says how many more there are). */
const MAX_LISTED = 100;

/**
 * The files waiting in a source's drop folder (its root: not `archive/`, `rejected/` nor the files
 * being processed), oldest first, as the source's page lists them. Hidden files are left out; a
 * folder that cannot be read (missing, no permission) lists nothing. Read-only.
 */
export async function waitingDropFiles(
  dropDir: string,
  taking: NonNullable<SourceProfile['dropFiles']>,
  now: Date,
): Promise<{ files: WaitingDropFile[]; more: number }> {
  let names: string[];
  try {
    names = (await readdir(dropDir, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
      .map((entry) => entry.name);
  } catch {
    return { files: [], more: 0 };
  }
  const files: WaitingDropFile[] = [];
  for (const name of names) {
    // Taken by a pass meanwhile: no longer waiting.
    const stamp = await stat(join(dropDir, name)).catch(() => null);
    if (stamp === null) continue;
    const kind = taking.kindOf(name);
    const age = now.getTime() - stamp.mtimeMs;
    files.push({
      name,
      size: stamp.size,
      modifiedAt: stamp.mtime,
      kind,
      state: kind === null ? 'ignored' : age < taking.stableSeconds * 1000 ? 'writing' : 'ready',
    });
  }
  files.sort((a, b) => a.modifiedAt.getTime() - b.modifiedAt.getTime() || (a.name < b.name ? -1 : 1));
  return { files: files.slice(0, MAX_LISTED), more: Math.max(0, files.length - MAX_LISTED) };
}
