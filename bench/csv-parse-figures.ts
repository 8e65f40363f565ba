/**
 * What bench:csv prints (bench/csv-parse.ts): each measurement's record, the goals, and each
 * case's lines and part of the JSON line, the best of its runs.
 */
import type { SampleCheck } from './german-invoices.js';

export const GOAL_RATIO = 0.7;
export const GOAL_RSS_MB = 200;
export const GOAL_GERMAN_RATIO = 0.6;
export const GOAL_GERMAN_RSS_MB = 250;

export type Mode = 'bare' | 'columns' | 'source' | 'bare-german' | 'source-german';
export type Case = 'contract' | 'german';
export const MODES_OF: Readonly<Record<Case, readonly Mode[]>> = {
  contract: ['bare', 'columns', 'source'],
  german: ['bare-german', 'source-german'],
};

export interface Measurement {
  mode: Mode;
  rows: number;
  ms: number;
  /** CPU time of the process (all its threads) meanwhile: less swayed by a busy machine than `ms`. */
  cpuMs: number;
  rowsPerSecond: number;
  maxRssMB: number;
  /** Source modes: the peak RSS once its modules were loaded, before the first row was read. */
  loadedRssMB?: number;
  /** `source-german`: rows the source refused (none expected). */
  rejected?: number;
  /** `source-german`: records of the first batch compared with the generated values, and those that differ. */
  sample?: SampleCheck;
}

const fmt = (n: number): string => n.toLocaleString('en-US');
const line = (m: Measurement): string =>
  `${fmt(m.rowsPerSecond)} rows/s, ${fmt(m.ms)} ms (CPU ${fmt(m.cpuMs)} ms), peak RSS ${m.maxRssMB} MB` +
  (m.loadedRssMB === undefined ? '' : ` (${m.loadedRssMB} MB once its modules were loaded)`);
const rounded = (n: number): number => Math.round(n * 100) / 100;
const heapLine = (v8DefaultHeap: boolean): string =>
  v8DefaultHeap
    ? "  the source with V8's own heap settings (--v8-default-heap)"
    : "  the source with the CLI's heap settings (src/cli/heap-growth.ts), as sync --once runs it";

/** A case's figures printed, and its part of the JSON line with whether its goals are met. */
export interface CaseReport {
  json: Record<string, unknown>;
  ok: boolean;
}

/** What every case's report is given: its file, the number of runs, each mode's best, the heap settings. */
export interface CaseRuns {
  file: string;
  repeat: number;
  best: (mode: Mode) => Measurement;
  v8DefaultHeap: boolean;
}

export function reportContract({ file, repeat, best, v8DefaultHeap }: CaseRuns): CaseReport {
  const bare = best('bare');
  const columns = best('columns');
  const source = best('source');
  const ratioOf = (to: Measurement): number => rounded(source.rowsPerSecond / to.rowsPerSecond);
  const ratio = ratioOf(bare);
  const cpuRatio = rounded(bare.cpuMs / source.cpuMs);
  console.log(`file: ${file} (${fmt(bare.rows)} rows), best of ${repeat} runs each`);
  console.log(`bare csv-parse, the source's mode (array rows, its options): ${line(bare)}`);
  console.log(`csv source (claim + checksum + parse + validate + archive):  ${line(source)}`);
  console.log(heapLine(v8DefaultHeap));
  console.log(`ratio source / same-mode csv-parse: ${ratio} (goal >= ${GOAL_RATIO})`);
  console.log(`the same by CPU time (less swayed by other processes on the machine): ${cpuRatio}`);
  console.log(`csv source peak RSS: ${source.maxRssMB} MB (goal <= ${GOAL_RSS_MB} MB)`);
  console.log(
    `old baseline, csv-parse with columns: true (slower than the source's mode): ${line(columns)}; ` +
      `ratio source / it ${ratioOf(columns)} (for continuity only: not the goal)`,
  );
  const ok =
    ratio >= GOAL_RATIO &&
    source.maxRssMB <= GOAL_RSS_MB &&
    source.rows === bare.rows &&
    columns.rows === bare.rows;
  return {
    json: {
      file,
      rows: bare.rows,
      bare,
      source,
      ratio,
      cpuRatio,
      columnsTrue: { ...columns, ratio: ratioOf(columns) },
    },
    ok,
  };
}

export function reportGerman({ file, repeat, best, v8DefaultHeap }: CaseRuns): CaseReport {
  const bare = best('bare-german');
  const source = best('source-german');
  const ratio = rounded(source.rowsPerSecond / bare.rowsPerSecond);
  const cpuRatio = rounded(bare.cpuMs / source.cpuMs);
  const sample = source.sample ?? { compared: 0, mismatches: ['no sample taken'] };
  console.log(
    `German ERP file: ${file} (${fmt(bare.rows)} rows; Windows-1252, ";", CRLF, 1.440,00, dd.MM.yyyy), best of ${repeat} runs each`,
  );
  console.log(`bare csv-parse, Windows-1252 decoded, the source's options with ";": ${line(bare)}`);
  console.log(`csv source (the same + decode, amounts and dates rewritten):  ${line(source)}`);
  console.log(heapLine(v8DefaultHeap));
  console.log(`ratio source / same-options csv-parse: ${ratio} (goal >= ${GOAL_GERMAN_RATIO})`);
  console.log(`the same by CPU time (less swayed by other processes on the machine): ${cpuRatio}`);
  console.log(`csv source peak RSS: ${source.maxRssMB} MB (goal <= ${GOAL_GERMAN_RSS_MB} MB)`);
  console.log(
    `records checked: the first ${sample.compared} as generated` +
      (sample.mismatches.length > 0 ? `: NO, ${sample.mismatches.join('; ')}` : ', all equal') +
      `; rows refused: ${source.rejected ?? 'unknown'}`,
  );
  const ok =
    ratio >= GOAL_GERMAN_RATIO &&
    source.maxRssMB <= GOAL_GERMAN_RSS_MB &&
    source.rows === bare.rows &&
    source.rejected === 0 &&
    sample.compared > 0 &&
    sample.mismatches.length === 0;
  return { json: { german: { file, rows: bare.rows, bare, source, ratio, cpuRatio, ok } }, ok };
}
