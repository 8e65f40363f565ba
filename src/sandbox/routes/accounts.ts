import type { FastifyInstance } from 'fastify';
import type { SandboxDeps } from '../context.js';

/** Not implemented yet. */
export function registerAccountRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  void app;
  void deps;
}
