import type { FastifyInstance } from 'fastify';
import type { SandboxDeps } from '../context.js';
import { registerAuthorizeRoute } from './authorize.js';
import { registerDiscoveryRoutes } from './discovery.js';
import { registerTokenRoute } from './token-endpoint.js';

/** OAuth: discovery documents, the authorize endpoint and POST /api/oauth/token. */
export function registerOAuthRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  registerDiscoveryRoutes(app, deps);
  registerAuthorizeRoute(app, deps);
  registerTokenRoute(app, deps);
}
