import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import type { Checked } from './field-validators.js';

const PDF_SIGNATURE = Buffer.from('%PDF-');

/**
 * Resolves a row's `file` value to the absolute path of a PDF inside the drop folder.
 * The value is data from outside, so it is confined: no absolute path, no `..` segment, and the
 * real path (symlinks resolved) must stay under the drop folder's real path. Then the file must be
 * a regular file that starts with the `%PDF-` signature.
 *
 * @param dropRealPath the drop folder's own `realpath`, computed once per pass.
 * @example
 *   const pdf = await resolvePdf(await realpath('./drop'), 'pdf/F-2026-001.pdf');
 *   if (pdf.ok) upload(pdf.value); else report(pdf.reason);
 */
export async function resolvePdf(dropRealPath: string, value: string): Promise<Checked<string>> {
  if (isAbsolute(value) || /^[A-Za-z]:/.test(value) || value.startsWith('\\')) {
    return {
      ok: false,
      reason: `must be a path relative to the drop folder, not an absolute path: "${value}"`,
    };
  }
  if (value.split(/[\\/]/).includes('..')) {
    return { ok: false, reason: `must stay inside the drop folder (no ".." in the path): "${value}"` };
  }
  let real: string;
  try {
    real = await realpath(join(dropRealPath, value));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, reason: `file not found: "${value}"` };
    return { ok: false, reason: `cannot read "${value}": ${code ?? String(error)}` };
  }
  if (!real.startsWith(dropRealPath.endsWith(sep) ? dropRealPath : dropRealPath + sep)) {
    return { ok: false, reason: `must stay inside the drop folder, but it links outside it: "${value}"` };
  }
  const signature = await readSignature(real);
  if (signature === 'not-a-file') return { ok: false, reason: `not a regular file: "${value}"` };
  if (signature === 'unreadable') return { ok: false, reason: `cannot read "${value}"` };
  if (!signature.equals(PDF_SIGNATURE)) {
    return { ok: false, reason: `not a PDF (it does not start with the %PDF- signature): "${value}"` };
  }
  return { ok: true, value: real };
}

async function readSignature(path: string): Promise<Buffer | 'not-a-file' | 'unreadable'> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    // stat before open: opening a FIFO or a device would block or read something that is no file.
    if (!(await stat(path)).isFile()) return 'not-a-file';
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(PDF_SIGNATURE.length);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } catch {
    return 'unreadable';
  } finally {
    await handle?.close();
  }
}
