import { kindNoun, RECORD_KINDS } from '../../domain/records.js';
import { type HtmlValue, html, type SafeHtml } from './html.js';

/** `2026-01-15 10:00:03 UTC`: one unambiguous format, whatever the browser's locale. */
export const utc = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

/** `12 s ago`, `3 min ago`, `2 h ago`, `4 d ago` (relative to the dashboard's clock). */
export function ago(iso: string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - new Date(iso).getTime()) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** A `<time>` showing how long ago, with the exact UTC time on hover. */
export const when = (iso: string | null, now: Date): SafeHtml =>
  iso === null
    ? html`<span class="muted">never</span>`
    : html`<time datetime="${iso}" title="${utc(iso)}">${ago(iso, now)}</time>`;

export function duration(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A status word in a coloured badge (`succeeded`, `partial`, `failed`, `interrupted`, `running`, `paused`, ...). */
export const badge = (status: string, label: HtmlValue = status): SafeHtml =>
  html`<span class="badge badge-${status}" data-status="${status}">${label}</span>`;

/** Pretty JSON for a `<pre>`, cut at `max` characters (payloads can be large). */
export function prettyJson(value: unknown, max = 20_000): string {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text;
}

/** A kind in words (`credit note`), by the name a row stores. */
export const KIND_LABEL: Readonly<Record<string, string>> = Object.fromEntries(
  RECORD_KINDS.map((kind) => [kind, kindNoun(kind)]),
);

/**
 * A run's status; a `running` run whose process is gone reads `stale` (a later pass of its source,
 * or the next worker start, closes it as `interrupted`); a run that read nothing because its files
 * were still being written says so.
 */
export const runBadge = (run: {
  status: string;
  stale?: boolean;
  totals?: { created: number; updated: number; unchanged: number; failed: number };
  waitingFiles?: { files: readonly string[] } | null;
}): SafeHtml => {
  if (run.stale)
    return html`<span title="its process is gone (killed or crashed): the next pass of the source marks it interrupted">${badge('stale')}</span>`;
  // A pass that found only files still being written read nothing: not "succeeded 0/0/0/0".
  const t = run.totals;
  if (
    run.status === 'succeeded' &&
    run.waitingFiles &&
    t &&
    t.created + t.updated + t.unchanged + t.failed === 0
  )
    return badge('waiting', 'nothing read: files being written');
  return badge(run.status);
};
