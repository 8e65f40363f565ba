import type { ColumnRef, ColumnSourceSetting } from '../../config/csv-format-schema.js';
import type { SourceConfig } from '../../config/schema.js';
import { STREAM_ORDER, type Stream } from '../../domain/records.js';
import type { SettingFact, SettingPiece } from '../source-description.js';
import { delimiterName, type KindFormat, kindFormat } from './file-format.js';
import { DEFAULT_FILE_PATTERNS } from './file-selection.js';

type CsvSourceConfig = Extract<SourceConfig, { type: 'csv' }>;

/**
 * What the files of one kind are, as the source's configuration says: which names it takes, how
 * they are written (defaults filled in), where each contract column comes from, and which row
 * shapes apply. `doctor` and the dashboard's source page show it, so a file that is rejected or
 * ignored can be checked against what the source expects.
 */
export interface KindSettings {
  stream: Stream;
  patterns: readonly string[];
  /** The contract's own patterns: `files` sets none for this kind. */
  defaultPatterns: boolean;
  format: KindFormat;
  /** Contract column -> where its value comes from; null when `columns` names none for this kind. */
  columns: Readonly<Record<string, ColumnSourceSetting>> | null;
  /** The `rows` keys set for this kind (`skip`, `group`, `negativeIsCreditNote`...). */
  rows: readonly string[];
}

/** Each kind's settings, accounts first. */
export function kindSettings(config: CsvSourceConfig): KindSettings[] {
  return STREAM_ORDER.map((stream) => {
    const patterns = config.files?.[stream];
    const columns = config.columns?.[stream];
    const rows = config.rows?.[stream] ?? {};
    return {
      stream,
      patterns: patterns ?? DEFAULT_FILE_PATTERNS[stream],
      defaultPatterns: patterns === undefined,
      format: kindFormat(config, stream),
      columns: columns && Object.keys(columns).length > 0 ? columns : null,
      rows: Object.entries(rows)
        .filter(([, value]) => value !== undefined && value !== null)
        .map(([key]) => key),
    };
  });
}

/** A kind's format in words: `windows-1252, ";", decimal ",", thousands ".", dates dd.MM.yyyy, header on line 1`. */
export function formatWords(format: KindFormat): string {
  const { number } = format;
  return [
    format.encoding,
    format.delimiter === 'auto' ? 'delimiter auto' : `delimiter ${delimiterName(format.delimiter)}`,
    number.minorUnits !== null
      ? `amounts in minor units (${number.minorUnits} decimals)`
      : `decimal "${number.decimalSeparator}", thousands ${number.thousandsSeparator === '' ? 'none' : `"${number.thousandsSeparator}"`}`,
    `dates ${format.dateFormat}`,
    format.headerLine === null
      ? 'no header (columns by letter: A, B, ...)'
      : `header on line ${format.headerLine}`,
  ].join(', ');
}

/**
 * Where a contract column's value comes from, in a few words: `Brutto`, `Line1 + Line2`,
 * `= "EUR"`, `sum of H, J`, `E plus 30 days`, `E plus the days in the account's AD`.
 */
export function columnSourceWords(source: ColumnSourceSetting): string {
  if (typeof source === 'string') return source;
  if (typeof source === 'number') return refWords(source);
  if (Array.isArray(source)) return source.map(refWords).join(' + ');
  if ('value' in source) return `= ${JSON.stringify(source.value)}`;
  if ('first' in source) return `first of ${source.first.map(refWords).join(', ')}`;
  if ('sum' in source) return `sum of ${source.sum.map(refWords).join(', ')}`;
  if ('plusDays' in source)
    return typeof source.plusDays === 'number'
      ? `${refWords(source.date)} plus ${source.plusDays} days`
      : `${refWords(source.date)} plus the days in the account's ${refWords(source.plusDays.accountColumn)} (accounts file)`;
  return `${refWords(source.header)} (values mapped)`;
}

/** A column as configured: a header or letter as written, a number as `column 8`. */
const refWords = (ref: ColumnRef): string => (typeof ref === 'number' ? `column ${ref}` : ref);

/** Each kind in one line, for `doctor`: its patterns, its format, whether `columns` / `rows` set it. */
export function kindLines(config: CsvSourceConfig): string[] {
  return kindSettings(config).map((kind) => {
    const configured = [
      kind.columns ? 'columns' : null,
      kind.rows.length > 0 ? `rows (${kind.rows.join(', ')})` : null,
    ]
      .filter((part) => part !== null)
      .join(', ');
    return (
      `${kind.stream} ${kind.patterns.map((p) => JSON.stringify(p)).join(' or ')}: ${formatWords(kind.format)}` +
      (configured ? `; ${configured} set` : '')
    );
  });
}

/** The dashboard's facts of the kinds: files, format (once when every kind shares it), columns, rows. */
export function kindFacts(config: CsvSourceConfig): SettingFact[] {
  const kinds = kindSettings(config);
  const line = (stream: Stream, pieces: readonly SettingPiece[], last: boolean): SettingPiece[] => [
    { code: stream },
    { text: ': ' },
    ...pieces,
    ...(last ? [] : [{ text: ' · ' }]),
  ];
  const facts: SettingFact[] = [
    {
      label: 'Files',
      value: kinds.flatMap((kind, i) =>
        line(
          kind.stream,
          [
            ...kind.patterns.flatMap((p, j): SettingPiece[] => [
              ...(j > 0 ? [{ text: ' or ' }] : []),
              { code: p },
            ]),
            ...(kind.defaultPatterns ? [{ text: ' ' }, { note: '(default)' }] : []),
          ],
          i === kinds.length - 1,
        ),
      ),
    },
  ];
  const formats = kinds.map((kind) => formatWords(kind.format));
  facts.push({
    label: 'Format',
    value: formats.every((f) => f === formats[0])
      ? [{ text: formats[0] ?? '' }, { text: ' ' }, { note: '(every kind)' }]
      : kinds.flatMap((kind, i) => line(kind.stream, [{ text: formats[i] ?? '' }], i === kinds.length - 1)),
  });
  const withColumns = kinds.filter((kind) => kind.columns !== null);
  if (withColumns.length > 0)
    facts.push({
      label: 'Columns',
      value: withColumns.map(
        (kind): SettingPiece => ({
          fold: {
            summary: [{ code: kind.stream }, { text: ` ${Object.keys(kind.columns ?? {}).length} columns` }],
            body: Object.entries(kind.columns ?? {})
              .map(([column, from]) => `${column} <- ${columnSourceWords(from)}`)
              .join('\n'),
          },
        }),
      ),
    });
  const withRows = kinds.filter((kind) => kind.rows.length > 0);
  if (withRows.length > 0)
    facts.push({
      label: 'Rows',
      value: withRows.flatMap((kind, i) =>
        line(kind.stream, [{ text: kind.rows.join(', ') }], i === withRows.length - 1),
      ),
    });
  return facts;
}
