import { kindNoun } from '../../domain/records.js';
import type { SourceProfiles } from '../source-profile.js';
import type { DashboardStatus, FailureView, KindCounts, QueueView, RunView, SourceView } from '../status.js';
import { groupedSources } from './connection-groups.js';
import { badge, duration, KIND_LABEL, prettyJson, runBadge, utc, when } from './format.js';
import { type HtmlValue, html, type SafeHtml } from './html.js';
import { rejectedFilesNote } from './rejected-files.js';
import { sourceActionForms } from './source-actions.js';
import { waitingFilesNote } from './waiting-files.js';

export interface SyncPageProps {
  status: DashboardStatus;
  csrfToken: string;
  /** False without queues: the actions are shown disabled. */
  actionsEnabled: boolean;
  now: Date;
  /** Milliseconds between two refreshes of the status sections (0: no refresh). */
  refreshMs: number;
  /** What each source's type shows (its cursors when it has none). */
  profileOf: SourceProfiles;
}

/** The sections refreshed in place by the page's script (`GET /partials/status`). */
export function statusSections(props: SyncPageProps): SafeHtml {
  const { status } = props;
  return html`<section id="sources" data-refresh>
  <h2>Sources</h2>
  ${status.sources.length === 0 ? html`<p class="muted">No source is configured.</p>` : ''}
  ${groupedSources({ groups: status.connections, sources: status.sources, now: props.now, card: (s) => sourceCard(s, props) })}
</section>
${status.queues ? queuesSection(status.queues) : html`<section id="queues" data-refresh hidden></section>`}
<section id="runs" data-refresh>
  <h2>Recent runs</h2>
  ${runsTable(status.runs, props.now)}
</section>
<section id="failures" data-refresh>
  <h2>Open failures <span class="count" data-field="failures-total">${status.failuresTotal}</span></h2>
  ${failuresTable(status.failures, status.failuresTotal, props.now)}
</section>`;
}

/** The body of the sync page: status sections, then the form to re-sync one record. */
export function syncPage(props: SyncPageProps): SafeHtml {
  return html`<div id="live" data-refresh-ms="${props.refreshMs}">
  <p class="muted small">${props.refreshMs > 0 ? `Refreshed every ${props.refreshMs / 1000} s · ` : ''}<span id="refresh-state">loaded ${utc(props.status.generatedAt)}</span></p>
  ${statusSections(props)}
</div>
${recordForm(props)}`;
}

/** The latest reconciliation of a source: its drift left, linked to its details (none: never reconciled). */
function reconcileFact(source: SourceView, now: Date): SafeHtml | '' {
  const r = source.reconcile;
  if (!r) return '';
  const href = `/sources/${encodeURIComponent(source.id)}/reconciliations/${encodeURIComponent(r.id)}`;
  return html`<dt>Drift</dt>
    <dd data-field="drift">${
      r.status === 'done'
        ? html`<a href="${href}"${r.drift > 0 ? html` class="bad"` : ''} data-field="drift-left">${r.drift}</a> left`
        : html`<a href="${href}">${badge(r.status)}</a>`
    } <span class="muted">· reconciled ${when(r.startedAt, now)}</span></dd>`;
}

