import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import type { FaultInjector } from './faults.js';
import type { IdempotencyStore } from './idempotency.js';
import type { Scope } from './oauth/scopes.js';
import type { AccessGrant, TokenStore } from './oauth/token-store.js';
import type { SandboxOptions } from './options.js';
import type { SlidingWindowLimiter } from './rate-limiter.js';
import type { Actor, SandboxStore } from './store.js';

/** Every Public API path starts with this. */
export const API_PREFIX = '/api/public/v1';

/** What every route module of the sandbox is given. */
export interface SandboxDeps {
  store: SandboxStore;
  tokens: TokenStore;
  options: SandboxOptions;
  apiLimiter: SlidingWindowLimiter;
  tokenLimiter: SlidingWindowLimiter;
  idempotency: IdempotencyStore;
  faults: FaultInjector;
}

export interface AuthContext extends AccessGrant {
  token: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scopes of which the token needs any one; absent = no authentication (GET /status). */
    scopes?: readonly Scope[];
  }
  interface FastifyRequest {
    auth?: AuthContext;
    idempotencyScope?: string;
  }
}

/** `{base_url}` as the caller reached it. */
export const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/** Route options for an endpoint that accepts any one of `scopes`. */
export const requires = (scopes: readonly Scope[]) => ({ config: { scopes } });

/** The authenticated caller; routes with scopes always have one. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new ApiError(401, 'UNAUTHORIZED', 'Missing or invalid OAuth access token');
  return request.auth;
}

/** The audit actor of the caller: a user acting through an OAuth token. */
export function actorOf(request: FastifyRequest, deps: SandboxDeps): Actor {
  const auth = authOf(request);
  const user = deps.store.users.get(auth.userId);
  return { type: 'USER', id: auth.userId, name: user?.fullName ?? auth.userId };
}
