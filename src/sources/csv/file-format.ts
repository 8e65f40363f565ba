import type { CsvEncoding } from '../../config/csv-format-schema.js';
import type { Stream } from '../../domain/records.js';
import type { NumberFormat } from './amount-format.js';
import { CONTRACT_DATE_FORMAT } from './date-format.js';

/**
 * How the files of one kind are written, from `format` and `formats.<kind>` over the contract's
 * own format; `encoding: auto` and `delimiter: auto` are settled per file (`settleEncoding`,
 * `detectDelimiter`).
 */
export interface KindFormat {
  encoding: CsvEncoding;
  delimiter: Delimiter | 'auto';
  number: NumberFormat;
  dateFormat: string;
  /** The header's line; null when the file has none (`headerLine: none`: columns by letter). */
  headerLine: number | null;
}

export type Delimiter = ',' | ';' | '\t' | '|';
/** An encoding a file is read in, once `auto` is settled. */
export type FileEncoding = Exclude<CsvEncoding, 'auto'>;

interface FormatSettings {
  encoding?: CsvEncoding | undefined;
  delimiter?: Delimiter | 'auto' | undefined;
  decimalSeparator?: '.' | ',' | undefined;
  thousandsSeparator?: NumberFormat['thousandsSeparator'] | undefined;
  dateFormat?: string | undefined;
  headerLine?: number | 'none' | undefined;
}

export interface FormatConfig {
  format?: FormatSettings | undefined;
  formats?: Partial<Record<Stream, FormatSettings | undefined>> | undefined;
  rows?: Partial<Record<Stream, { minorUnits?: number | null | undefined } | undefined>> | undefined;
}

/** The format of a kind's files, defaults filled in. */
export function kindFormat(config: FormatConfig, stream: Stream): KindFormat {
  const merged = { ...config.format, ...dropUndefined(config.formats?.[stream] ?? {}) };
  return {
    encoding: merged.encoding ?? 'utf-8',
    delimiter: merged.delimiter ?? ',',
    number: {
      decimalSeparator: merged.decimalSeparator ?? '.',
      thousandsSeparator: merged.thousandsSeparator ?? '',
      minorUnits: config.rows?.[stream]?.minorUnits ?? null,
    },
    dateFormat: merged.dateFormat ?? CONTRACT_DATE_FORMAT,
    headerLine: merged.headerLine === 'none' ? null : (merged.headerLine ?? 1),
  };
}

const dropUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The byte order mark a file starts with, if any: it says the encoding, whatever is configured. */
export function bomEncoding(head: Uint8Array): FileEncoding | null {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return null;
}

/**
 * The encoding a file is read in: its BOM's, else the configured one; `auto` is UTF-8 when the
 * whole file is valid UTF-8, else Windows-1252 (the encoding of Excel's and most ERPs' "CSV" on
 * Windows in western Europe and the Americas; ISO-8859-1 text reads the same in it).
 */
export function settleEncoding(
  configured: CsvEncoding,
  bom: FileEncoding | null,
  validUtf8: boolean,
): FileEncoding {
  if (bom !== null) return bom;
  if (configured !== 'auto') return configured;
  return validUtf8 ? 'utf-8' : 'windows-1252';
}

const CANDIDATES: readonly Delimiter[] = [',', ';', '\t', '|'];

/**
 * The delimiter of a file from its header line: the candidate found most often outside quotes
 * (`,` on a tie or when none is). A header of one cell holds none.
 */
export function detectDelimiter(headerLine: string): Delimiter {
  const counts = new Map<Delimiter, number>(CANDIDATES.map((c) => [c, 0]));
  let quoted = false;
  for (const char of headerLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && counts.has(char as Delimiter))
      counts.set(char as Delimiter, counts.get(char as Delimiter)! + 1);
  }
  let best: Delimiter = ',';
  for (const candidate of CANDIDATES) if (counts.get(candidate)! > counts.get(best)!) best = candidate;
  return best;
}

/** A delimiter as a message names it. */
export const delimiterName = (delimiter: string): string =>
  delimiter === '\t' ? 'a tab ("\\t")' : `"${delimiter}"`;

/**
 * When a header read as one cell holds another candidate delimiter, the hint to set it: the file
 * is most likely separated by it.
 */
export function oneCellHint(cells: readonly string[], used: string): string | null {
  if (cells.length !== 1) return null;
  const found = CANDIDATES.filter((c) => c !== used && (cells[0] ?? '').includes(c));
  if (found.length === 0) return null;
  const likely = detectDelimiter(cells[0] ?? '');
  return `the header was read as one cell, and it holds ${delimiterName(likely)}: the file seems separated by it (set format.delimiter: ${JSON.stringify(likely)}, or auto)`;
}
