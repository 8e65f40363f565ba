import type { FastifyInstance } from 'fastify';
import type { SandboxDeps } from '../context.js';
import { requires } from '../context.js';
import { ALL_SCOPES } from '../oauth/scopes.js';

/** GET /status (no authentication) and the MCP endpoint, which shares the API's rate-limit policy. */
export function registerStatusRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  app.get('/status', async () => ({ status: 'ok', time: deps.store.nowIso() }));
}

/**
 * `/mcp`: the spec only says it exists and shares the rate-limit policy; its tool catalogue is not
 * described, so the sandbox answers every JSON-RPC call with "method not found".
 */
export function registerMcpRoute(app: FastifyInstance): void {
  app.post('/mcp', requires(ALL_SCOPES), async (request) => {
    const body = request.body as { id?: unknown } | undefined;
    return {
      jsonrpc: '2.0',
      id: body?.id ?? null,
      error: { code: -32601, message: 'Method not found (sandbox)' },
    };
  });
}
