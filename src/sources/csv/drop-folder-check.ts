import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SourceConfig } from '../../config/schema.js';
import { systemClock } from '../../domain/clock.js';
import { messageOf } from '../../domain/errors.js';
import type { Stream } from '../../domain/records.js';
import { printable } from '../../logging/printable-text.js';
import { checkFailed, checkOk, checkWarned, type SourceCheckResult } from '../source-description.js';
import { DropFolder } from './drop-folder.js';
import { inspectFile } from './file-inspection.js';
import { readability } from './file-readability.js';
import { fileKinds, ignoredDropFiles, orderDropFiles } from './file-selection.js';
import { kindLines } from './kind-settings.js';

/**
 * `doctor`'s check of a CSV source: its drop folder (`dropFolderCheck`), then the files waiting in
 * it that no kind takes (their names match no pattern of `files:`): a warning naming them, as a
 * pass leaves them where they are. The detail says what each kind expects (its patterns, its
 * format with the defaults filled in, whether `columns` and `rows` set it), so a file rejected or
 * ignored can be checked against it.
 */
export async function csvSourceCheck(
  config: Extract<SourceConfig, { type: 'csv' }>,
): Promise<SourceCheckResult> {
  const dir = resolve(config.dropDir);
  const folder = await dropFolderCheck(dir);
  if (folder.status === 'fail') return folder;
  const kinds = `; kinds: ${kindLines(config).join('; ')}`;
  const kindOf = fileKinds(config.files);
  const drop = new DropFolder(dir, systemClock, kindOf);
  let names: string[];
  try {
    names = await drop.listRootFiles();
  } catch (error) {
    return checkFailed(`the drop folder ${dir} cannot be listed: ${messageOf(error)}`);
  }
  const ignored = ignoredDropFiles(names, kindOf);
  const unreadable = await unreadableFiles(drop, names, kindOf, config);
  const problems: string[] = [];
  if (ignored.length > 0)
    problems.push(
      `${ignored.length} file${ignored.length === 1 ? '' : 's'} of the drop folder match${ignored.length === 1 ? 'es' : ''} no kind ` +
        `(files:) and ${ignored.length === 1 ? 'is' : 'are'} left where ${ignored.length === 1 ? 'it is' : 'they are'}: ` +
        `${ignored.map(printable).join(', ')} (add a pattern under files:, or move ${ignored.length === 1 ? 'it' : 'them'})`,
    );
  for (const { name, reason } of unreadable)
    problems.push(`${printable(name)} would be rejected by a pass: ${printable(reason)}`);
  if (problems.length === 0) return checkOk(`${folder.detail}${kinds}`);
  return checkWarned(`${problems.join('; ')}; ${folder.detail}${kinds}`);
}

/** Files a pass reads first: their header and format are checked as a pass would, nothing moved. */
const FILES_LOOKED_AT = 5;

/**
 * The files waiting in the drop folder that a pass would reject as a whole (their encoding, their
 * header, a configured column missing): read in place as a dry run reads them, the first
 * `FILES_LOOKED_AT` of them.
 */
async function unreadableFiles(
  folder: DropFolder,
  names: readonly string[],
  kindOf: (name: string) => Stream | null,
  config: Extract<SourceConfig, { type: 'csv' }>,
): Promise<Array<{ name: string; reason: string }>> {
  const found: Array<{ name: string; reason: string }> = [];
  for (const { name, stream } of orderDropFiles(names, kindOf).slice(0, FILES_LOOKED_AT)) {
    const path = join(folder.root, name);
    try {
      const readable = await readability(
        { folder, dryRun: true, config },
        { name, path, stream },
        await inspectFile(path),
      );
      if (!readable.ok) found.push({ name, reason: readable.reason });
    } catch (error) {
      // Gone meanwhile, or unreadable by this user: a pass says so; doctor does not guess.
      found.push({ name, reason: `cannot be read: ${messageOf(error)}` });
    }
  }
  return found;
}

/**
 * `doctor`'s check of a drop folder, writing nothing it keeps: it exists, is readable, a file can
 * be renamed in it (claims are renames), and its working folders are real folders.
 */
export async function dropFolderCheck(dir: string): Promise<SourceCheckResult> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) return checkFailed(`${dir} is not a folder`);
  } catch {
    return checkFailed(`the drop folder ${dir} does not exist: create it (mkdir -p) or fix dropDir`);
  }
  try {
    await access(dir, fsConstants.R_OK | fsConstants.W_OK);
    // A name nobody can plant ahead, created new ('wx' never follows or truncates a link there).
    const probe = join(dir, `.doctor-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(probe, '', { flag: 'wx' });
    await rename(probe, `${probe}.moved`);
    await rm(`${probe}.moved`, { force: true });
  } catch (error) {
    return checkFailed(
      `the drop folder ${dir} is not writable (${messageOf(error)}): files are claimed by renaming them`,
    );
  }
  try {
    await new DropFolder(dir, systemClock).checkWorkingFolders();
  } catch (error) {
    return checkFailed(messageOf(error));
  }
  return checkOk(`drop folder ${dir}: exists, writable, its working folders real folders`);
}
