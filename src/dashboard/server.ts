import type { FastifyInstance } from 'fastify';
import { buildDashboardApp } from './app.js';
import type { DashboardDeps } from './deps.js';

export interface RunningDashboard {
  app: FastifyInstance;
  /** `http://127.0.0.1:3000`: where a browser reaches it. */
  url: string;
  close(): Promise<void>;
}

/**
 * Builds the dashboard and listens on `deps.host:port` (port 0 = any free port). What `worker` and
 * `dashboard` call; refuses to start beyond loopback without credentials (`DashboardConfigError`).
 */
export async function startDashboard(deps: DashboardDeps, port: number): Promise<RunningDashboard> {
  const app = buildDashboardApp(deps);
  try {
    await app.listen({ host: deps.host, port });
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const host = deps.host.includes(':') ? `[${deps.host}]` : deps.host === '0.0.0.0' ? '127.0.0.1' : deps.host;
  const url = `http://${host === '[::]' ? '[::1]' : host}:${bound}`;
  deps.logger.info(
    { url, auth: deps.credentials ? 'required' : 'none (loopback only)' },
    'dashboard listening',
  );
  return { app, url, close: () => app.close() };
}
