import type { RecordKind } from '../../domain/records.js';
import { STREAM_OF, STREAM_ORDER, streamNoun } from '../../domain/records.js';
import type { FailureHistoryRow } from '../../state/failure-queries.js';
import type { RunLogLine } from '../../state/run-logs.js';
import type { RunRecordRow } from '../../state/run-records.js';
import type { RunView } from '../status.js';
import { failureTable, recordHref } from './failure-list.js';
import { badge, duration, KIND_LABEL, runBadge, utc, when } from './format.js';
import { html, type SafeHtml } from './html.js';
import { type PageOf, pager } from './pager.js';
import { rejectedFilesSection } from './rejected-files.js';

export type OutcomeFilter = 'created' | 'updated' | 'failed' | undefined;

export interface RunPageProps {
  run: RunView;
  now: Date;
  records: readonly RunRecordRow[];
  recordsPage: PageOf;
  outcome: OutcomeFilter;
  failures: readonly FailureHistoryRow[];
  logs: readonly RunLogLine[];
  /** The bull-board page of the job that ran it, when the queue still has it. */
  jobHref: string | null;
  /**
   * For a run that has no counts of its own (killed before it wrote them, or still running): the
   * records it touched by kind and outcome, shown instead.
   */
  touched?: ReadonlyArray<{ kind: RecordKind; outcome: 'created' | 'updated' | 'failed'; n: number }>;
}

/** How recent a finished run's missing log is "not written yet" rather than pruned. */
const LOG_LAG_MS = 2 * 60_000;

const STREAMS = STREAM_ORDER.map((stream) => [stream, streamNoun(stream)] as const);

