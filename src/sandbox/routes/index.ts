import type { FastifyInstance } from 'fastify';
import { API_PREFIX, type SandboxDeps } from '../context.js';
import { registerOAuthRoutes } from '../oauth/routes.js';
import { registerAccountRoutes } from './accounts.js';
import { registerAdminRoutes } from './admin.js';
import { registerBalanceRoutes } from './balances.js';
import { registerCommunicationRoutes } from './communications.js';
import { registerDocumentRoutes } from './documents.js';
import { registerOrganizationRoutes } from './organizations.js';
import { registerMcpRoute, registerStatusRoutes } from './status.js';
import { registerUserRoutes } from './users.js';

export function registerRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  registerOAuthRoutes(app, deps);
  registerAdminRoutes(app, deps);
  registerMcpRoute(app);
  app.register(
    async (api) => {
      registerStatusRoutes(api, deps);
      registerOrganizationRoutes(api, deps);
      registerUserRoutes(api, deps);
      registerAccountRoutes(api, deps);
      registerDocumentRoutes(api, deps);
      registerBalanceRoutes(api, deps);
      registerCommunicationRoutes(api, deps);
    },
    { prefix: API_PREFIX },
  );
}
