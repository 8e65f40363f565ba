import { html, type SafeHtml } from './html.js';
import { banner, layout } from './layout.js';

const NAMES: Record<string, string> = { redis: 'Redis', database: 'the state DB', api: 'the API' };

/** The page a browser gets while the worker waits for the dashboard's dependencies (refreshed by the `Refresh` header). */
export function startingPage(waitingFor: readonly string[]): SafeHtml {
  const names = waitingFor.map((name) => NAMES[name] ?? name);
  return layout({
    title: 'Starting',
    user: null,
    signedIn: false,
    csrfToken: null,
    hasQueues: false,
    banners: [
      banner(
        'warn',
        names.length > 0
          ? `The worker is starting: it waits for ${names.join(', ')}, and retries by itself.`
          : 'The worker is starting.',
      ),
    ],
    body: html`<section class="card narrow">
  <h1>Starting</h1>
  <p class="muted">This page reloads every few seconds. <code>/readyz</code> says what is missing; the worker's log says why.</p>
</section>`,
  });
}
