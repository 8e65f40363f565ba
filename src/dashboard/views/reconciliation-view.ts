import { repairInWords } from '../../domain/repair-words.js';
import type { ReconciliationRow } from '../../state/reconciliations.js';
import { recordHref } from './failure-list.js';
import { badge, duration, KIND_LABEL, when } from './format.js';
import { html, type SafeHtml } from './html.js';

/** The categories of a reconciliation, in report order, with the words of `reconcile`'s report. */
const CATEGORIES: ReadonlyArray<[string, string]> = [
  ['missing', 'missing on the service'],
  ['unresolved', 'API id no longer resolves'],
  ['orphan', 'orphans of this connection'],
  ['readOnly', 'read-only or linked elsewhere'],
  ['changed', 'changed on the service'],
];
const KINDS = ['account', 'invoice', 'creditNote'] as const;

/** Where a reconciliation's details are. */
export const reconciliationHref = (sourceId: string, id: string): string =>
  `/sources/${encodeURIComponent(sourceId)}/reconciliations/${encodeURIComponent(id)}`;

export interface ReconciliationCardProps {
  sourceId: string;
  /** The latest reconciliation of the source (any status), or null. */
  last: ReconciliationRow | null;
  now: Date;
  csrfToken: string;
  /** The reconcile actions can be queued (queues in this process, the source not paused). */
  canQueue: boolean;
  whyNot: string;
  /** Whether `reconcile.schedule` is set (shown with the card). */
  schedule: string | null;
  /** `reconcile.repair`: the schedule repairs too. */
  scheduleRepairs: boolean;
}

const total = (counts: Record<string, number> | undefined): number =>
  Object.values(counts ?? {}).reduce((a, b) => a + Number(b || 0), 0);

/** A category's count, its split by kind in the title. */
function countCell(row: ReconciliationRow, category: string): SafeHtml {
  const of = row.counts[category] ?? {};
  const n = total(of);
  const split = KINDS.map((k) => `${Number(of[k] ?? 0)} ${KIND_LABEL[k]}`).join(', ');
  return html`<td class="num${n > 0 ? ' bad' : ''}" data-category="${category}" title="${split}">${n}</td>`;
}

/** The source page's card: the last reconciliation, and "Reconcile now" / "Reconcile and repair". */
export function reconciliationCard(p: ReconciliationCardProps): SafeHtml {
  const action = (name: string) => `/actions/sources/${encodeURIComponent(p.sourceId)}/${name}`;
  // One title per button: the reason it is disabled, else what it does.
  const button = (label: string, what: string) =>
    p.canQueue
      ? html`<button type="submit" title="${what}">${label}</button>`
      : html`<button type="submit" disabled title="${p.whyNot}">${label}</button>`;
  const forms = html`<div class="row">
  <form method="post" action="${action('reconcile')}" class="inline"><input type="hidden" name="_csrf" value="${p.csrfToken}">${button('Reconcile now', 'compare what the service holds with what was synced; report only')}</form>
  <form method="post" action="${action('reconcile-repair')}" class="inline"><input type="hidden" name="_csrf" value="${p.csrfToken}">${button('Reconcile and repair', 're-create the missing, adopt the orphans a row claims, re-send what differs; record the rest as failures')}</form>
</div>`;
  const schedule = p.schedule
    ? html`<code>${p.schedule}</code> (${p.scheduleRepairs ? 'report and repair' : 'report only'})`
    : html`<span class="muted">none: on demand only (<code>reconcile.schedule</code>)</span>`;
  return html`<section id="reconciliation" class="card">
  <h2>Reconciliation <span class="muted small">the service compared with what was synced</span></h2>
  <p class="muted small">Schedule: ${schedule}</p>
  ${p.last ? lastFacts(p.last, p.now) : html`<p class="muted" data-field="reconcile-none">Never reconciled.</p>`}
  ${forms}
</section>`;
}

/** `onItsPage`: the details page itself (no link to itself). */
function lastFacts(row: ReconciliationRow, now: Date, onItsPage = false): SafeHtml {
  const took =
    row.finishedAt === null ? null : Math.max(0, row.finishedAt.getTime() - row.startedAt.getTime());
  return html`<dl class="facts" data-reconciliation="${row.id}">
<dt>${onItsPage ? 'Started' : 'Last'}</dt><dd>${when(row.startedAt.toISOString(), now)} · ${badge(row.status)} · <span data-field="reconcile-trigger">${row.trigger}</span> · <span data-field="reconcile-mode">${row.repair ? 'with repair' : 'report only'}</span>${took === null ? '' : html` · took ${duration(took)}`}</dd>
${row.error ? html`<dt>Error</dt><dd class="bad" data-field="reconcile-error">${row.error}</dd>` : ''}
<dt>Found</dt><dd>${countsTable(row)}</dd>
<dt>Drift left</dt><dd><span data-field="reconcile-drift"${row.drift > 0 ? html` class="bad"` : ''}>${row.drift}</span> record${row.drift === 1 ? '' : 's'} · <span data-field="reconcile-requests">${row.requests}</span> API request${row.requests === 1 ? '' : 's'}${repairsText(row)}</dd>
${onItsPage ? '' : html`<dt>Details</dt><dd><a href="${reconciliationHref(row.sourceId, row.id)}" data-link="reconciliation">the ${row.itemsTotal} record${row.itemsTotal === 1 ? '' : 's'} found</a></dd>`}
</dl>`;
}

