import { html, type SafeHtml } from './html.js';

/** A page of a list: its number (from 1), its size, and how many items there are in all. */
export interface PageOf {
  page: number;
  size: number;
  total: number;
}

/** `?page=` of a request, a whole number from 1 (anything else: 1). */
export function pageParam(value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : 1;
  return Math.max(1, n);
}

/**
 * "21–40 of 75 · ‹ newer · older ›" under a list; `href(page)` builds a page's link (the other
 * parameters of the page kept).
 */
export function pager(of: PageOf, href: (page: number) => string, name: string): SafeHtml {
  const pages = Math.max(1, Math.ceil(of.total / of.size));
  if (of.total <= of.size && of.page === 1) return html``;
  const first = of.total === 0 ? 0 : (of.page - 1) * of.size + 1;
  const last = Math.min(of.total, of.page * of.size);
  return html`<nav class="pager" aria-label="${name} pages" data-pager="${name}"><span class="muted">${first}–${last} of ${of.total}</span>
${of.page > 1 ? html`<a href="${href(of.page - 1)}" rel="prev">‹ previous</a>` : ''}
<span>page ${of.page} of ${pages}</span>
${of.page < pages ? html`<a href="${href(of.page + 1)}" rel="next">next ›</a>` : ''}</nav>`;
}
