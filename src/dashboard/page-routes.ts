import type { FastifyInstance } from 'fastify';
import type { Clock } from '../domain/clock.js';
import type { DashboardAuth } from './auth.js';
import { connectionTestForm } from './connection-routes.js';
import { renderNotice } from './notices.js';
import type { SourceProfiles } from './source-profile.js';
import type { StatusReader } from './status.js';
import { html, type SafeHtml } from './views/html.js';
import { banner, layout } from './views/layout.js';
import { statusSections, syncPage } from './views/sync-page.js';

export interface PageRoutesProps {
  auth: DashboardAuth;
  status: StatusReader;
  clock: Clock;
  hasQueues: boolean;
  refreshMs: number;
  sourceIds: ReadonlySet<string>;
  /** What each source's type shows (its cursors when it has none). */
  profileOf: SourceProfiles;
  /** Whether the page offers "Test connection" (see connection-routes.ts). */
  canTestConnection: boolean;
}

/** The sync page, its refreshed sections and its JSON twin (all behind the protected scope). */
export function registerPageRoutes(app: FastifyInstance, props: PageRoutesProps): void {
  const { auth } = props;
  const pageProps = async (csrfToken: string) => ({
    status: await props.status.read(),
    csrfToken,
    actionsEnabled: props.hasQueues,
    now: props.clock.now(),
    refreshMs: props.refreshMs,
    profileOf: props.profileOf,
  });

  app.get('/', async (request, reply) => {
    const principal = auth.principal(request);
    const csrfToken = auth.csrfToken(request);
    const banners: SafeHtml[] = [];
    const notice = renderNotice(request.query as Record<string, unknown>, props.sourceIds);
    if (notice) banners.push(notice);
    if (!auth.enabled) {
      banners.push(
        banner(
          'warn',
          html`No <code>DASHBOARD_USER</code> / <code>DASHBOARD_PASSWORD</code>: this dashboard is open to anyone on this machine (it listens on loopback only).`,
        ),
      );
    }
    if (!props.hasQueues) {
      banners.push(
        banner(
          'info',
          html`Read-only: no queues in this process. Actions need the worker (<code>receivables-sync worker</code> with <code>REDIS_URL</code>).`,
        ),
      );
    }
    reply.type('text/html; charset=utf-8');
    return layout({
      title: 'Sync',
      user: principal.user,
      signedIn: true,
      csrfToken,
      hasQueues: props.hasQueues,
      banners,
      body: html`${syncPage(await pageProps(csrfToken))}${props.canTestConnection ? connectionTestForm(csrfToken) : ''}`,
    }).value;
  });

  app.get('/partials/status', async (request, reply) => {
    reply.type('text/html; charset=utf-8');
    return statusSections(await pageProps(auth.csrfToken(request))).value;
  });

  app.get('/api/status', async (request) => ({
    ...(await props.status.read()),
    /** For scripts: send it back as `x-csrf-token` with the actions. */
    csrfToken: auth.csrfToken(request),
  }));
}