function repairsText(row: ReconciliationRow): SafeHtml | '' {
  const done = Object.entries(row.repairs ?? {}).filter(([, n]) => Number(n) > 0);
  if (!row.repair || done.length === 0) return '';
  return html` · repaired: ${done.map(([action, n], i) => html`${i > 0 ? ', ' : ''}${repairInWords(action, Number(n))}`)}`;
}

/** Categories × kinds, one row per category. */
function countsTable(row: ReconciliationRow): SafeHtml {
  return html`<table class="compact" id="reconcile-counts"><thead><tr><th>category</th>${KINDS.map((k) => html`<th class="num">${KIND_LABEL[k]}</th>`)}<th class="num">all</th></tr></thead>
<tbody>${CATEGORIES.map(
    ([category, words]) =>
      html`<tr data-row="${category}"><td title="${words}">${category}</td>${KINDS.map((k) => {
        const n = Number(row.counts[category]?.[k] ?? 0);
        return html`<td class="num${n > 0 ? ' bad' : ''}" data-count="${category}-${k}">${n}</td>`;
      })}${countCell(row, category)}</tr>`,
  )}</tbody></table>`;
}

export interface ReconciliationPageProps {
  row: ReconciliationRow;
  now: Date;
  /** The source's recent reconciliations (links), latest first. */
  recent: readonly ReconciliationRow[];
}

/** `/sources/:id/reconciliations/:rid`: one reconciliation and the records it found (bounded). */
export function reconciliationPage(p: ReconciliationPageProps): SafeHtml {
  const { row } = p;
  const id = row.sourceId;
  const items = row.items;
  return html`<p class="crumbs"><a href="/">Sync</a> › <a href="/sources/${encodeURIComponent(id)}">${id}</a> › reconciliation</p>
<h1 data-reconciliation-page="${row.id}">Reconciliation #${row.id} of ${id} ${badge(row.status)}</h1>
<section class="card">${lastFacts(row, p.now, true)}</section>
<section id="reconcile-items">
  <h2>Records found <span class="count" data-field="items-total">${row.itemsTotal}</span></h2>
  ${
    items.length === 0
      ? html`<p class="muted">None: the service holds what was synced.</p>`
      : html`${row.itemsTotal > items.length ? html`<p class="muted small">The first ${items.length} of ${row.itemsTotal} are kept; <code>receivables-sync reconcile --source ${id} --json</code> lists them all.</p>` : ''}
<table class="failures"><thead><tr><th>category</th><th>kind</th><th>source id</th><th>API id</th><th>what differs, or why</th></tr></thead>
<tbody>${items.map((item) => itemRow(id, item))}</tbody></table>`
  }
</section>
${p.recent.length > 1 ? recentList(p) : ''}`;
}

function itemRow(sourceId: string, item: Record<string, unknown>): SafeHtml {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const key = text(item.sourceKey);
  const kind = text(item.kind);
  const fields = Array.isArray(item.fields) ? (item.fields as Array<Record<string, unknown>>) : [];
  const apiId = text(item.apiId);
  const foundId = text(item.foundId);
  return html`<tr data-item="${text(item.category)}-${kind}-${key}" data-category="${text(item.category)}"><td>${text(item.category)}${item.acknowledged ? html` <span class="tag" title="recorded as a failure by an earlier repair: held, not drift">held</span>` : ''}</td><td>${KIND_LABEL[kind] ?? kind}</td><td><a href="${recordHref(sourceId, key)}"><code>${key}</code></a></td><td>${apiId ? html`<code>${apiId}</code>` : ''}${foundId && foundId !== apiId ? html`<br><span class="muted small">found as <code>${foundId}</code></span>` : ''}</td><td class="message">${fields.map(
    (f) =>
      html`<div><code>${text(f.field)}</code> ${show(f.expected)} → ${show(f.actual)}${f.frozen ? html` <span class="tag">frozen</span>` : ''}</div>`,
  )}${text(item.reason)}</td></tr>`;
}

function show(value: unknown): string {
  if (value && typeof value === 'object' && 'year' in value) {
    const d = value as { year: number; month: number; day: number };
    return `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
  }
  return JSON.stringify(value ?? null);
}

function recentList(p: ReconciliationPageProps): SafeHtml {
  return html`<section id="reconcile-recent">
  <h2>Recent reconciliations</h2>
  <table class="runs"><thead><tr><th>#</th><th>started</th><th>trigger</th><th>mode</th><th>status</th><th class="num">found</th><th class="num">drift left</th></tr></thead>
  <tbody>${p.recent.map(
    (r) =>
      html`<tr data-reconciliation="${r.id}"><td><a href="${reconciliationHref(r.sourceId, r.id)}">${r.id}</a></td><td>${when(r.startedAt.toISOString(), p.now)}</td><td>${r.trigger}</td><td>${r.repair ? 'repair' : 'report'}</td><td>${badge(r.status)}</td><td class="num">${r.itemsTotal}</td><td class="num${r.drift > 0 ? ' bad' : ''}">${r.drift}</td></tr>`,
  )}</tbody></table>
</section>`;
}
