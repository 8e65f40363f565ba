import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

/**
 * A ready-made data folder for the embedded state DB: what `initdb` makes (1.5–1.8 s and ~1 GB of
 * memory inside PGlite, two Postgres instances at once) plus the migrations of the day, as a
 * brotli-compressed tar (~0.66 MB; 463 entries, 9 MB written once extracted: `initdb`'s template
 * databases are dropped, and the WAL segment's zero tail is a hole, see the build script). A new
 * data folder is extracted from it instead of running `initdb`; the Migrator then applies whatever
 * migration came after it.
 * Rebuilt by `npx tsx scripts/build-embedded-template.ts` (a test fails when it is behind the
 * migrations folder, or when the installed PGlite no longer starts from it).
 */
export const TEMPLATE_FILE_NAME = 'embedded-template.tar.br';
/** Beside it: the migrations it holds, by name and sha256 of their source (what the test compares). */
export const TEMPLATE_MIGRATIONS_FILE_NAME = 'embedded-template.json';

const here = dirname(fileURLToPath(import.meta.url));

/** `src/state/` in a checkout; from `dist/src/state/`, the checkout's (or package's) `src/state/`. */
export function templatePath(): string | null {
  const candidates = [
    join(here, TEMPLATE_FILE_NAME),
    join(here, '..', '..', '..', 'src', 'state', TEMPLATE_FILE_NAME),
  ];
  return candidates.find((path) => existsSync(path)) ?? null;
}

const BLOCK = 512;

/**
 * The pax keyword that gives a file's whole size when its archived data stops before its zero tail:
 * the template's WAL segment is 16 MB of which one page is written, and decompressing (then
 * writing) its 16 MB of zeros was a third of a new data folder's cost. Other tar readers ignore an
 * unknown keyword and extract the file without its tail.
 */
const SIZE_KEYWORD = 'RECEIVABLES_SYNC.size';
/** A file whose zero tail is at least this long is archived without it. */
const MIN_ZERO_TAIL = 64 * 1024;

/**
 * The entries of a ustar archive: folders (`data` null) and files, in archive order. A file's `size`
 * is its whole size: `data` may be shorter, the rest being zeros (see `SIZE_KEYWORD`).
 */
