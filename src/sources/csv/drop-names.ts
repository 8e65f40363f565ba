import { createHash } from 'node:crypto';
import { extname } from 'node:path';

/**
 * The names the source gives the files it makes from a dropped file's name. A name may be up to
 * 255 bytes (NAME_MAX of the usual file systems), so the source never assumes it can add to it:
 * a lease (`<name>.lease`, with its `.<pid>-<random>.tmp` while it is written), a spool
 * (`<name>.problems.ndjson`), a numbered copy (`<name>~12.csv`) or a report beside the file
 * (`<name>.errors.csv`) of a 253-byte name would be refused with ENAMETOOLONG, at every pass.
 */

/** The longest name used as it is in those names: it leaves room for every suffix the source adds. */
export const NAME_BYTES_KEPT = 200;

const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');
const digestOf = (name: string): string => createHash('sha256').update(name, 'utf8').digest('hex');

/**
 * The key of a claimed file's own files in `.processing/` (`<key>.lease`, `<key>.problems.ndjson`,
 * `<key>.failed.ndjson`): its name, or for a longer name `~` and a hash of it. No name the source
 * takes starts with `~`, so a key never passes for a claimed file.
 */
export function internalKey(name: string): string {
  return bytesOf(name) <= NAME_BYTES_KEPT ? name : `~${digestOf(name).slice(0, 32)}`;
}

/**
 * The name a file is archived or rejected under: its name, or for a longer name its first bytes,
 * `~` and a hash of the whole name, then its extension (`invoices-aaaa…aaa~3f9c2e1b7d04.csv`). The
 * ledger keeps the name as dropped.
 */
export function storedName(name: string): string {
  if (bytesOf(name) <= NAME_BYTES_KEPT) return name;
  const ext = extname(name);
  const suffix = `~${digestOf(name).slice(0, 12)}${bytesOf(ext) <= 16 ? ext : ''}`;
  return `${headOf(name, NAME_BYTES_KEPT - bytesOf(suffix))}${suffix}`;
}

/** The longest start of `text` of at most `bytes` UTF-8 bytes, never cutting a character in two. */
function headOf(text: string, bytes: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    used += bytesOf(char);
    if (used > bytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/** `invoices.csv` -> `invoices~2.csv`. */
export function numberedName(name: string, n: number): string {
  if (n === 1) return name;
  const ext = extname(name);
  return `${name.slice(0, name.length - ext.length)}~${n}${ext}`;
}
