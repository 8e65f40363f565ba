import type { FastifyInstance } from 'fastify';
import type { DashboardAuth } from './auth.js';
import { safeNext } from './next-path.js';
import { signInPage } from './views/sign-in-page.js';

/** `GET /login` (the form) and `POST /login`: public, slowed down per client address and user. */
export function registerAuthRoutes(app: FastifyInstance, auth: DashboardAuth): void {
  app.get('/login', async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next);
    if (!auth.enabled) return reply.redirect(next, 303);
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    return signInPage({ next, error: null }).value;
  });

  app.post('/login', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' ? v : '');
    await auth.signIn(request, reply, {
      user: text(body.user),
      password: text(body.password),
      next: safeNext(body.next),
    });
    return reply;
  });
}
