import type { SourceConfig } from '../../config/schema.js';
import type { RecordKind } from '../../domain/records.js';
import type { DropFileView } from '../../state/detail-queries.js';
import type { FailureHistoryRow } from '../../state/failure-queries.js';
import type { SourcePause } from '../../state/paused-sources.js';
import type { CursorRecord } from '../../state/status-queries.js';
import type { WaitingDropFile } from '../drop-folder-files.js';
import type { ScheduleView } from '../schedule-words.js';
import type { SourceProfile } from '../source-profile.js';
import type { RunView } from '../status.js';
import { failureState, failureTable, recordHref } from './failure-list.js';
import { badge, duration, KIND_LABEL, runBadge, utc, when } from './format.js';
import { html, type SafeHtml } from './html.js';
import { type PageOf, pager } from './pager.js';
import { type ReconciliationCardProps, reconciliationCard } from './reconciliation-view.js';
import { rejectedFilesNote } from './rejected-files.js';
import { settingFacts } from './setting-facts.js';
import { sourceActionForms } from './source-actions.js';
import { waitingFilesNote } from './waiting-files.js';

export interface SourcePageProps {
  config: SourceConfig;
  /** What its type shows: its own settings, its drop files, its cursors when it has none. */
  profile: SourceProfile;
  now: Date;
  csrfToken: string;
  /** Queue actions (retry) possible: queues in this process and the source not paused. */
  canQueue: boolean;
  /** Why queue actions are off, when they are. */
  whyNot: string;
  /** Why it is paused, by whom, since when (null: not paused). */
  pause: SourcePause | null;
  schedule: ScheduleView | null;
  running: RunView | null;
  records: Record<RecordKind, number>;
  runs: readonly RunView[];
  runsPage: PageOf;
  failures: readonly FailureHistoryRow[];
  failuresPage: PageOf;
  openByKind: Record<RecordKind, number>;
  history: readonly FailureHistoryRow[];
  cursors: readonly CursorRecord[];
  files: readonly DropFileView[];
  /** Whether the failures can be downloaded as CSV. */
  canExport: boolean;
  /** Whether bull-board is served (links to it). */
  hasQueues: boolean;
  /** The last reconciliation and its actions (docs/reconcile.md); no card without it. */
  reconcile?: ReconciliationCardProps | undefined;
  /** The files in its drop folder not taken yet (a CSV source), and how long one must stay unchanged. */
  waiting?: { files: readonly WaitingDropFile[]; more: number; stableSeconds: number } | undefined;
}

const KINDS: readonly RecordKind[] = ['account', 'invoice', 'creditNote'];

/** A paused source: why (an automatic pause names its failed runs and the last error), and Resume. */
function pauseCard(p: SourcePageProps): SafeHtml | '' {
  if (!p.pause) return '';
  const auto = p.pause.by === 'auto';
  const resume = `/actions/sources/${encodeURIComponent(p.config.id)}/resume`;
  return html`<section id="pause" class="card" data-paused-by="${p.pause.by}">
  <h2>${auto ? 'Paused automatically' : 'Paused'}</h2>
  <p><span${auto ? html` class="bad"` : ''} data-field="pause-reason">${p.pause.reason ?? 'paused'}</span>${p.pause.at ? html` · ${when(p.pause.at.toISOString(), p.now)}` : ''}</p>
  <p class="muted small">${auto ? 'Schedules, file polling and actions are stopped. Fix the cause, then Resume: the count of failed runs starts again.' : 'Schedules, file polling and actions are stopped until it is resumed.'}</p>
  <form method="post" action="${resume}" class="inline"><input type="hidden" name="_csrf" value="${p.csrfToken}"><button type="submit" name="action" value="resume" class="primary">Resume</button></form>
</section>`;
}