function sourceCard(source: SourceView, props: SyncPageProps): SafeHtml {
  const state = source.running ? badge('running') : source.paused ? badge('paused') : badge('active');
  const last = source.lastRun;
  return html`<article class="card source" data-source="${source.id}">
  <header>
    <h3><a href="/sources/${encodeURIComponent(source.id)}">${source.id}</a></h3>
    <span class="tag">${source.type}</span>
    <span data-field="state">${state}</span>
    <span class="muted small">${source.schedule ? html`schedule <code>${source.schedule}</code>` : 'no schedule (manual and file triggers only)'}</span>
  </header>
  <dl class="facts">
    ${pauseFact(source, props.now)}
    <dt>Last run</dt>
    <dd data-field="last-run">${
      last
        ? html`<span data-field="last-run-status">${runBadge(last)}</span> ${when(last.finishedAt ?? last.startedAt, props.now)} <a class="muted" href="/runs/${last.id}">#${last.id}</a> <span class="muted">· ${last.trigger}</span><br>${countsLine(last.totals, 'last-run')}${waitingFilesNote(last)}`
        : html`<span class="muted">never synced</span>`
    }</dd>
    <dt>Synced records</dt>
    <dd><span data-field="records-account">${source.records.account}</span> ${kindNoun('account', source.records.account)} · <span data-field="records-invoice">${source.records.invoice}</span> ${kindNoun('invoice', source.records.invoice)} · <span data-field="records-creditNote">${source.records.creditNote}</span> ${kindNoun('creditNote', source.records.creditNote)}</dd>
    ${reconcileFact(source, props.now)}
    <dt>Open failures</dt>
    <dd>${source.openFailures > 0 ? html`<a href="#failures" class="bad" data-field="open-failures">${source.openFailures}</a>` : html`<span data-field="open-failures">0</span>`}</dd>
    <dt>Cursor</dt>
    <dd>${
      source.cursors.length === 0
        ? html`<span class="muted">${props.profileOf(source.id).noCursors}</span>`
        : source.cursors.map(
            (c) =>
              html`<details id="cursor-${source.id}-${c.stream}"><summary><code>${c.stream}</code> · ${when(c.updatedAt, props.now)}</summary><pre>${prettyJson(c.cursor)}</pre></details>`,
          )
    }</dd>
    ${
      source.recentFiles.length > 0
        ? html`<dt>Recent files</dt><dd><details id="files-${source.id}"><summary>${source.recentFiles.length} latest</summary><table class="compact"><tbody>${source.recentFiles.map(
            (f) =>
              html`<tr><td><code>${f.name}</code></td><td>${badge(f.status)}</td><td>${f.rows} rows${f.failedRows > 0 ? html`, <span class="bad">${f.failedRows} failed</span>` : ''}</td><td>${f.finishedAt ? when(f.finishedAt, props.now) : ''}</td><td class="muted">${f.error ?? ''}</td></tr>`,
          )}</tbody></table></details></dd>`
        : ''
    }
  </dl>
  <footer class="actions">${sourceActions(source, props)}</footer>
</article>`;
}

/** Why a paused source is paused (an automatic pause says after how many failed runs, and the last error). */
function pauseFact(source: SourceView, now: Date): SafeHtml | '' {
  const pause = source.pause;
  if (!source.paused || !pause) return '';
  const auto = pause.by === 'auto';
  return html`<dt>Paused</dt>
    <dd data-field="pause" data-paused-by="${pause.by}"><span${auto ? html` class="bad"` : ''} data-field="pause-reason">${pause.reason ?? 'paused'}</span>${pause.at ? html` · ${when(pause.at, now)}` : ''}<br><span class="muted small">${auto ? 'Fix the cause, then Resume: the count of failed runs starts again.' : 'Resume to sync it again.'}</span></dd>`;
}

function sourceActions(source: SourceView, props: SyncPageProps): SafeHtml {
  return sourceActionForms({
    sourceId: source.id,
    csrfToken: props.csrfToken,
    actionsEnabled: props.actionsEnabled,
    paused: source.paused,
    openFailures: source.openFailures,
    runningRunId: source.running && !source.running.stale ? source.running.id : null,
  });
}

function countsLine(c: KindCounts, field: string, title?: string): SafeHtml {
  const part = (outcome: keyof KindCounts, label: string) =>
    html`<span class="n n-${outcome}${c[outcome] > 0 && outcome === 'failed' ? ' bad' : ''}" data-field="${field}-${outcome}">${c[outcome]}</span> ${label}`;
  return html`<span class="counts"${title ? html` title="${title}"` : ''}>${part('created', 'created')} · ${part('updated', 'updated')} · ${part('unchanged', 'unchanged')} · ${part('failed', 'failed')}</span>`;
}

function queuesSection(queues: readonly QueueView[]): SafeHtml {
  const states = ['waiting', 'active', 'delayed', 'failed', 'completed', 'paused'];
  return html`<section id="queues" data-refresh>
  <h2>Queues <a class="small" href="/queues">details</a></h2>
  <table><thead><tr><th>queue</th>${states.map((s) => html`<th class="num">${s}</th>`)}</tr></thead>
  <tbody>${queues.map((q) =>
    q.unreachable
      ? html`<tr data-queue="${q.name}"><td><code>${q.name}</code></td><td colspan="${states.length}" class="bad">unreachable (Redis)</td></tr>`
      : html`<tr data-queue="${q.name}"><td><code>${q.name}</code></td>${states.map((s) => html`<td class="num">${q.counts[s] ?? 0}</td>`)}</tr>`,
  )}</tbody></table>
