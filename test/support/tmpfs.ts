import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Small tmpfs mounts, for faults of a full disk or of a folder on another file system (EXDEV). The
 * CI machine runs the tests as root; elsewhere `mount` is refused and the tests that need one are
 * skipped (`tmpfsAvailable`).
 */

let available: boolean | undefined;

/** Whether this process may mount a tmpfs (probed once, by mounting one). */
export function tmpfsAvailable(): boolean {
  if (available !== undefined) return available;
  const probe = mkdtempSync(join(tmpdir(), 'tmpfs-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    available = true;
  } catch {
    available = false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  return available;
}

/** Mounts a tmpfs of `size` (`1m`, `256k`) at `dir` (created when missing). */
export function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
}

/** Gives the tmpfs at `dir` a new size (its files stay). */
export function resizeTmpfs(dir: string, size: string): void {
  execFileSync('mount', ['-o', `remount,size=${size}`, dir]);
}

/** Unmounts `dir` if something is mounted there (lazily: a file still open does not hold it up). */
export function unmountTmpfs(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  } catch {
    // nothing mounted there
  }
}

/** Bytes free on the file system of `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Fills the file system of `dir` to the last byte with the file `path` (written until ENOSPC). */
export function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
}
