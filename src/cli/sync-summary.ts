import { STREAM_ORDER, type Stream, streamNoun } from '../domain/records.js';
import { printable } from '../logging/printable-text.js';
import { PLAIN, type TerminalStyle } from '../logging/terminal-style.js';
import type { KindCounts } from '../sync/outcome.js';
import type { SourceSummary } from '../sync/run-sync.js';

/** The contract's `--json` summary (the last stdout line). */
export interface JsonSummary {
  accounts: KindCounts;
  invoices: KindCounts;
  creditNotes: KindCounts;
  apiRequests: number;
  rateLimited: number;
  durationMs: number;
  /**
   * Present when a CSV file in snapshot mode lacked records (docs/snapshots.md): per file, what was
   * done with them (`applied`, `held` above `maxDeleteRatio`, `reported`, `incomplete`).
   */
  snapshots?: JsonSnapshot[];
  /**
   * Present when a source left files for a later pass because they were not complete yet (modified
   * less than its `stableSeconds` ago): per source, their names.
   */
  waiting?: Array<{ sourceId: string; files: string[]; stableSeconds: number }>;
  /**
   * Present when a unit said something of itself as a whole (a file's unknown columns, a file
   * changed after it was claimed and put back to be read again): per unit, as the text report says it.
   */
  warnings?: Array<{ sourceId: string; unit: string; warning: string }>;
  /**
   * Present when a user cancelled a pass (the dashboard's Cancel): per source, who. The pass stopped
   * before a batch; what it had done is in the counts, the rest waits for the next pass.
   */
  cancelled?: Array<{ sourceId: string; by: string }>;
  /** Files that could not be read at all (their format, a required column missing): moved to rejected/. */
  rejectedFiles: Array<{ sourceId: string; file: string; reason: string }>;
  /** Files of a drop folder whose names match no kind (`files:`): left where they are. */
  ignoredFiles: string[];
  /** Rows that were no records and no failures (a report's totals and footers, rows of another kind). */
  skippedRows: number;
}

export interface JsonSnapshot {
  sourceId: string;
  unit: string;
  stream: string;
  action: string;
  /** Records of the kind still linked when the file was read; `absent` of them it lacked. */
  linked: number;
  absent: number;
  applied: number;
  failed: number;
  /** The first absent source ids (the run's log and the file's report say the same). */
  sample: string[];
}