export function* tarEntries(
  tar: Uint8Array,
): Generator<{ name: string; data: Uint8Array | null; size: number }> {
  const buffer = Buffer.from(tar.buffer, tar.byteOffset, tar.byteLength);
  const text = (from: number, length: number) =>
    buffer.toString('latin1', from, from + length).replace(/\0.*$/s, '');
  let offset = 0;
  let wholeSize: number | null = null;
  while (offset + BLOCK <= buffer.length && buffer[offset] !== 0) {
    const name = text(offset, 100).replace(/^\/+/, '');
    const size = Number.parseInt(text(offset + 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(buffer[offset + 156] || 0x30);
    if (!name || name.split('/').includes('..') || !Number.isFinite(size) || !'05x'.includes(type)) {
      throw new Error(
        `embedded DB template: unexpected tar entry "${name}" (type ${type}) at byte ${offset}`,
      );
    }
    const start = offset + BLOCK;
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      wholeSize = paxSize(buffer.toString('utf8', start, start + size));
      continue;
    }
    const data = type === '5' ? null : buffer.subarray(start, start + size);
    yield { name, data, size: Math.max(size, wholeSize ?? 0) };
    wholeSize = null;
  }
}

/** The `SIZE_KEYWORD` record of a pax header (`"<length> <keyword>=<value>\n"` records), if any. */
function paxSize(records: string): number | null {
  for (const record of records.split('\n')) {
    const [keyword, value] = record.slice(record.indexOf(' ') + 1).split('=');
    if (keyword === SIZE_KEYWORD && /^\d+$/.test(value ?? '')) return Number(value);
  }
  return null;
}

/** One pax record: its length counts itself, in decimal. */
function paxRecord(keyword: string, value: string): string {
  const body = ` ${keyword}=${value}\n`;
  let length = body.length;
  while (`${length}${body}`.length !== length) length = `${length}${body}`.length;
  return `${length}${body}`;
}

/**
 * Extracts the template into `target` (which must not exist yet): into a sibling folder first,
 * renamed at the end, so a crash half-way leaves no half-made data folder behind. Returns false
 * (and leaves nothing) when there is no template file.
 */
export function extractTemplate(target: string, file = templatePath()): boolean {
  if (!file) return false;
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  try {
    mkdirSync(partial, { recursive: true, mode: 0o700 });
    for (const entry of tarEntries(brotliDecompressSync(readFileSync(file)))) {
      const path = join(partial, entry.name);
      if (entry.data === null) mkdirSync(path, { recursive: true, mode: 0o700 });
      else {
        writeFileSync(path, entry.data, { mode: 0o600 });
        // The zero tail: the file system stores it as a hole, and reads it as zeros.
        if (entry.size > entry.data.length) truncateSync(path, entry.size);
      }
    }
    renameSync(partial, target);
    return true;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/**
 * A ustar archive of the folder `root` (folders and regular files; names < 100 characters). A
 * file's zero tail of `MIN_ZERO_TAIL` or more is left out, its whole size in a pax header before it.
 */
export function tarFolder(root: string): Buffer {
  const blocks: Buffer[] = [];
  const header = (name: string, size: number, type: '0' | '5' | 'x', mode: number) => {
    if (Buffer.byteLength(name) >= 100) throw new Error(`tar: name too long: ${name}`);
    const h = Buffer.alloc(BLOCK);
    h.write(name, 0, 'latin1');
    h.write(`${mode.toString(8).padStart(7, '0')}\0`, 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write('        ', 148);
    h.write(type, 156);
    h.write('ustar\0', 257);
    h.write('00', 263);
    let sum = 0;
    for (const byte of h) sum += byte;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h);
  };
  /** An entry's bytes, padded to whole blocks. */
  const content = (bytes: Buffer) =>
    blocks.push(bytes, Buffer.alloc((BLOCK - (bytes.length % BLOCK)) % BLOCK));
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const entryName = relative(root, path).split(sep).join('/');
      if (statSync(path).isDirectory()) {
        header(entryName, 0, '5', 0o700);
        walk(path);
      } else {
        const whole = readFileSync(path);
        let end = whole.length;
        while (end > 0 && whole[end - 1] === 0) end--;
        const data = whole.length - end >= MIN_ZERO_TAIL ? whole.subarray(0, end) : whole;
        if (data !== whole) {
          const pax = Buffer.from(paxRecord(SIZE_KEYWORD, String(whole.length)), 'utf8');
          header(`PaxHeaders/${entryName}`.slice(0, 99), pax.length, 'x', 0o600);
          content(pax);
        }
        header(entryName, data.length, '0', 0o600);
        content(data);
      }
    }
  };
  walk(root);
  blocks.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(blocks);
}

/** Writes `folder` as a template file (brotli, a 16 MB window: the three databases are alike). */
export function writeTemplate(folder: string, file: string): number {
  const tar = tarFolder(folder);
  const compressed = brotliCompressSync(tar, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: tar.length,
    },
  });
  writeFileSync(file, compressed);
  return compressed.length;
}

/**
 * The migrations of `folder` (`migrations/*.ts`, the sources: a template is built from a checkout)
 * by name, with a sha256 of their contents: an edited migration makes the template stale as much
 * as a new one does, and the migration check on open only compares names.
 */
export function migrationsDigest(folder = join(here, '..', '..', 'migrations')): {
  migrations: string[];
  sha256: string;
} {
  const files = readdirSync(folder)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort();
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(folder, file)))
      .update('\0');
  return { migrations: files.map((f) => f.slice(0, -'.ts'.length)), sha256: hash.digest('hex') };
}