</section>`;
}

function runsTable(runs: readonly RunView[], now: Date): SafeHtml {
  if (runs.length === 0) return html`<p class="muted">No run yet.</p>`;
  const perKind = (r: RunView) =>
    (['accounts', 'invoices', 'creditNotes'] as const)
      .map(
        (k) =>
          `${k}: ${r.counts[k].created} created, ${r.counts[k].updated} updated, ${r.counts[k].unchanged} unchanged, ${r.counts[k].failed} failed`,
      )
      .join('\n');
  return html`<table class="runs"><thead><tr><th>#</th><th>source</th><th>trigger</th><th>status</th><th>started</th><th>took</th><th class="num">created</th><th class="num">updated</th><th class="num">unchanged</th><th class="num">failed</th><th>error</th></tr></thead>
<tbody>${runs.map(
    (r) =>
      html`<tr data-run="${r.id}" title="${perKind(r)}"><td><a href="/runs/${r.id}">${r.id}</a></td><td><a href="/sources/${encodeURIComponent(r.sourceId)}">${r.sourceId}</a></td><td>${r.trigger}${r.dryRun ? ' (dry run)' : ''}</td><td>${runBadge(r)}</td><td>${when(r.startedAt, now)}</td><td>${duration(r.durationMs)}</td>${cell(r.totals.created, 'created')}${cell(r.totals.updated, 'updated')}${cell(r.totals.unchanged, 'unchanged')}${cell(r.totals.failed, 'failed')}<td class="error">${r.error ?? ''}${rejectedFilesNote(r)}</td></tr>`,
  )}</tbody></table>`;
}

const cell = (n: number, field: string): SafeHtml =>
  html`<td class="num${field === 'failed' && n > 0 ? ' bad' : ''}" data-field="${field}">${n}</td>`;

function failuresTable(failures: readonly FailureView[], total: number, now: Date): SafeHtml {
  if (failures.length === 0) return html`<p class="muted">None: every record synced or unchanged.</p>`;
  return html`${total > failures.length ? html`<p class="muted">The latest ${failures.length} of ${total}; <code>receivables-sync failures</code> lists them all.</p>` : ''}
<table class="failures"><thead><tr><th>source</th><th>kind</th><th>source id</th><th>stage</th><th>status / code</th><th>message</th><th>where</th><th class="num">attempts</th><th>last failed</th><th>payload</th></tr></thead>
<tbody>${failures.map((f) => failureRow(f, now))}</tbody></table>`;
}

function failureRow(f: FailureView, now: Date): SafeHtml {
  const where: HtmlValue = [f.file, f.line ? `line ${f.line}` : null, f.column ? `column ${f.column}` : null]
    .filter(Boolean)
    .join(', ');
  const code = [f.status === null ? null : String(f.status), f.apiCode].filter(Boolean).join(' ');
  return html`<tr data-failure="${f.id}" data-key="${f.sourceKey}"><td>${f.sourceId}</td><td>${KIND_LABEL[f.kind] ?? f.kind}</td><td><a href="/records?${new URLSearchParams({ source: f.sourceId, q: f.sourceKey }).toString()}"><code>${f.sourceKey}</code></a></td><td>${f.stage}</td><td><code>${code}</code></td><td class="message">${f.message}</td><td class="muted">${where}</td><td class="num">${f.attempts}${f.retryable ? html` <span class="tag" title="retried automatically">retryable</span>` : ''}</td><td>${when(f.lastFailedAt, now)}</td><td>${
    f.payload === null
      ? html`<span class="muted">none</span>`
      : html`<details id="payload-${f.id}"><summary>show</summary><pre>${prettyJson(f.payload)}</pre></details>`
  }</td></tr>`;
}

function recordForm(props: SyncPageProps): SafeHtml {
  const sources = props.status.sources;
  const disabled = !props.actionsEnabled || sources.length === 0;
  return html`<section id="record-resync" class="card">
  <h2>Re-sync one record</h2>
  <p class="muted">Sends the record again as last synced (its hash is forgotten first), e.g. after a fix on the Receivables side.</p>
  <form method="post" action="/actions/records/resync" class="row">
    <input type="hidden" name="_csrf" value="${props.csrfToken}">
    <label>Source <select name="sourceId" required>${sources.map((s) => html`<option value="${s.id}">${s.id}</option>`)}</select></label>
    <label>Kind <select name="kind" required><option value="account">account</option><option value="invoice">invoice</option><option value="creditNote">credit note</option></select></label>
    <label>Source id <input name="sourceKey" required maxlength="200" placeholder="INV-42"></label>
    <button type="submit"${disabled ? html` disabled` : ''}>Re-sync record</button>
  </form>
</section>`;
}