export function jsonSummary(
  summaries: readonly SourceSummary[],
  api: { requests: number; rateLimited: number },
  durationMs: number,
): JsonSummary {
  const total = (key: Stream): KindCounts => {
    const sum: KindCounts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
    for (const s of summaries)
      for (const k of Object.keys(sum) as Array<keyof KindCounts>) sum[k] += s.counts[key][k];
    return sum;
  };
  const snapshots = summaries.flatMap((s) =>
    (s.snapshots ?? []).map(({ unit, stream, action, linked, absent, applied, failed, sample }) => ({
      sourceId: s.sourceId,
      unit,
      stream,
      action,
      linked,
      absent,
      applied,
      failed,
      sample,
    })),
  );
  const waiting = summaries.flatMap((s) =>
    s.waiting
      ? [{ sourceId: s.sourceId, files: [...s.waiting.files], stableSeconds: s.waiting.stableSeconds }]
      : [],
  );
  const warnings = summaries.flatMap((s) => s.warnings.map((w) => ({ sourceId: s.sourceId, ...w })));
  const cancelled = summaries.flatMap((s) =>
    s.cancelled === undefined ? [] : [{ sourceId: s.sourceId, by: s.cancelled }],
  );
  const rejectedFiles = summaries.flatMap((s) =>
    s.abandoned.map((a) => ({ sourceId: s.sourceId, file: a.unit, reason: a.reason })),
  );
  return {
    accounts: total('accounts'),
    invoices: total('invoices'),
    creditNotes: total('creditNotes'),
    apiRequests: api.requests,
    rateLimited: api.rateLimited,
    durationMs,
    ...(snapshots.length > 0 ? { snapshots } : {}),
    ...(waiting.length > 0 ? { waiting } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(cancelled.length > 0 ? { cancelled } : {}),
    rejectedFiles,
    ignoredFiles: summaries.flatMap((s) => s.ignored ?? []),
    skippedRows: summaries.reduce((n, s) => n + (s.skippedRows ?? 0), 0),
  };
}

export const hasFailures = (summaries: readonly SourceSummary[]) =>
  summaries.some((s) => s.abandoned.length > 0 || STREAM_ORDER.some((k) => s.counts[k].failed > 0));

/**
 * A plain-text report: counts per kind, then every failed row (file, line, column, reason). File
 * names, reasons and keys come from the data: each line has its control characters escaped, so a
 * name holding a line break or an ESC sequence prints as one visible line.
 */
export function textSummary(
  summaries: readonly SourceSummary[],
  json: JsonSummary,
  dryRun: boolean,
  /** Colours the failed counts above 0 (a terminal's); default none. */
  style: TerminalStyle = PLAIN,
): string {
  const lines: string[] = [];
  const verb = dryRun ? 'would be ' : '';
  // Counts only: no data in these lines, so their colours need no escaping.
  const counts = STREAM_ORDER.map((key) => {
    const c = json[key];
    const failed = c.failed > 0 ? style.tone('error', `failed ${c.failed}`) : `failed ${c.failed}`;
    return `${streamNoun(key).padEnd(13)} ${verb}created ${c.created}, ${verb}updated ${c.updated}, unchanged ${c.unchanged}, ${failed}`;
  });
  lines.push(
    `API requests ${json.apiRequests} (429 received: ${json.rateLimited}) in ${(json.durationMs / 1000).toFixed(1)} s`,
  );
  for (const c of json.cancelled ?? [])
    lines.push(
      `${c.sourceId}: cancelled by ${c.by} before a batch: what it had done is counted above, the rest waits for the next pass`,
    );
  lines.push(...skippedFileLines(summaries));
  if (json.skippedRows > 0)
    lines.push(
      `${json.skippedRows} ${json.skippedRows === 1 ? 'row' : 'rows'} skipped (totals, footers, rows of another kind, as the source's rows or skip settings say)`,
    );
  for (const s of summaries)
    if ((s.ignored ?? []).length > 0)
      lines.push(
        `${s.sourceId}: left in the drop folder, their names match no kind (files:): ${(s.ignored ?? []).map(printable).join(', ')}`,
      );
  for (const s of summaries) {
    if (!s.waiting) continue;
    const { files, stableSeconds } = s.waiting;
    const noun = files.length === 1 ? '1 file' : `${files.length} files`;
    lines.push(
      `${s.sourceId}: ${noun} left for the next pass, still being written (modified less than stableSeconds = ${stableSeconds} s ago): ${files.join(', ')}`,
    );
  }
  for (const s of summaries) {
    for (const preview of s.previews ?? []) {
      lines.push('', `${s.sourceId}: ${printable(preview.unit)} reads as (its first rows):`);
      for (const row of preview.rows)
        lines.push(`  ${row.line === null ? '' : `line ${row.line}: `}${printable(row.text)}`);
    }
    if (dryRun && s.plan.length > 0) {
      lines.push('', `Plan for ${s.sourceId} (no write was sent):`);
      for (const op of s.plan)
        lines.push(
          `  ${op.operation.padEnd(13)} ${op.kind.padEnd(10)} ${op.sourceKey}${op.detail ? `  ${op.detail}` : ''}`,
        );
    }
    for (const a of s.abandoned) lines.push(`  ${s.sourceId}: ${a.unit} could not be read: ${a.reason}`);
    for (const w of s.warnings) lines.push(`  ${s.sourceId}: ${w.unit}: warning: ${w.warning}`);
    if (s.failures.length > 0) {
      lines.push('', `Failed rows of ${s.sourceId} (also in \`receivables-sync failures\`):`);
      for (const f of s.failures) {
        const where = [
          f.origin.file ?? f.unit,
          f.origin.line ? `line ${f.origin.line}` : null,
          f.column ?? null,
        ]
          .filter(Boolean)
          .join(', ');
        lines.push(`  ${where}: ${f.sourceKey}: ${f.reason}`);
      }
      const total = Object.values(s.counts).reduce((n, c) => n + c.failed, 0);
      if (total > s.failures.length)
        lines.push(
          `  … and ${total - s.failures.length} more (\`receivables-sync failures --source ${s.sourceId}\` lists them all)`,
        );
    }
  }
  return `${[...counts, ...lines.map(printable)].join('\n')}\n`;
}

const two = (n: number) => String(n).padStart(2, '0');

/** `2026-11-24 10:02`, local time. */
export const minuteText = (t: Date): string =>
  `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${two(t.getHours())}:${two(t.getMinutes())}`;

/**
 * The files skipped because their content was synced before (their rows are counted unchanged),
 * one line per original: `3 files skipped: same content as accounts.csv (synced 2026-11-24 10:02)`,
 * then the skipped files' names when they are not all the original's.
 */
export function skippedFileLines(summaries: readonly SourceSummary[]): string[] {
  const byOriginal = new Map<string, { name: string; syncedAt: Date; files: string[] }>();
  for (const s of summaries)
    for (const { unit, duplicateOf } of s.skipped) {
      const key = `${duplicateOf.name}\u0000${duplicateOf.syncedAt.getTime()}`;
      const group = byOriginal.get(key) ?? { ...duplicateOf, files: [] };
      group.files.push(unit);
      byOriginal.set(key, group);
    }
  return [...byOriginal.values()].map(({ name, syncedAt, files }) => {
    const which = files.every((f) => f === name) ? '' : `: ${files.join(', ')}`;
    const noun = files.length === 1 ? 'file' : 'files';
    return printable(
      `${files.length} ${noun} skipped: same content as ${name} (synced ${minuteText(syncedAt)})${which}`,
    );
  });
}
