import type { FastifyInstance } from 'fastify';
import type { SandboxDeps } from '../context.js';
import { registerDocumentCreateRoutes } from './document-create.js';
import { registerDocumentListRoutes } from './document-list.js';
import { registerDocumentPatchRoutes } from './document-patch.js';
import { registerDocumentUpsertRoutes } from './document-upsert.js';

/** Invoices and credit notes, registered under /api/public/v1. */
export function registerDocumentRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  registerDocumentCreateRoutes(app, deps);
  registerDocumentListRoutes(app, deps);
  registerDocumentPatchRoutes(app, deps);
  registerDocumentUpsertRoutes(app, deps);
}
