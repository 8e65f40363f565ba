import type { KindCounts, SummaryKey } from '../sync/outcome.js';
import type { SourceSummary } from '../sync/run-sync.js';

/** The contract's `--json` summary (the last stdout line). */
export interface JsonSummary {
  accounts: KindCounts;
  invoices: KindCounts;
  creditNotes: KindCounts;
  apiRequests: number;
  rateLimited: number;
  durationMs: number;
}

const KEYS: readonly SummaryKey[] = ['accounts', 'invoices', 'creditNotes'];

export function jsonSummary(
  summaries: readonly SourceSummary[],
  api: { requests: number; rateLimited: number },
  durationMs: number,
): JsonSummary {
  const total = (key: SummaryKey): KindCounts => {
    const sum: KindCounts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
    for (const s of summaries)
      for (const k of Object.keys(sum) as Array<keyof KindCounts>) sum[k] += s.counts[key][k];
    return sum;
  };
  return {
    accounts: total('accounts'),
    invoices: total('invoices'),
    creditNotes: total('creditNotes'),
    apiRequests: api.requests,
    rateLimited: api.rateLimited,
    durationMs,
  };
}

export const hasFailures = (summaries: readonly SourceSummary[]) =>
  summaries.some((s) => s.abandoned.length > 0 || KEYS.some((k) => s.counts[k].failed > 0));

/** A plain-text report: counts per kind, then every failed row (file, line, column, reason). */
export function textSummary(summaries: readonly SourceSummary[], json: JsonSummary, dryRun: boolean): string {
  const lines: string[] = [];
  const label = { accounts: 'accounts', invoices: 'invoices', creditNotes: 'credit notes' } as const;
  const verb = dryRun ? 'would be ' : '';
  for (const key of KEYS) {
    const c = json[key];
    lines.push(
      `${label[key].padEnd(13)} ${verb}created ${c.created}, ${verb}updated ${c.updated}, unchanged ${c.unchanged}, failed ${c.failed}`,
    );
  }
  lines.push(
    `API requests ${json.apiRequests} (429 received: ${json.rateLimited}) in ${(json.durationMs / 1000).toFixed(1)} s`,
  );
  for (const s of summaries) {
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
  return `${lines.join('\n')}\n`;
}
