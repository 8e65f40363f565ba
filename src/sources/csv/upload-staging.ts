import { randomBytes } from 'node:crypto';
import { lstat, lutimes, readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Clock } from '../../domain/clock.js';
import type { Stream } from '../../domain/records.js';
import type { CsvSourceConfig } from './csv-source.js';
import { PROCESSING_DIR } from './drop-folder.js';
import { NAME_BYTES_KEPT, numberedName } from './drop-names.js';
import { CsvSourceError } from './errors.js';
import { createExclusive, lstatOrNull, moveNoClobber } from './exclusive-entries.js';
import { fileKinds, filePatternsOf } from './file-selection.js';
import { workingFolder } from './working-folder.js';

/**
 * Files uploaded from the dashboard, waiting for a user's "Sync now" or "Discard":
 *
 *   <dropDir>/.uploads/<id>/<name>     one upload, as the browser sent it, under a sanitized name
 *
 * `.uploads` starts with a dot and is a folder: a pass never takes anything in it (see
 * `isIgnoredName`, `listRootFiles`). It lives under the drop folder, so "Sync now" is a move on one
 * file system into the drop folder's root, where the file is claimed, read, archived or rejected
 * like any dropped file. Nothing here follows a link: the folders are checked to be real ones
 * (`workingFolder`), the file is created with O_EXCL|O_NOFOLLOW, and it is moved without replacing
 * anything (`moveNoClobber`).
 */
export const UPLOADS_DIR = '.uploads';

/** One upload waiting in `.uploads/<id>/`. */
export interface StagedFile {
  /** 16 hexadecimal digits, random: the folder's name and the upload's address on the dashboard. */
  id: string;
  /** The name it is dropped under (sanitized, see `uploadName`). */
  name: string;
  /** The kind its name gives it (the source's `files:` patterns). */
  stream: Stream;
  size: number;
  /** When it was staged (its folder's mtime). */
  stagedAt: Date;
  /** `.uploads/<id>`: a drop folder of its own, for the dry run of its preview. */
  dir: string;
}

export interface UploadStagingProps {
  config: CsvSourceConfig;
  clock: Clock;
  /** The id of a new upload; default 8 random bytes as hex. */
  newId?: () => string;
}

const ID = /^[0-9a-f]{16}$/;
/** C0 and C1 control characters and DEL (Unicode category Cc). */
const CONTROL = /\p{Cc}/gu;
const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/**
 * The name an uploaded file is dropped under: the last part of what the browser sent (no folder,
 * whatever separator: `../../etc/invoices.csv` is `invoices.csv`), without control characters. Refused
 * when nothing is left, when it is hidden (a pass never takes `.x`), too long to work on, or when it
 * matches no kind of the source (a pass would leave it in the drop folder).
 *
 * @throws CsvSourceError `CSV_UPLOAD_NAME_REFUSED` saying which and what name would do
 */
export function uploadName(sent: string, config: CsvSourceConfig): { name: string; stream: Stream } {
  const name = (sent.split(/[/\\]/).pop() ?? '').replace(CONTROL, '').trim();
  const refuse = (why: string) =>
    new CsvSourceError('CSV_UPLOAD_NAME_REFUSED', `the file name "${name || sent}" ${why}`);
  if (name === '' || name === '.' || name === '..') throw refuse('is empty once its folders are taken off');
  if (name.startsWith('.')) throw refuse('starts with a dot: such files are never taken; rename it');
  if (Buffer.byteLength(name, 'utf8') > NAME_BYTES_KEPT)
    throw refuse(`is longer than ${NAME_BYTES_KEPT} bytes: give it a shorter name`);
  const stream = fileKinds(config.files)(name);
  if (stream === null) throw refuse(`matches no kind of this source: name it ${patternsOf(config)}`);
  return { name, stream };
}

function patternsOf(config: CsvSourceConfig): string {
  return `like ${filePatternsOf(config.files).join(', ')} (the source's files: setting)`;
}

/**
 * The uploads of one CSV source: staged under `.uploads/`, then moved into the drop folder or
 * deleted.
 *
 * @example
 *   const staging = new UploadStaging({ config, clock: systemClock });
 *   const file = await staging.stage('invoices-march.csv', request.file, 10 * 1024 * 1024);
 *   // ... a dry run of `staging.previewConfig(file)` ...
 *   const { name } = await staging.take(file.id); // now in the drop folder, taken by the next pass
 */
export class UploadStaging {
  readonly #config: CsvSourceConfig;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly root: string;

  constructor(props: UploadStagingProps) {
    this.#config = props.config;
    this.#clock = props.clock;
    this.#newId = props.newId ?? (() => randomBytes(8).toString('hex'));
    this.root = resolve(props.config.dropDir);
  }

