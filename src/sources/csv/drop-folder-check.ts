import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../../domain/clock.js';
import { messageOf } from '../../domain/errors.js';
import { checkFailed, checkOk, type SourceCheckResult } from '../source-description.js';
import { DropFolder } from './drop-folder.js';

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