/** `/sources/:id`: what the source is, when it runs, what it did, what failed, and its files. */
export function sourcePage(p: SourcePageProps): SafeHtml {
  const id = p.config.id;
  const base = `/sources/${encodeURIComponent(id)}`;
  const href = (params: Record<string, number>) =>
    `${base}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
  const state = p.running ? badge('running') : p.pause ? badge('paused') : badge('active');
  return html`<p class="crumbs"><a href="/">Sync</a> › source</p>
<h1 data-source-page="${id}">${id} <span class="tag">${p.config.type}</span> <span data-field="state">${state}</span></h1>
${pauseCard(p)}
<section id="source-actions" class="card actions">${sourceActionForms({
    sourceId: id,
    csrfToken: p.csrfToken,
    actionsEnabled: p.hasQueues,
    paused: p.pause !== null,
    openFailures: p.failuresPage.total,
    runningRunId: p.running?.id,
    back: 'source',
  })}${p.running ? html` <span class="muted small" data-field="running-run">run <a href="/runs/${p.running.id}">#${p.running.id}</a> running since ${when(p.running.startedAt, p.now)}</span>` : ''}</section>
<p class="links">${p.profile.dropFiles ? html`<a href="${base}/upload" data-link="upload">Upload a file</a> · ` : ''}<a href="${recordHref(id, '')}">Search its records</a>${p.hasQueues ? html` · <a href="/queues/queue/sync">Its jobs in bull-board</a>` : ''}</p>
<section id="config" class="card">
  <h2>Configuration</h2>
  <dl class="facts">${configFacts(p)}</dl>
</section>
${p.reconcile ? reconciliationCard(p.reconcile) : ''}
<section id="source-runs">
  <h2>Runs <span class="count">${p.runsPage.total}</span></h2>
  ${runsTable(p.runs, p.now)}
  ${pager(p.runsPage, (page) => href({ page, fpage: p.failuresPage.page }), 'runs')}
</section>
<section id="open-failures">
  <h2>Open failures <span class="count" data-field="open-failures">${p.failuresPage.total}</span></h2>
  ${p.failuresPage.total === 0 ? html`<p class="muted">None: every record synced or unchanged.</p>` : openFailures(p, base)}
  ${pager(p.failuresPage, (fpage) => href({ page: p.runsPage.page, fpage }), 'failures')}
</section>
<section id="failure-history">
  <h2>Failure history</h2>
  ${
    p.history.length === 0
      ? html`<p class="muted">No failure was resolved or dismissed yet.</p>`
      : html`<p class="muted small">The latest ${p.history.length} closed: resolved by a later sync, or dismissed.</p>
<table class="failures"><thead><tr><th>kind</th><th>source id</th><th>stage</th><th>message</th><th>last failed</th><th>closed</th></tr></thead>
<tbody>${p.history.map(
          (f) =>
            html`<tr data-failure="${f.id}" data-key="${f.sourceKey}"><td>${KIND_LABEL[f.kind] ?? f.kind}</td><td><a href="${recordHref(id, f.sourceKey)}"><code>${f.sourceKey}</code></a></td><td>${f.stage}</td><td class="message">${f.message}</td><td>${when(f.lastFailedAt.toISOString(), p.now)}</td><td data-field="state">${failureState(f, p.now)}</td></tr>`,
        )}</tbody></table>`
  }
</section>
${p.waiting ? waitingSection(p.waiting, p.now) : ''}
${p.profile.dropDir === null ? '' : filesSection(p, base)}`;
}

function configFacts(p: SourcePageProps): SafeHtml {
  const c = p.config;
  const schedule = p.schedule
    ? html`<span data-field="schedule-words">${p.schedule.words}</span> <code>${p.schedule.expression}</code><br><span class="muted">next run</span> <span data-field="next-run">${p.pause ? html`none while paused` : p.schedule.next ? html`<time datetime="${p.schedule.next.toISOString()}">${utc(p.schedule.next.toISOString())}</time> <span class="muted">(${untilNext(p.schedule.next, p.now)})</span>` : 'none'}</span>`
    : html`<span class="muted" data-field="schedule-words">no schedule: manual and file triggers only</span>`;
  return html`<dt>Type</dt><dd>${c.type}</dd>
${settingFacts(p.profile.settings)}
<dt>Connection id</dt><dd><code>${c.connectionId ?? c.id}</code>${c.connectionId ? '' : html` <span class="muted small">(the source id)</span>`}</dd>
<dt>Schedule</dt><dd>${schedule}</dd>
<dt>Synced records</dt><dd>${KINDS.map((k, i) => html`${i > 0 ? ' · ' : ''}<span data-field="records-${k}">${p.records[k]}</span> ${KIND_LABEL[k]}${p.records[k] === 1 ? '' : 's'}`)}</dd>
<dt>Cursors</dt><dd>${
    p.cursors.length === 0
      ? html`<span class="muted">${p.profile.noCursors}</span>`
      : html`<table class="compact" id="cursors"><tbody>${p.cursors.map(
          (cur) =>
            html`<tr data-stream="${cur.stream}"><td><code>${cur.stream}</code></td><td><code>${JSON.stringify(cur.cursor)}</code></td><td class="muted">${when(cur.updatedAt.toISOString(), p.now)}</td></tr>`,
        )}</tbody></table>`
  }</dd>`;
}

function untilNext(next: Date, now: Date): string {
  const s = Math.max(0, Math.round((next.getTime() - now.getTime()) / 1000));
  if (s < 60) return `in ${s} s`;
  if (s < 3600) return `in ${Math.round(s / 60)} min`;
  if (s < 86_400) return `in ${Math.round(s / 3600)} h`;
  return `in ${Math.round(s / 86_400)} d`;
}

export function runsTable(runs: readonly RunView[], now: Date): SafeHtml {
  if (runs.length === 0) return html`<p class="muted">No run yet.</p>`;
  return html`<table class="runs"><thead><tr><th>#</th><th>trigger</th><th>status</th><th>started</th><th>took</th><th class="num">created</th><th class="num">updated</th><th class="num">unchanged</th><th class="num">failed</th><th>error</th></tr></thead>
<tbody>${runs.map(
    (r) =>
      html`<tr data-run="${r.id}"><td><a href="/runs/${r.id}">${r.id}</a></td><td>${r.trigger}${r.dryRun ? ' (dry run)' : ''}</td><td>${runBadge(r)}</td><td>${when(r.startedAt, now)}</td><td>${duration(r.durationMs)}</td><td class="num">${r.totals.created}</td><td class="num">${r.totals.updated}</td><td class="num">${r.totals.unchanged}</td><td class="num${r.totals.failed > 0 ? ' bad' : ''}">${r.totals.failed}</td><td class="error">${r.error ?? ''}${rejectedFilesNote(r)}${waitingFilesNote(r)}</td></tr>`,
  )}</tbody></table>`;
}

function openFailures(p: SourcePageProps, base: string): SafeHtml {
  const downloads = KINDS.filter((k) => p.openByKind[k] > 0).map(
    (k) =>
      html`<a class="button" href="${base}/failures.csv?kind=${k}" download data-download="${k}">${KIND_LABEL[k]} rows (${p.openByKind[k]}) as CSV</a> `,
  );
  return html`${p.canExport ? html`<p class="downloads">Download to fix and drop back: ${downloads}</p>` : ''}
<form method="post" action="/actions/failures/dismiss" id="failures-form">
  <input type="hidden" name="_csrf" value="${p.csrfToken}">
  <input type="hidden" name="sourceId" value="${p.config.id}">
  ${failureTable(p.failures, { now: p.now, selectable: true, id: 'open-failures-table' })}
  <div class="row selected-actions">
    <label>Reason (to dismiss) <input name="reason" maxlength="500" required placeholder="fixed by hand in Receivables"></label>
    <button type="submit">Dismiss selected</button>
    <button type="submit" formaction="/actions/failures/retry" formnovalidate${p.canQueue ? '' : html` disabled title="${p.whyNot}"`}>Retry selected</button>
  </div>
</form>`;
}

const WAITING_STATE: Readonly<Record<WaitingDropFile['state'], [string, string]>> = {
  writing: ['waiting', 'still being written'],
  ready: ['ok', 'ready: the next pass takes it'],
  ignored: ['warn', "ignored: no kind's pattern takes its name"],
};

/** The drop folder's files not taken yet: those still being written wait `stableSeconds` unchanged. */
function waitingSection(w: NonNullable<SourcePageProps['waiting']>, now: Date): SafeHtml {
  return html`<section id="waiting-files">
  <h2>Files waiting <span class="count" data-field="waiting-count">${w.files.length + w.more}</span></h2>
  ${
    w.files.length === 0
      ? html`<p class="muted">None: the drop folder holds no file that was not taken.</p>`
      : html`<p class="muted small">A file is taken once it has stayed unchanged for ${w.stableSeconds} s (<code>stableSeconds</code>): until then it is still being written.</p>
<table id="waiting-files-table"><thead><tr><th>file</th><th>kind</th><th class="num">size</th><th>modified</th><th>state</th></tr></thead>
<tbody>${w.files.map((f) => {
          const [status, label] = WAITING_STATE[f.state];
          return html`<tr data-waiting-file="${f.name}" data-state="${f.state}"><td><code>${f.name}</code></td><td>${f.kind ?? ''}</td><td class="num">${f.size}</td><td>${when(f.modifiedAt.toISOString(), now)}</td><td>${badge(status, label)}</td></tr>`;
        })}</tbody></table>${w.more > 0 ? html`<p class="muted small">and ${w.more} more.</p>` : ''}`
  }
</section>`;
}

function filesSection(p: SourcePageProps, base: string): SafeHtml {
  return html`<section id="files">
  <h2>Recent drop files</h2>
  ${
    p.files.length === 0
      ? html`<p class="muted">No file taken yet.</p>`
      : html`<table><thead><tr><th>file</th><th>status</th><th class="num">rows</th><th class="num">failed</th><th>taken</th><th>report</th><th>error</th></tr></thead>
<tbody>${p.files.map(
          (f) =>
            html`<tr data-file="${f.name}"><td><code>${f.name}</code>${f.archivedPath ? html`<br><span class="muted small">${f.archivedPath}</span>` : ''}</td><td>${badge(f.status)}</td><td class="num">${f.rows}</td><td class="num${f.failedRows > 0 ? ' bad' : ''}">${f.failedRows}</td><td>${when((f.finishedAt ?? f.claimedAt).toISOString(), p.now)}</td><td>${
              f.reportPath
                ? html`<a href="${base}/files/${f.id}/report" download data-report="${f.name}">${f.reportPath.endsWith('.csv') ? 'errors.csv' : 'reason.txt'}</a>`
                : html`<span class="muted">none</span>`
            }</td><td class="muted">${f.error ?? ''}</td></tr>`,
        )}</tbody></table>`
  }
</section>`;
}