  /**
   * Writes `content` to `.uploads/<new id>/<name>`. Past `maxBytes` the upload is deleted and
   * refused; so it is when anything fails while it is written (nothing half-written waits).
   *
   * @throws CsvSourceError `CSV_UPLOAD_NAME_REFUSED` (see `uploadName`), `CSV_UPLOAD_TOO_LARGE`,
   * `CSV_DROP_DIR_MISSING`, `CSV_DROP_DIR_UNSAFE` (`.uploads` is a link)
   */
  async stage(sentName: string, content: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StagedFile> {
    const { name } = uploadName(sentName, this.#config);
    await this.#checkRoot();
    const id = this.#newId();
    const dir = await workingFolder(this.root, UPLOADS_DIR, id);
    try {
      const handle = await createExclusive(join(dir, name));
      let size = 0;
      try {
        for await (const chunk of content) {
          size += chunk.byteLength;
          if (size > maxBytes) throw tooLarge(name, maxBytes);
          await handle.write(chunk);
        }
      } finally {
        await handle.close();
      }
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    const staged = await this.find(id);
    if (!staged) throw unknown(id);
    return staged;
  }

  /** The upload `id`, or null when none waits under it (or `id` is no id this class makes). */
  async find(id: string): Promise<StagedFile | null> {
    if (!ID.test(id)) return null;
    const dir = join(this.root, UPLOADS_DIR, id);
    const folder = await lstatOrNull(join(this.root, UPLOADS_DIR));
    const own = await lstatOrNull(dir);
    if (!folder?.isDirectory() || !own?.isDirectory()) return null;
    const kindOf = fileKinds(this.#config.files);
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const stream = kindOf(entry.name);
      if (!entry.isFile() || stream === null) continue;
      const file = await lstat(join(dir, entry.name));
      return { id, name: entry.name, stream, size: file.size, stagedAt: own.mtime, dir };
    }
    return null;
  }

  /** Every upload waiting, oldest first. */
  async list(): Promise<StagedFile[]> {
    const folder = await lstatOrNull(join(this.root, UPLOADS_DIR));
    if (!folder?.isDirectory()) return [];
    const found: StagedFile[] = [];
    for (const id of await readdir(join(this.root, UPLOADS_DIR))) {
      const staged = await this.find(id);
      if (staged) found.push(staged);
    }
    return found.sort((a, b) => a.stagedAt.getTime() - b.stagedAt.getTime());
  }

  /**
   * The source's configuration with the upload's folder as its drop folder: a dry run of it reads
   * this one file as the source would, against the source's own state (same id).
   */
  previewConfig(file: StagedFile): CsvSourceConfig {
    return { ...this.#config, dropDir: file.dir, stableSeconds: 0 };
  }

  /**
   * Moves the upload into the drop folder's root, under its name or the next free one
   * (`invoices~2.csv`) when a file of that name waits there or is being processed; never over
   * anything. Its mtime is set `stableSeconds` back first: it was written whole here, and the pass
   * queued next must not take it for a file still being written.
   *
   * @throws CsvSourceError `CSV_UPLOAD_UNKNOWN`, `CSV_UPLOAD_NAME_TAKEN`, `CSV_DROP_DIR_MISSING`
   */
  async take(id: string): Promise<{ name: string }> {
    const file = await this.find(id);
    if (!file) throw unknown(id);
    await this.#checkRoot();
    const from = join(file.dir, file.name);
    const settled = new Date(this.#clock.now().getTime() - (this.#config.stableSeconds + 1) * 1000);
    await lutimes(from, settled, settled);
    const kindOf = fileKinds(this.#config.files);
    for (let n = 1; n < 1000; n++) {
      const name = numberedName(file.name, n);
      if (kindOf(name) !== file.stream) break;
      if ((await lstatOrNull(join(this.root, PROCESSING_DIR, name))) !== null) continue;
      try {
        await moveNoClobber(from, join(this.root, name));
      } catch (error) {
        if (errnoOf(error) === 'EEXIST') continue;
        throw error;
      }
      await rm(file.dir, { recursive: true, force: true });
      return { name };
    }
    throw new CsvSourceError(
      'CSV_UPLOAD_NAME_TAKEN',
      `a file named ${file.name} already waits in the drop folder and no numbered name is free for it: wait for the next pass, or discard this upload and upload it under another name`,
    );
  }

  /** Deletes the upload; false when none waited under `id`. */
  async discard(id: string): Promise<boolean> {
    const file = await this.find(id);
    if (!file) return false;
    await rm(file.dir, { recursive: true, force: true });
    return true;
  }

  async #checkRoot(): Promise<void> {
    const root = await stat(this.root).catch((error: unknown) => {
      if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') return null;
      throw error;
    });
    if (root?.isDirectory()) return;
    throw new CsvSourceError(
      'CSV_DROP_DIR_MISSING',
      `the drop folder ${this.root} does not exist: create it (mkdir -p), or fix the source's dropDir`,
    );
  }
}

const tooLarge = (name: string, maxBytes: number) =>
  new CsvSourceError(
    'CSV_UPLOAD_TOO_LARGE',
    `${name} is larger than ${megabytes(maxBytes)}, the most the dashboard takes (dashboard.uploadMaxMb): split it, or copy it into the drop folder`,
  );

const unknown = (id: string) =>
  new CsvSourceError('CSV_UPLOAD_UNKNOWN', `no upload waits under ${id}: synced or discarded already`);

/** `10 MB`, `1.5 MB`, `512 KB`. */
export function megabytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}