/** `/runs/:id`: how a run went, the records it touched, its failures and its log. */
export function runPage(p: RunPageProps): SafeHtml {
  const { run } = p;
  const counts = p.touched ? countsFromTouched(p.touched) : run.counts;
  const base = `/runs/${run.id}`;
  const link = (page: number, outcome: OutcomeFilter) =>
    `${base}?${new URLSearchParams({ ...(outcome ? { outcome } : {}), ...(page > 1 ? { page: String(page) } : {}) }).toString()}`;
  return html`<p class="crumbs"><a href="/">Sync</a> › <a href="/sources/${encodeURIComponent(run.sourceId)}">${run.sourceId}</a> › run</p>
<h1 data-run-page="${run.id}">Run #${run.id} <span data-field="run-status">${runBadge(run)}</span></h1>
<section id="run-facts" class="card">
  <dl class="facts">
    <dt>Source</dt><dd><a href="/sources/${encodeURIComponent(run.sourceId)}">${run.sourceId}</a></dd>
    <dt>Trigger</dt><dd data-field="trigger">${run.trigger}${run.dryRun ? ' (dry run)' : ''}</dd>
    <dt>Started</dt><dd>${utc(run.startedAt)} <span class="muted">(${when(run.startedAt, p.now)})</span></dd>
    <dt>Finished</dt><dd>${run.finishedAt ? utc(run.finishedAt) : html`<span class="muted">${run.stale ? 'never: its process is gone' : 'not yet'}</span>`}</dd>
    <dt>Took</dt><dd data-field="took">${duration(run.durationMs)}${run.finishedAt ? '' : ' so far'}</dd>
    ${run.error ? html`<dt>Error</dt><dd class="bad" data-field="error">${run.error}</dd>` : ''}
    ${p.jobHref ? html`<dt>Job</dt><dd><a href="${p.jobHref}" data-field="job">in bull-board</a></dd>` : ''}
  </dl>
  ${p.touched ? html`<p class="muted small" data-field="counts-from-records">${run.finishedAt === null ? 'So far' : 'Its process ended before it wrote its counts'}: counted from the records it touched (unchanged records are not kept).</p>` : ''}
  <table class="compact counts" id="run-counts"><thead><tr><th></th><th class="num">created</th><th class="num">updated</th><th class="num">unchanged</th><th class="num">failed</th></tr></thead>
  <tbody>${STREAMS.map(
    ([key, label]) =>
      html`<tr data-kind="${key}"><td>${label}</td><td class="num" data-field="created">${counts[key].created}</td><td class="num" data-field="updated">${counts[key].updated}</td><td class="num">${counts[key].unchanged}</td><td class="num${counts[key].failed > 0 ? ' bad' : ''}" data-field="failed">${counts[key].failed}</td></tr>`,
  )}</tbody></table>
</section>
${rejectedFilesSection(run)}
<section id="run-records">
  <h2>Records it touched <span class="count">${p.recordsPage.total}</span></h2>
  <p class="filters small">${(['all', 'created', 'updated', 'failed'] as const).map((o) => {
    const value = o === 'all' ? undefined : o;
    return value === p.outcome ? html`<b>${o}</b> ` : html`<a href="${link(1, value)}">${o}</a> `;
  })}<span class="muted">· unchanged records are not listed</span></p>
  ${
    p.records.length === 0
      ? html`<p class="muted">None${p.outcome ? ` ${p.outcome}` : ''}.</p>`
      : html`<table id="run-records-table"><thead><tr><th>kind</th><th>source id</th><th>outcome</th><th>API id</th><th>at</th></tr></thead>
<tbody>${p.records.map(
          (r) =>
            html`<tr data-key="${r.sourceKey}" data-outcome="${r.outcome}"><td>${KIND_LABEL[r.kind] ?? r.kind}</td><td><a href="${recordHref(run.sourceId, r.sourceKey)}"><code>${r.sourceKey}</code></a></td><td>${badge(r.outcome === 'failed' ? 'failed' : 'done', r.outcome)}</td><td><code data-field="api-id">${r.apiId ?? ''}</code></td><td>${utc(r.at.toISOString())}</td></tr>`,
        )}</tbody></table>`
  }
  ${pager(p.recordsPage, (page) => link(page, p.outcome), 'records')}
</section>
<section id="run-failures">
  <h2>Its failures <span class="count">${p.failures.length}</span></h2>
  ${
    p.failures.length === 0
      ? html`<p class="muted">None recorded by this run (a record that failed again later is listed under that later run).</p>`
      : failureTable(p.failures, { now: p.now, withState: true, id: 'run-failures-table' })
  }
</section>
<section id="run-log">
  <h2>Log <span class="count">${p.logs.length}</span></h2>
  ${
    p.logs.length === 0
      ? html`<p class="muted" data-field="no-log">${emptyLogWhy(run, p.now)}</p>`
      : html`<table class="log" id="run-log-table"><thead><tr><th>time</th><th>level</th><th>message</th><th>fields</th></tr></thead>
<tbody>${p.logs.map(
          (l) =>
            html`<tr data-level="${l.level}"><td class="muted small">${l.at.toISOString().slice(11, 23)}</td><td>${badge(levelStatus(l.level), l.level)}</td><td>${l.msg}</td><td>${l.fields ? html`<code class="small">${inlineJson(l.fields)}</code>` : ''}</td></tr>`,
        )}</tbody></table>`
  }
</section>`;
}

/** Why a run's log is empty: not written yet (lines reach the state DB within a second or two), or pruned. */
function emptyLogWhy(run: RunView, now: Date): string {
  if (run.dryRun) return 'A dry run keeps no log.';
  const end = run.finishedAt === null ? null : new Date(run.finishedAt).getTime();
  if (end === null || now.getTime() - end < LOG_LAG_MS)
    return 'No line written yet: the lines of a run reach the state DB within a second or two; reload.';
  return 'No line kept: the logs of old runs are pruned (docs/dashboard.md, "Run history in the state DB").';
}

function countsFromTouched(touched: NonNullable<RunPageProps['touched']>): RunView['counts'] {
  const counts: RunView['counts'] = {
    accounts: { created: 0, updated: 0, unchanged: 0, failed: 0 },
    invoices: { created: 0, updated: 0, unchanged: 0, failed: 0 },
    creditNotes: { created: 0, updated: 0, unchanged: 0, failed: 0 },
  };
  for (const t of touched) counts[STREAM_OF[t.kind]][t.outcome] += t.n;
  return counts;
}

const levelStatus = (level: string): string =>
  level === 'error' || level === 'fatal' ? 'failed' : level === 'warn' ? 'warn' : 'ok';

/** A line's fields on one line, cut when long. */
function inlineJson(fields: Record<string, unknown>): string {
  const text = JSON.stringify(fields);
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}
