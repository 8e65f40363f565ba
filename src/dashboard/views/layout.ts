import { type HtmlValue, html, type SafeHtml } from './html.js';

export interface LayoutProps {
  title: string;
  /** The signed-in user; null when the dashboard runs without credentials (loopback only). */
  user: string | null;
  signedIn: boolean;
  csrfToken: string | null;
  /** Links shown in the header (bull-board only when there are queues). */
  hasQueues: boolean;
  banners: readonly SafeHtml[];
  body: HtmlValue;
}

/** The page shell: header with navigation and sign-out, banners, then the page's body. */
export function layout(props: LayoutProps): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${props.title} · receivables-sync</title>
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/dashboard.js" defer></script>
</head>
<body>
<header class="top">
  <strong class="brand">receivables-sync</strong>
  ${
    props.signedIn
      ? html`<nav>
    <a href="/">Sync</a>
    <a href="/records">Records</a>
    ${props.hasQueues ? html`<a href="/queues">Queues</a>` : html`<span class="muted" title="no Redis queues in this process">Queues</span>`}
    <a href="/metrics">Metrics</a>
  </nav>
  <span class="who">${props.user ? html`signed in as <b>${props.user}</b>` : html`no sign-in (local)`}</span>
  ${
    props.user && props.csrfToken
      ? html`<form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${props.csrfToken}"><button type="submit" class="link">Sign out</button></form>`
      : ''
  }`
      : ''
  }
</header>
<main>
${props.banners}
${props.body}
</main>
</body>
</html>
`;
}

export const banner = (level: 'info' | 'ok' | 'warn' | 'error', body: HtmlValue): SafeHtml =>
  html`<div class="banner banner-${level}" role="${level === 'error' ? 'alert' : 'status'}">${body}</div>`;
