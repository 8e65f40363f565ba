import type { FastifyInstance } from 'fastify';
import { buildDashboardApp } from './app.js';
import type { DashboardDeps } from './deps.js';
import { dashboardUrl, type FrontServer } from './front-server.js';

export interface RunningDashboard {
  app: FastifyInstance;
  /** `http://127.0.0.1:3000`: where a browser reaches it. */
  url: string;
  close(): Promise<void>;
}

/**
 * Builds the dashboard and listens on `deps.host:port` (port 0 = any free port), or has `front`,
 * the worker's server listening since its start, serve it. What `worker` and `dashboard` call;
 * refuses to start beyond loopback without credentials (`DashboardConfigError`). Closing it
 * closes `front` too.
 */
export async function startDashboard(
  deps: DashboardDeps,
  where: number | FrontServer,
): Promise<RunningDashboard> {
  const app = buildDashboardApp(deps);
  let url: string;
  let close: () => Promise<void>;
  try {
    if (typeof where === 'number') {
      await app.listen({ host: deps.host, port: where });
      const address = app.server.address();
      url = dashboardUrl(deps.host, typeof address === 'object' && address ? address.port : where);
      close = () => app.close();
    } else {
      await where.serve(app);
      url = where.url;
      close = () => where.close();
    }
  } catch (error) {
    await app.close();
    throw error;
  }
  deps.logger.info(
    { url, auth: deps.credentials ? 'required' : 'none (loopback only)' },
    'dashboard listening',
  );
  return { app, url, close };
}
