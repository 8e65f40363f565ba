import {
  type ConnectionGroupView,
  type OrganizationGroupView,
  showsConnectionHeadings,
} from '../connection-groups.js';
import type { SourceView } from '../status.js';
import { ago, utc } from './format.js';
import { html, type SafeHtml } from './html.js';

export interface GroupedSourcesProps {
  groups: readonly ConnectionGroupView[];
  sources: readonly SourceView[];
  now: Date;
  /** A source's card (sync-page.ts). */
  card: (source: SourceView) => SafeHtml;
}

/**
 * The source cards grouped by connection, then organization, each connection with its token's
 * quota line. The common case (the default connection alone, one organization) stays the flat
 * grid of cards with one quota line above it; headings appear only where there is a choice.
 */
export function groupedSources(props: GroupedSourcesProps): SafeHtml {
  const byId = new Map(props.sources.map((s) => [s.id, s]));
  const cards = (ids: readonly string[]) =>
    html`<div class="sources">${ids.map((id) => {
      const source = byId.get(id);
      return source ? props.card(source) : '';
    })}</div>`;
  const organizations = (group: ConnectionGroupView, headings: boolean) =>
    headings
      ? group.organizations.map(
          (o) =>
            html`<div class="organization" data-organization="${o.id ?? ''}"><h4 class="group">${organizationTitle(o)}</h4>${cards(o.sources)}</div>`,
        )
      : cards(group.organizations.flatMap((o) => o.sources));
  if (!showsConnectionHeadings(props.groups)) {
    const only = props.groups[0];
    if (!only) return html``;
    return html`<div class="connection" data-connection="${only.id}">${quotaLine(only, props)}${organizations(only, only.organizations.length > 1)}</div>`;
  }
  return html`${props.groups.map(
    (group) =>
      html`<div class="connection" data-connection="${group.id}">
  <h3 class="group">Connection <code>${group.id}</code>${group.host ? html` <span class="muted small" data-field="connection-host">${group.host}</span>` : ''}</h3>
  ${quotaLine(group, props)}
  ${organizations(group, true)}
</div>`,
  )}`;
}

function organizationTitle(o: OrganizationGroupView): SafeHtml {
  if (o.id === null) return html`Its token's only organization`;
  const from =
    o.from === 'last-run'
      ? 'as its last run recorded'
      : o.from === 'token'
        ? "its token's only organization"
        : o.from === 'connection'
          ? "its connection's"
          : '';
  return html`Organization <code>${o.id}</code>${from ? html` <span class="muted small">${from}</span>` : ''}`;
}

/**
 * `API budget: 212 / 300 in the last 60 s · waiting: erp (12 requests)`, or why it is not known:
 * no worker told it, Redis did not answer, or this dashboard has no Redis.
 */
function quotaLine(group: ConnectionGroupView, props: GroupedSourcesProps): SafeHtml {
  const line = (status: string, body: SafeHtml, title = '') =>
    html`<p class="quota muted small" data-field="quota" data-budget-status="${status}"${title ? html` title="${title}"` : ''}>API budget: ${body}</p>`;
  const budget = group.budget;
  switch (group.budgetStatus) {
    case 'unknown':
      return line('unknown', html`unknown (no Redis in this process: each worker limits its own requests)`);
    case 'unavailable':
      return line('unavailable', html`unavailable (Redis did not answer)`);
    case 'not-told':
      return line('not-told', html`no worker has told its use yet`);
  }
  if (!budget) return line('not-told', html`no worker has told its use yet`);
  const known = new Set(props.sources.map((s) => s.id));
  const waiting =
    budget.waiting.length === 0
      ? html`none waiting`
      : html`waiting: ${budget.waiting.map(
          (w, i) =>
            html`${i > 0 ? ', ' : ''}<span data-waiting="${w.flow}">${
              known.has(w.flow)
                ? html`<a href="/sources/${encodeURIComponent(w.flow)}">${w.flow}</a>`
                : w.flow === ''
                  ? 'other requests'
                  : w.flow
            } (<span data-field="waiting-requests">${w.requests}</span> ${w.requests === 1 ? 'request' : 'requests'})</span>`,
        )}`;
  const used = html`<span data-field="budget-used">${budget.requestsInWindow}</span>`;
  return line(
    'ok',
    budget.quota === null || budget.windowSeconds === null
      ? html`${used} requests logged, no policy told yet (the first answer tells it) · ${waiting}`
      : html`${used} / <span data-field="budget-quota">${budget.quota}</span> in the last ${budget.windowSeconds} s · ${waiting}`,
    `told by a worker ${ago(budget.toldAt, props.now)} (${utc(budget.toldAt)})`,
  );
}
