/**
 * The Content-Security-Policy of bull-board's pages (`/queues`): only this origin, like the
 * dashboard's own pages, with what bull-board's UI needs besides, found by loading it in Chromium
 * under this policy with no violation reported:
 * - `style-src 'unsafe-inline'`: its page carries `style="..."` attributes and a `<style>` element
 *   (the loading dots), and its components set styles at run time;
 * - `img-src data:`: icons inlined by its stylesheet;
 * - `base-uri 'self'`: its page sets `<base href="/queues/">`.
 * Scripts stay `'self'` only: no inline script runs (its `__UI_CONFIG__` is a JSON data block).
 */
export const BULL_BOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
].join('; ');

/** `<link ... href="https://...">` and `<script ... src="//...">`: what makes a browser fetch elsewhere. */
const EXTERNAL_TAG =
  /<(link|script)\b[^>]*\s(?:href|src)\s*=\s*["']?(?:[a-z][a-z0-9+.-]*:)?\/\/[^>]*>(?:\s*<\/script>)?\n?/gi;

/**
 * bull-board's page as it comes (its `index.ejs`) links Google Fonts, so every operator's browser
 * would tell Google each time it opens the queues. The CSP would block the request, but the
 * browser still tries (and reports a violation): the tag is removed from the HTML instead, and its
 * stylesheet falls back to the system fonts it names after IBM Plex (`system-ui`, `ui-monospace`).
 * Any other tag loading from another origin goes the same way, should a new version add one.
 */
export function withoutExternalResources(html: string): string {
  return html.replace(EXTERNAL_TAG, '');
}

/**
 * A link back to the dashboard that is always in sight on bull-board's pages (its own links menu,
 * `miscLinks`, hides behind an icon of its header): fixed in the bottom-left corner, outside the
 * element its UI renders into, styled inline (its CSP allows inline styles, not scripts).
 */
export const DASHBOARD_LINK = `<a href="/" id="back-to-dashboard" data-link="dashboard" style="position:fixed;left:12px;bottom:12px;z-index:10000;padding:6px 12px;border-radius:999px;background:#1f6feb;color:#fff;font:600 13px system-ui,sans-serif;text-decoration:none;box-shadow:0 1px 4px rgba(0,0,0,.3)">&larr; Sync dashboard</a>`;

/** bull-board's page with `DASHBOARD_LINK` first in its body. */
export function withDashboardLink(html: string): string {
  return html.replace(/<body\b[^>]*>/i, (body) => `${body}\n${DASHBOARD_LINK}`);
}
