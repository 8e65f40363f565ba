import type { SafeHtml } from './views/html.js';
import { html } from './views/html.js';
import { banner } from './views/layout.js';

/** What an action reports on the page it redirects to: a code and a few bounded parameters. */
export interface Notice {
  code: string;
  source?: string | undefined;
  job?: string | undefined;
  kind?: string | undefined;
  key?: string | undefined;
  /** How many (failures dismissed, selected for a retry). */
  count?: string | undefined;
  /** A run's id (the pass a cancel was asked of). */
  run?: string | undefined;
}

type Render = (n: Notice) => { level: 'ok' | 'error' | 'info'; body: SafeHtml };

/**
 * The texts of the notices. The redirect carries only the code and its parameters, and the text is
 * rendered here, so a crafted link cannot make the dashboard say something it never says.
 */
const NOTICES: Readonly<Record<string, Render>> = {
  'resync-queued': (n) => ({
    level: 'ok',
    body: html`Re-sync of <b>${n.source}</b> queued (job <code>${n.job}</code>). The page follows it.`,
  }),
  'full-resync-queued': (n) => ({
    level: 'ok',
    body: html`Full re-sync of <b>${n.source}</b> queued (job <code>${n.job}</code>): hashes and cursors are reset, records are compared again, none is created twice.`,
  }),
  'retry-queued': (n) => ({
    level: 'ok',
    body: html`Retry of the failures of <b>${n.source}</b> queued (job <code>${n.job}</code>).`,
  }),
  'record-queued': (n) => ({
    level: 'ok',
    body: html`Re-sync of ${n.kind} <code>${n.key}</code> of <b>${n.source}</b> queued (job <code>${n.job}</code>).`,
  }),
  'reconcile-queued': (n) => ({
    level: 'ok',
    body: html`Reconciliation of <b>${n.source}</b> queued (job <code>${n.job}</code>, report only). It runs between passes of the source; its result shows below once done.`,
  }),
  'reconcile-repair-queued': (n) => ({
    level: 'ok',
    body: html`Reconciliation and repair of <b>${n.source}</b> queued (job <code>${n.job}</code>). It runs between passes of the source; what cannot be repaired is recorded as a failure.`,
  }),
  'reconcile-already-queued': (n) => ({
    level: 'info',
    body: html`A reconciliation of <b>${n.source}</b> is already queued or running (job <code>${n.job}</code>): nothing added.`,
  }),
  'already-queued': (n) => ({
    level: 'info',
    body: html`<b>${n.source}</b> already has this work queued or running (job <code>${n.job}</code>): nothing added.`,
  }),
  paused: (n) => ({
    level: 'ok',
    body: html`<b>${n.source}</b> is paused: no schedule, file or action runs it until it is resumed.`,
  }),
  resumed: (n) => ({ level: 'ok', body: html`<b>${n.source}</b> is resumed.` }),
  'cancel-requested': (n) => ({
    level: 'ok',
    body: html`Cancel of run <a href="/runs/${n.run ?? ''}">#${n.run}</a> of <b>${n.source}</b> asked: the pass stops before its next batch, the file under way goes back to the drop folder. The run then reads <b>cancelled</b>.`,
  }),
  'nothing-running': (n) => ({
    level: 'info',
    body: html`<b>${n.source}</b> has no pass running: nothing to cancel.`,
  }),
  dismissed: (n) => ({
    level: 'ok',
    body: html`${n.count} failure${n.count === '1' ? '' : 's'} of <b>${n.source}</b> dismissed: no longer open, kept in the history below.`,
  }),
  'retry-selected-queued': (n) => ({
    level: 'ok',
    body: html`Retry of ${n.count} selected failure${n.count === '1' ? '' : 's'} of <b>${n.source}</b> queued (job <code>${n.job}</code>). Rows refused by validation need corrected data: download them as CSV, fix and drop them back.`,
  }),
  'upload-queued': (n) => ({
    level: 'ok',
    body: html`<code>${n.key}</code> is in the drop folder of <b>${n.source}</b>; a pass is queued (job <code>${n.job}</code>) and takes it like any dropped file.`,
  }),
  'upload-discarded': (n) => ({
    level: 'ok',
    body: html`Upload <code>${n.key}</code> discarded: deleted, nothing was synced.`,
  }),
  DASHBOARD_SELECTION_EMPTY: () => ({
    level: 'error',
    body: html`Select at least one open failure first.`,
  }),
  DASHBOARD_REASON_REQUIRED: () => ({
    level: 'error',
    body: html`Say why the failures are dismissed (the reason is kept in the history).`,
  }),
  DASHBOARD_SOURCE_UNKNOWN: () => ({ level: 'error', body: html`No such source in the configuration.` }),
  DASHBOARD_SOURCE_PAUSED: (n) => ({
    level: 'error',
    body: html`<b>${n.source}</b> is paused: resume it first.`,
  }),
  DASHBOARD_RECORD_UNKNOWN: (n) => ({
    level: 'error',
    body: html`<b>${n.source}</b> has no synced ${n.kind} <code>${n.key}</code>: only records synced before can be re-synced (drop the row again otherwise).`,
  }),
  DASHBOARD_INPUT_INVALID: () => ({
    level: 'error',
    body: html`The form was incomplete: pick a source and a kind, and give a source id.`,
  }),
  DASHBOARD_NO_QUEUES: () => ({
    level: 'error',
    body: html`Actions need the worker's queues: run <code>receivables-sync worker</code> with <code>REDIS_URL</code> set.`,
  }),
  DASHBOARD_QUEUE_UNAVAILABLE: () => ({
    level: 'error',
    body: html`The queue could not be reached (Redis): nothing was queued. Try again once it is back.`,
  }),
};

/** The address of the page an action redirects to (the sync page, or `path`), with its notice. */
export function noticeQuery(notice: Notice, path = '/'): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(notice))
    if (value) params.set(name === 'code' ? 'notice' : name, value);
  return `${path}?${params.toString()}`;
}

/** The notice of the page's query, rendered (unknown codes and oversized parameters are dropped). */
export function renderNotice(
  query: Record<string, unknown>,
  knownSources: ReadonlySet<string>,
): SafeHtml | null {
  const code = typeof query.notice === 'string' ? query.notice : undefined;
  const render = code ? NOTICES[code] : undefined;
  if (!code || !render) return null;
  const bounded = (v: unknown, max: number) => (typeof v === 'string' && v.length <= max ? v : undefined);
  const source = bounded(query.source, 64);
  const notice: Notice = {
    code,
    source: source && knownSources.has(source) ? source : undefined,
    job: bounded(query.job, 128),
    kind: ['account', 'invoice', 'creditNote'].includes(String(query.kind)) ? String(query.kind) : undefined,
    key: bounded(query.key, 200),
    count: typeof query.count === 'string' && /^\d{1,7}$/.test(query.count) ? query.count : undefined,
    run: typeof query.run === 'string' && /^\d{1,18}$/.test(query.run) ? query.run : undefined,
  };
  const { level, body } = render(notice);
  return banner(level, body);
}
