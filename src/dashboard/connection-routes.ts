import type { FastifyInstance } from 'fastify';
import { type DashboardAuth, wantsHtml } from './auth.js';
import type { ConnectionCheck } from './deps.js';
import { DashboardError } from './errors.js';
import { badge } from './views/format.js';
import { html } from './views/html.js';
import { layout } from './views/layout.js';

export interface ConnectionRoutesProps {
  auth: DashboardAuth;
  hasQueues: boolean;
  testConnection: (() => Promise<readonly ConnectionCheck[]>) | undefined;
}

/**
 * "Test connection": `POST /actions/test-connection` (behind the CSRF check, like every action)
 * runs the checks of `receivables-sync doctor` and shows them as a table (a script gets
 * `{"ok","checks"}`). It writes nothing to the service.
 */
export function registerConnectionRoutes(app: FastifyInstance, props: ConnectionRoutesProps): void {
  const { auth } = props;
  app.post('/actions/test-connection', { preHandler: auth.requireCsrf }, async (request, reply) => {
    if (!props.testConnection)
      throw new DashboardError('DASHBOARD_ACTION_UNKNOWN', 404, 'no connection test in this process');
    const checks = await props.testConnection();
    const ok = !checks.some((c) => c.status === 'fail');
    if (!wantsHtml(request) && (request.headers.accept ?? '').includes('application/json'))
      return { ok, checks };
    reply.type('text/html; charset=utf-8');
    const failed = checks.filter((c) => c.status === 'fail').length;
    return layout({
      title: 'Connection test',
      user: auth.principal(request).user,
      signedIn: true,
      csrfToken: auth.csrfToken(request),
      hasQueues: props.hasQueues,
      banners: [],
      body: html`<section class="card" id="connection-test">
  <h2>Connection test</h2>
  <p data-field="verdict" class="${ok ? 'good' : 'bad'}">${
    ok ? 'Every check passed: the setup is ready.' : `${failed} check(s) failed: fix them and test again.`
  }</p>
  <table class="checks">
    <thead><tr><th>Check</th><th>Status</th><th>Detail</th></tr></thead>
    <tbody>${checks.map(
      (c) =>
        html`<tr data-check="${c.name}" data-status="${c.status}"><td>${c.name}</td><td>${badge(c.status)}</td><td>${c.detail}</td></tr>`,
    )}</tbody>
  </table>
  <p><a href="/">Back to the sync page</a></p>
</section>`,
    }).value;
  });
}

/** The button on the sync page (a form: it works without JavaScript). */
export function connectionTestForm(csrfToken: string | null) {
  return html`<section class="card" id="connection">
  <h2>Connection</h2>
  <p class="muted small">The checks of <code>receivables-sync doctor</code>: state DB, Redis, the API, discovery, the token, the organization, the rate policy, the clock, each source. Nothing is written to the service.</p>
  <form method="post" action="/actions/test-connection" class="inline">${csrfToken ? html`<input type="hidden" name="_csrf" value="${csrfToken}">` : ''}<button type="submit" class="primary">Test connection</button></form>
</section>`;
}
