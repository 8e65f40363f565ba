import type { FailureHistoryRow } from '../../state/failure-queries.js';
import { badge, KIND_LABEL, prettyJson, utc, when } from './format.js';
import { html, type SafeHtml } from './html.js';

/** The record search of one record of a source. */
export const recordHref = (sourceId: string, sourceKey: string): string =>
  `/records?${new URLSearchParams({ source: sourceId, q: sourceKey }).toString()}`;

const whereOf = (f: FailureHistoryRow): string =>
  [f.file, f.line ? `line ${f.line}` : null, f.column ? `column ${f.column}` : null]
    .filter(Boolean)
    .join(', ');

const codeOf = (f: FailureHistoryRow): string =>
  [f.status === null ? null : String(f.status), f.apiCode].filter(Boolean).join(' ');

/** Open, resolved by a later sync, or dismissed (by whom, why). */
export function failureState(f: FailureHistoryRow, now: Date): SafeHtml {
  if (f.resolvedAt === null) return badge('open');
  if (f.dismissedAt !== null)
    return html`${badge('dismissed')} <span class="small">${when(f.dismissedAt.toISOString(), now)} by <b>${f.dismissedBy ?? '?'}</b>: <span data-field="dismissed-reason">${f.dismissedReason ?? ''}</span></span>`;
  return html`${badge('resolved')} <span class="small">${when(f.resolvedAt.toISOString(), now)}</span>`;
}

export interface FailureTableOptions {
  now: Date;
  /** A checkbox per row (`name="ids"`), for the forms of the source page. */
  selectable?: boolean;
  /** A column saying open / resolved / dismissed. */
  withState?: boolean;
  /** The table's `id` (tests and links find it by that). */
  id: string;
}

/** Failures as a table: record (linked to its search), stage, status and code, message, where, attempts. */
export function failureTable(failures: readonly FailureHistoryRow[], options: FailureTableOptions): SafeHtml {
  const { now } = options;
  return html`<table class="failures" id="${options.id}"><thead><tr>${options.selectable ? html`<th><span class="sr">select</span></th>` : ''}<th>kind</th><th>source id</th><th>stage</th><th>status / code</th><th>message</th><th>where</th><th class="num">attempts</th><th>last failed</th>${options.withState ? html`<th>state</th>` : ''}<th>payload</th></tr></thead>
<tbody>${failures.map(
    (f) =>
      html`<tr data-failure="${f.id}" data-key="${f.sourceKey}">${
        options.selectable
          ? html`<td><input type="checkbox" name="ids" value="${f.id}" aria-label="select ${f.sourceKey}"></td>`
          : ''
      }<td>${KIND_LABEL[f.kind] ?? f.kind}</td><td><a href="${recordHref(f.sourceId, f.sourceKey)}"><code>${f.sourceKey}</code></a></td><td>${f.stage}</td><td><code>${codeOf(f)}</code></td><td class="message">${f.message}</td><td class="muted">${whereOf(f)}</td><td class="num"><span data-field="attempts">${f.attempts}</span>${f.retryable ? html` <span class="tag" title="retried automatically">retryable</span>` : ''}</td><td><span title="first failed ${utc(f.firstFailedAt.toISOString())}">${when(f.lastFailedAt.toISOString(), now)}</span>${f.runId ? html` <a class="muted small" href="/runs/${f.runId}">run #${f.runId}</a>` : ''}</td>${
        options.withState ? html`<td data-field="state">${failureState(f, now)}</td>` : ''
      }<td>${
        f.payload === null
          ? html`<span class="muted">none</span>`
          : html`<details><summary>show</summary><pre>${prettyJson(f.payload)}</pre></details>`
      }</td></tr>`,
  )}</tbody></table>`;
}
