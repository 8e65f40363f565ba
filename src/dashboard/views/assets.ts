/**
 * The dashboard's only static files, kept as strings so `tsc` alone builds the package (no copy
 * step, no front-end build). Served from `/assets/`, which the Content-Security-Policy allows.
 */

export const DASHBOARD_CSS = `
:root { color-scheme: light; --fg: #1d2330; --muted: #667085; --line: #e3e6ec; --bg: #f6f7f9; --card: #fff;
  --ok: #137a3d; --warn: #9a6400; --bad: #b42318; --accent: #2f5bd3; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header.top { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.5rem; background: #1d2330; color: #fff; }
header.top a { color: #cfd8ff; text-decoration: none; margin-right: 1rem; }
header.top a:hover { text-decoration: underline; }
header.top .brand { font-size: 1.05rem; }
header.top .who { margin-left: auto; color: #c9ced8; }
header.top .muted { color: #8a93a6; margin-right: 1rem; }
header.top button.link { color: #cfd8ff; }
main { padding: 1rem 1.5rem 3rem; max-width: 1400px; margin: 0 auto; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; } h3 { font-size: 1rem; margin: 0; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: #f1f3f7; padding: .5rem; border-radius: 4px; max-height: 22rem; overflow: auto; white-space: pre-wrap; word-break: break-all; }
.muted { color: var(--muted); } .small { font-size: 12px; } .bad { color: var(--bad); font-weight: 600; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .9rem 1rem; }
.card.narrow { max-width: 26rem; margin: 3rem auto; }
#record-resync { margin-top: 1.6rem; }
.card > h1:first-child, .card > h2:first-child { margin-top: 0; }
.sources { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 1rem; }
.source header { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .6rem; }
.facts { display: grid; grid-template-columns: 8.5rem 1fr; gap: .35rem .8rem; margin: 0; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; }
.actions { display: flex; flex-wrap: wrap; gap: .4rem; margin-top: .8rem; padding-top: .7rem; border-top: 1px solid var(--line); }
form.inline { display: inline; margin: 0; }
form.row { display: flex; flex-wrap: wrap; gap: .8rem; align-items: end; }
form.stack { display: grid; gap: .8rem; }
label { display: grid; gap: .2rem; color: var(--muted); font-size: 12px; }
input, select { font: inherit; padding: .35rem .5rem; border: 1px solid #c8cdd6; border-radius: 4px; color: var(--fg); background: #fff; }
button { font: inherit; padding: .35rem .8rem; border: 1px solid #c8cdd6; border-radius: 4px; background: #fff; cursor: pointer; }
button:hover:not([disabled]) { border-color: var(--accent); }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button[disabled] { opacity: .45; cursor: not-allowed; }
button.link { border: 0; background: none; padding: 0; text-decoration: underline; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.message { max-width: 28rem; } td.error { color: var(--bad); max-width: 20rem; }
table.compact { border: 0; } table.compact td { padding: .2rem .4rem; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: 12px; font-weight: 600; background: #eef0f4; color: #3b4352; }
.badge-succeeded, .badge-done, .badge-active, .badge-ok { background: #e3f4ea; color: var(--ok); }
.badge-partial, .badge-paused, .badge-duplicate, .badge-interrupted, .badge-cancelled, .badge-waiting, .badge-warn { background: #fdf1dc; color: var(--warn); }
.badge-failed, .badge-rejected, .badge-fail { background: #fde7e5; color: var(--bad); }
.badge-running { background: #e6ecfc; color: var(--accent); }
.tag { font-size: 11px; padding: 0 .35rem; border: 1px solid var(--line); border-radius: 4px; color: var(--muted); }
.count { font-size: 12px; background: #eef0f4; border-radius: 999px; padding: 0 .5rem; vertical-align: middle; }
.banner { padding: .6rem .9rem; border-radius: 6px; margin: .8rem 0; border: 1px solid; }
.banner-info { background: #eef3ff; border-color: #c9d6fb; }
.banner-ok { background: #e9f7ef; border-color: #bfe5cd; }
.banner-warn { background: #fff6e5; border-color: #f2d7a6; }
.banner-error { background: #fdecea; border-color: #f5c2bc; }
.badge-stale, .badge-dismissed { background: #fdf1dc; color: var(--warn); }
.badge-open { background: #fde7e5; color: var(--bad); }
.badge-resolved { background: #e3f4ea; color: var(--ok); }
.crumbs { margin: .2rem 0 0; color: var(--muted); font-size: 12px; }
.crumbs a, .links a, .filters a { color: var(--accent); }
h1 .tag, h1 .badge { vertical-align: middle; }
.pager { display: flex; gap: 1rem; align-items: center; margin: .5rem 0; font-size: 12px; }
a.button { display: inline-block; padding: .3rem .7rem; border: 1px solid #c8cdd6; border-radius: 4px; background: #fff; color: var(--fg); text-decoration: none; margin: 0 .3rem .3rem 0; }
a.button:hover { border-color: var(--accent); }
.selected-actions { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-top: .6rem; }
.selected-actions input[name="reason"] { min-width: 22rem; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
table.log td { font-size: 12px; } table.log code { word-break: break-all; }
article.record { margin-top: 1rem; } article.record h3 { margin: 1rem 0 .4rem; }
section.card { margin-top: 1rem; }
.connection + .connection { margin-top: 1.4rem; }
h3.group { font-size: 1rem; margin: .2rem 0 .2rem; } h4.group { font-size: .9rem; margin: .8rem 0 .5rem; font-weight: 600; }
p.quota { margin: 0 0 .6rem; } p.quota a { color: var(--accent); }
`;

/**
 * Confirms the actions that ask for it, and refreshes every `[data-refresh]` section in place from
 * `/partials/status` (the open `<details>` stay open), so a run can be watched to its end.
 */
export const DASHBOARD_JS = `
'use strict';
document.addEventListener('submit', (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) event.preventDefault();
});
(() => {
  const live = document.getElementById('live');
  if (!live) return;
  const every = Number(live.dataset.refreshMs) || 0;
  if (every <= 0) return;
  const stamp = document.getElementById('refresh-state');
  async function refresh() {
    if (!document.hidden) {
      try {
        const response = await fetch('/partials/status', { headers: { accept: 'text/html' }, cache: 'no-store' });
        if (response.status === 401) { window.location.reload(); return; }
        if (response.ok) {
          const open = new Set(Array.from(document.querySelectorAll('details[open][id]'), (d) => d.id));
          const template = document.createElement('template');
          template.innerHTML = await response.text();
          for (const fresh of template.content.querySelectorAll('[data-refresh][id]')) {
            const current = document.getElementById(fresh.id);
            if (!current) continue;
            for (const details of fresh.querySelectorAll('details[id]')) if (open.has(details.id)) details.open = true;
            current.replaceWith(fresh);
          }
          if (stamp) stamp.textContent = 'updated ' + new Date().toLocaleTimeString();
        } else if (stamp) stamp.textContent = 'refresh failed (' + response.status + ')';
      } catch (error) {
        if (stamp) stamp.textContent = 'refresh failed: ' + error.message;
      }
    }
    setTimeout(refresh, every);
  }
  setTimeout(refresh, every);
})();
`;
