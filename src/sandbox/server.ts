import type { FastifyInstance } from 'fastify';
import { buildSandboxApp, createSandboxDeps } from './app.js';
import type { SandboxDeps } from './context.js';
import { ALL_SCOPES } from './oauth/scopes.js';
import { type SandboxOverrides, sandboxOptions } from './options.js';
import { type Seeded, seedStore } from './store.js';

export interface RunningSandbox {
  app: FastifyInstance;
  deps: SandboxDeps;
  seeded: Seeded;
  baseUrl: string;
  organizationId: string;
  /** An access token of the seeded user with every scope, that never expires. */
  accessToken: string;
  adminToken: string;
  clientId: string;
  close(): Promise<void>;
}

/**
 * Starts a seeded sandbox listening on `host:port` (port 0 = any free port).
 *
 * @example
 * const sandbox = await startSandbox({ port: 0 });
 * await fetch(`${sandbox.baseUrl}/api/public/v1/organizations`, {
 *   headers: { authorization: `Bearer ${sandbox.accessToken}` },
 * });
 * await sandbox.close();
 */
export async function startSandbox(
  listen: { port?: number; host?: string } = {},
  overrides: SandboxOverrides = {},
): Promise<RunningSandbox> {
  const options = sandboxOptions(overrides);
  const deps = createSandboxDeps(options);
  const seeded = seedStore(deps.store, options.organizationId);
  const clientId = options.clientIds[0]!;
  const accessToken = deps.tokens.mintStatic(
    { clientId, userId: seeded.user.id, scopes: [...ALL_SCOPES] },
    options.accessToken,
  );
  const app = buildSandboxApp(deps);
  const host = listen.host ?? '127.0.0.1';
  await app.listen({ port: listen.port ?? 0, host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : listen.port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    app,
    deps,
    seeded,
    baseUrl: `http://${shownHost}:${port}`,
    organizationId: seeded.organization.id,
    accessToken,
    adminToken: options.adminToken!,
    clientId,
    close: () => app.close(),
  };
}
