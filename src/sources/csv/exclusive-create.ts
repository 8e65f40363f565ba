import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Creates `path` and opens it for writing. Fails with EEXIST when anything has the name, a
 * symbolic link included (even one to nowhere): nothing is written through or over it. Every file
 * the CSV source writes in a drop folder is made so (leases, spools, reports, copies).
 */
export function createExclusive(path: string): Promise<FileHandle> {
  return open(path, CREATE_NEW, 0o666);
}
