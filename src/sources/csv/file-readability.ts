import type { Stream } from '../../domain/records.js';
import { type HeaderOptions, type HeaderResolution, resolveHeader } from './columns.js';
import { CsvParseFailure, readCsvRows } from './csv-rows.js';
import type { DropFolder } from './drop-folder.js';
import type { FileInspection } from './file-inspection.js';

/** What `readability` needs of the source. */
export interface ReadabilityScope {
  folder: DropFolder;
  /** A dry run reads the file in place: it spools nothing, so nothing is checked in `.processing/`. */
  dryRun: boolean;
  config: HeaderOptions;
}

/**
 * Whether a claimed file can be read, before any row is used: nothing planted where its report is
 * spooled, UTF-8, a header that fits its kind. Not readable: the reason, for `rejected/`.
 */
export async function readability(
  scope: ReadabilityScope,
  file: { name: string; path: string; stream: Stream },
  inspection: FileInspection,
): Promise<HeaderResolution> {
  const planted = scope.dryRun ? [] : await scope.folder.clearSpools(file.name);
  if (planted.length > 0) return { ok: false, reason: plantedSpoolReason(planted) };
  if (inspection.invalidUtf8) {
    const { offset, line } = inspection.invalidUtf8;
    return {
      ok: false,
      reason: `not valid UTF-8: the first invalid byte is at offset ${offset} (line ${line}); save the file as UTF-8`,
    };
  }
  const { mapping, strictColumns } = scope.config;
  return readHeader(file.path, file.stream, { mapping, strictColumns });
}

/** Why a file is rejected when entries someone planted sit where its report is spooled. */
const plantedSpoolReason = (planted: readonly string[]): string =>
  `${planted.join(', ')} stands where the source spools this file's report, and the source never ` +
  'makes such an entry: someone who can write the drop folder put it there to have it written ' +
  'through. The file was not read; remove the entry, check who can write the drop folder, and drop ' +
  'the file again';

/** Reads and matches the header row alone; the unit reads the file again from the start. */
async function readHeader(path: string, stream: Stream, options: HeaderOptions): Promise<HeaderResolution> {
  try {
    for await (const rows of readCsvRows(path, { headerOnly: true })) {
      const first = rows[0];
      if (first !== undefined) return resolveHeader(stream, first.fields, options);
    }
  } catch (error) {
    if (!(error instanceof CsvParseFailure)) throw error;
    return { ok: false, reason: `the header row cannot be read: ${error.message}` };
  }
  return { ok: false, reason: 'the file is empty: a header row is required' };
}
