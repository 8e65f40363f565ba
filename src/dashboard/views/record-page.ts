import type { RecordKind } from '../../domain/records.js';
import type { MappedRecordView, RecordHit } from '../../state/detail-queries.js';
import type { FailureHistoryRow } from '../../state/failure-queries.js';
import type { RecordRunRow } from '../../state/run-records.js';
import { failureTable, recordHref } from './failure-list.js';
import { badge, KIND_LABEL, prettyJson, utc, when } from './format.js';
import { html, type SafeHtml } from './html.js';

/** One record found: what the record map holds (null: it never synced), its failures, its runs. */
export interface RecordDetail {
  kind: RecordKind;
  sourceKey: string;
  mapped: MappedRecordView | null;
  failures: readonly FailureHistoryRow[];
  runs: readonly RecordRunRow[];
}

export interface RecordPageProps {
  sourceIds: readonly string[];
  source: string;
  q: string;
  now: Date;
  csrfToken: string;
  /** Re-sync possible (queues in this process). */
  canQueue: boolean;
  /** The records whose source id is `q` (one per kind). */
  details: readonly RecordDetail[];
  /** When nothing has that id: the ids that start with it. */
  near: readonly RecordHit[];
}

/** `/records?source=..&q=..`: a record by its source id, everything the state DB knows of it. */
export function recordPage(p: RecordPageProps): SafeHtml {
  return html`<p class="crumbs"><a href="/">Sync</a> › records</p>
<h1>Record search</h1>
<form method="get" action="/records" class="row card" id="record-search">
  <label>Source <select name="source">${p.sourceIds.map((id) => html`<option value="${id}"${id === p.source ? html` selected` : ''}>${id}</option>`)}</select></label>
  <label>Source id, invoice number or customer name <input name="q" value="${p.q}" maxlength="200" required placeholder="INV-42, F-00042 or Acme" autofocus></label>
  <button type="submit" class="primary">Search</button>
</form>
${results(p)}`;
}

function results(p: RecordPageProps): SafeHtml | string {
  if (p.q === '') return '';
  if (p.details.length > 0) return html`${p.details.map((d) => recordCard(d, p))}`;
  if (p.near.length === 0)
    return html`<p class="muted" id="no-record">${p.source} has no record whose source id starts with <code>${p.q}</code>, whose number holds it or whose customer's name holds it.</p>`;
  return html`<section id="near"><p>No record of ${p.source} has the source id or number <code>${p.q}</code>; these come near:</p>
<ul>${p.near.map(
    (h) =>
      html`<li data-hit="${h.kind}:${h.sourceKey}"><a href="${recordHref(p.source, h.sourceKey)}"><code>${h.sourceKey}</code></a> <span class="muted">${KIND_LABEL[h.kind]}</span>${h.number ? html` · number <code data-field="number">${h.number}</code>` : ''}${h.customer ? html` · <span data-field="customer">${h.customer}</span>` : ''}</li>`,
  )}</ul></section>`;
}

function recordCard(d: RecordDetail, p: RecordPageProps): SafeHtml {
  const m = d.mapped;
  const open = d.failures.filter((f) => f.resolvedAt === null).length;
  return html`<article class="card record" data-record="${d.kind}:${d.sourceKey}">
  <h2>${KIND_LABEL[d.kind]} <code>${d.sourceKey}</code> ${m ? badge('done', 'synced') : badge('failed', 'never synced')} ${open > 0 ? badge('failed', `${open} open failure${open === 1 ? '' : 's'}`) : ''}</h2>
  <dl class="facts">
    <dt>API id</dt><dd><code data-field="api-id">${m?.apiId ?? ''}</code>${m ? '' : html`<span class="muted">none: the service has no record for it yet</span>`}</dd>
    ${
      m
        ? html`<dt>Synced</dt><dd data-field="synced-at">${when(m.syncedAt.toISOString(), p.now)} <span class="muted">(${utc(m.syncedAt.toISOString())})</span>${m.lastRunId ? html` by <a href="/runs/${m.lastRunId}">run #${m.lastRunId}</a>` : ''}</dd>
    <dt>Fingerprint</dt><dd>${m.contentHash === '' ? html`<span class="muted">none: compared again on the next pass</span>` : html`<code title="${m.contentHash}">${m.contentHash.slice(0, 16)}…</code>`}</dd>
    <dt>Last payload</dt><dd>${m.record ? html`<details id="record-${d.kind}-payload"><summary>show</summary><pre data-field="payload">${prettyJson(m.record)}</pre></details>` : html`<span class="muted">not kept</span>`}</dd>`
        : ''
    }
  </dl>
  ${
    m?.record
      ? html`<form method="post" action="/actions/records/resync" class="inline">
    <input type="hidden" name="_csrf" value="${p.csrfToken}">
    <input type="hidden" name="sourceId" value="${p.source}">
    <input type="hidden" name="kind" value="${d.kind}">
    <input type="hidden" name="sourceKey" value="${d.sourceKey}">
    <button type="submit"${p.canQueue ? '' : html` disabled title="no queues: start the worker (REDIS_URL)"`}>Re-sync this record</button>
  </form>`
      : ''
  }
  <h3>Failures</h3>
  ${d.failures.length === 0 ? html`<p class="muted">None.</p>` : failureTable(d.failures, { now: p.now, withState: true, id: `record-failures-${d.kind}` })}
  <h3>Runs that touched it</h3>
  ${
    d.runs.length === 0
      ? html`<p class="muted">None recorded${m ? ' (runs before this dashboard kept them are not listed)' : ''}.</p>`
      : html`<table class="compact record-runs"><thead><tr><th>run</th><th>outcome</th><th>API id</th><th>trigger</th><th>run status</th><th>when</th></tr></thead><tbody>${d.runs.map(
          (r) =>
            html`<tr data-run="${r.runId}"><td><a href="/runs/${r.runId}">#${r.runId}</a></td><td>${badge(r.outcome === 'failed' ? 'failed' : 'done', r.outcome)}</td><td><code>${r.apiId ?? ''}</code></td><td>${r.trigger}</td><td>${badge(r.status)}</td><td>${when(r.at.toISOString(), p.now)}</td></tr>`,
        )}</tbody></table>`
  }
</article>`;
}
