import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../logging/logger.js';

/**
 * The worker's HTTP server: it listens from the start and serves one Fastify app at a time, first
 * the starting app (the probes and a "starting" page: `buildStartingApp`), then the dashboard once
 * the state DB and Redis answered. `/healthz` answers all along, whatever the worker waits for.
 */
export interface FrontServer {
  /** `http://127.0.0.1:3000`: where a browser reaches it. */
  url: string;
  /** Serves `app` (made ready first) from now on; the app it served before is closed. */
  serve(app: FastifyInstance): Promise<void>;
  /** Stops listening and closes the app it serves. Idempotent. */
  close(): Promise<void>;
}

export interface FrontServerProps {
  host: string;
  /** 0: any free port. */
  port: number;
  /** The first app served (not listening: its `routing` is called). */
  app: FastifyInstance;
  logger: Logger;
}

/**
 * Listens on `host:port` and serves `props.app`. A port in use rejects with `EADDRINUSE`, as
 * Fastify's own `listen` does.
 *
 * @example
 * const front = await listenFront({ host: '127.0.0.1', port: 3000, app: buildStartingApp(props), logger });
 * await front.serve(buildDashboardApp(deps)); // once the dashboard's dependencies answer
 */
export async function listenFront(props: FrontServerProps): Promise<FrontServer> {
  let current = props.app;
  await current.ready();
  const server: Server = createServer((request, response) => current.routing(request, response));
  server.listen({ host: props.host, port: props.port });
  // Rejects on the server's `error` (a port in use) before `listening`.
  await once(server, 'listening').catch(async (error: unknown) => {
    await current.close();
    throw error;
  });
  server.on('error', (error) => props.logger.warn({ err: error.message }, 'dashboard server error'));
  const address = server.address();
  const url = dashboardUrl(props.host, typeof address === 'object' && address ? address.port : props.port);
  let closing: Promise<void> | undefined;
  return {
    url,
    async serve(app) {
      await app.ready();
      const previous = current;
      current = app;
      await previous.close();
    },
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive connections (a browser, a probe) would hold `close` up until they time out.
        server.closeAllConnections();
        await closed;
        await current.close();
      })();
      return closing;
    },
  };
}

/** Where a browser reaches a server listening on `host:port` (`0.0.0.0` and `::` via loopback). */
export function dashboardUrl(host: string, port: number): string {
  const shown = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return `http://${shown === '[::]' ? '[::1]' : shown}:${port}`;
}
