import { Command } from 'commander';
import {
  DRIFT_CATEGORIES,
  type DriftItem,
  describeDrift,
  type ReconcileEstimate,
  type ReconcileOutcome,
  reconcileSources,
} from '../app/reconcile.js';
import { checkAccess, openSyncRuntime } from '../app/runtime.js';
import { requireSources } from '../config/load.js';
import { errorCodeOf, messageOf } from '../domain/errors.js';
import { repairInWords } from '../domain/repair-words.js';
import { loadCliConfig } from './cli-config.js';
import { CliError, EXIT_OK, EXIT_ROWS_FAILED } from './errors.js';
import { ProgressLine } from './progress.js';

interface ReconcileFlags {
  source?: string;
  repair?: boolean;
  json?: boolean;
}

/** Drifted records named per source in the text report (the JSON line and the state DB have them all). */
const LISTED = 50;

/** `reconcile [--source ID] [--repair] [--json]`: the service compared with the record map (docs/reconcile.md). */
export function reconcileCommand(): Command {
  return new Command('reconcile')
    .description(
      'compare what the service holds for each source (or one) with what was synced; --repair fixes what the API allows',
    )
    .option('--source <id>', 'only this source')
    .option(
      '--repair',
      're-create the missing, adopt the orphans a row claims, re-send what differs; record the rest as failures',
    )
    .option('--json', 'print one JSON object as the last stdout line')
    .addHelpText(
      'after',
      '\nExit codes: 0 no drift; 2 drift found (after --repair: drift that remains; records held by the service,' +
        ' such as read-only ones, are named but no longer count once recorded as failures); 1 it could not run.',
    )
    .action(async (flags: ReconcileFlags, command: Command) => {
      const started = Date.now();
      let written = false;
      try {
        const outcomes = await reconcile(flags, command);
        const drift = outcomes.reduce((n, o) => n + o.drift, 0);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(jsonOf(outcomes, Date.now() - started))}\n`);
          written = true;
        }
        process.exitCode = drift > 0 ? EXIT_ROWS_FAILED : EXIT_OK;
      } catch (error) {
        if (flags.json && !written)
          process.stdout.write(
            `${JSON.stringify({ sources: [], drift: 0, requests: 0, durationMs: Date.now() - started, error: { code: errorCodeOf(error) ?? 'ERROR', message: messageOf(error) } })}\n`,
          );
        throw error;
      }
    });
}

async function reconcile(flags: ReconcileFlags, command: Command): Promise<ReconcileOutcome[]> {
  const loaded = loadCliConfig(command);
  const sources = requireSources(loaded).filter((s) => !flags.source || s.id === flags.source);
  if (sources.length === 0) throw new CliError(`no source "${flags.source}" in the configuration`);
  const out = flags.json ? process.stderr : process.stdout;
  // An API that does not answer is retried (20 s and more): a terminal says so meanwhile.
  const progress = new ProgressLine();
  const runtime = await openSyncRuntime(loaded, undefined, { onRetry: progress.onRetry }).catch(
    (error: unknown) => {
      progress.finish();
      throw error;
    },
  );
  try {
    await checkAccess(runtime, sources);
    const outcomes = await reconcileSources(
      runtime,
      sources.map((s) => s.id),
      {
        repair: flags.repair ?? false,
        trigger: 'cli',
        onEstimate: (estimate) => out.write(estimateLine(estimate)),
      },
    );
    progress.finish();
    for (const outcome of outcomes) out.write(textReport(outcome));
    return outcomes;
  } finally {
    progress.finish();
    await runtime.close();
  }
}

function estimateLine(e: ReconcileEstimate): string {
  const { account, invoice, creditNote } = e.records;
  return `${e.sourceId}: reading what the service holds: about ${e.listRequests} list request(s) of 100 records (${account} accounts, ${invoice} invoices, ${creditNote} credit notes in the record map)\n`;
}

const CATEGORY_WORDS: Record<string, string> = {
  missing: 'missing on the service',
  unresolved: 'API id no longer resolves',
  orphan: 'orphans of this connection',
  readOnly: 'read-only or linked elsewhere',
  changed: 'changed on the service',
};

/** The report of one source: counts per category, then each record left (or found, without --repair). */
export function textReport(o: ReconcileOutcome): string {
  const lines: string[] = [];
  const found = DRIFT_CATEGORIES.map(
    (c) => [c, Object.values(o.counts[c]).reduce((a, b) => a + b, 0)] as const,
  )
    .filter(([, n]) => n > 0)
    .map(([c, n]) => `${n} ${CATEGORY_WORDS[c]}`);
  lines.push(`${o.sourceId}: ${found.length === 0 ? 'no drift' : found.join(', ')}`);
  if (o.repaired) {
    const done = Object.entries(o.repairs)
      .filter(([, n]) => n > 0)
      .map(([action, n]) => repairInWords(action, Number(n)));
    if (done.length > 0) lines.push(`  repair: ${done.join(', ')}`);
    // What was found and is no longer drifted, each named with what was done, then what is left.
    const left = new Set(o.remaining.map((i) => `${i.kind}\u0000${i.sourceKey}`));
    const fixed = o.items.filter((i) => !left.has(`${i.kind}\u0000${i.sourceKey}`));
    for (const item of fixed.slice(0, LISTED)) lines.push(`  fixed: ${fixedLine(item)}`);
    if (fixed.length > LISTED)
      lines.push(`  ... and ${fixed.length - LISTED} more fixed (--json lists them all)`);
  }
  const shown = o.repaired ? o.remaining : o.items;
  for (const item of shown.slice(0, LISTED)) lines.push(`  ${itemLine(item)}`);
  if (shown.length > LISTED) lines.push(`  ... and ${shown.length - LISTED} more (--json lists them all)`);
  lines.push(
    `  ${o.drift === 0 ? 'no drift left' : `${o.drift} record(s) drifted`}; ${o.requests} API request(s) (${o.listRequests} list pages)`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * What `--repair` did to a record, said from the service's side: `changed invoice INV-8 (…): set
 * the service's paidAmount back to 100.00 (it held 40.00), as the source says`.
 */
function fixedLine(item: DriftItem): string {
  const what = describeDrift(item);
  if (item.repairedBy === 'unlinked')
    return `${what}: its source unlinked on the service (reconcile.deleteOrphans); the account stays, no longer claimed by this connection`;
  switch (item.category) {
    case 'changed': {
      const set = (item.fields ?? [])
        .filter((f) => !f.frozen)
        .map((f) => `set the service's ${f.field} back to ${show(f.expected)} (it held ${show(f.actual)})`);
      return `${what}: ${set.join(', ')}, as the source says`;
    }
    case 'missing':
      return `${what}: re-created on the service from its last synced version, as the source says`;
    case 'unresolved':
      return `${what}: the service's record ${item.foundId ?? ''} taken as its own again and set to what the source says`;
    case 'orphan':
      return `${what}: adopted by the row that claims it, and set to what the source says`;
    default:
      return itemLine(item);
  }
}

function itemLine(item: DriftItem): string {
  const fields = (item.fields ?? [])
    .map(
      (f) =>
        `the service holds ${f.field} ${show(f.actual)}, the source says ${show(f.expected)}${f.frozen ? ' (frozen at creation)' : ''}`,
    )
    .join('; ');
  const parts = [describeDrift(item), fields, item.reason].filter(Boolean).join(': ');
  return item.acknowledged ? `${parts} [held: recorded as a failure]` : parts;
}

function show(value: unknown): string {
  if (value && typeof value === 'object' && 'year' in value) {
    const d = value as { year: number; month: number; day: number };
    return `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
  }
  // An amount reads as one: 100.00, not "100.00".
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return value;
  return JSON.stringify(value ?? null);
}

function jsonOf(outcomes: readonly ReconcileOutcome[], durationMs: number) {
  return {
    sources: outcomes.map((o) => ({
      sourceId: o.sourceId,
      reconciliationId: o.id,
      repaired: o.repaired,
      drift: o.drift,
      counts: o.counts,
      items: o.items,
      remaining: o.remaining,
      repairs: o.repairs,
      estimate: o.estimate,
      listRequests: o.listRequests,
      requests: o.requests,
    })),
    drift: outcomes.reduce((n, o) => n + o.drift, 0),
    requests: outcomes.reduce((n, o) => n + o.requests, 0),
    durationMs,
  };
}
