import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { API_PREFIX, baseUrlOf, type SandboxDeps } from './context.js';
import { ApiError, sendApiError, tooManyRequests } from './errors.js';
import { FaultInjector } from './faults.js';
import { bodyFingerprint, IdempotencyStore, WRITE_METHODS } from './idempotency.js';
import { TokenStore } from './oauth/token-store.js';
import { type SandboxOptions, sandboxOptions } from './options.js';
import { policyHeader, rateHeaders, SlidingWindowLimiter } from './rate-limiter.js';
import { MANAGED_ACTION_FORBIDDEN } from './resources/guards.js';
import { registerRoutes } from './routes/index.js';
import { SandboxStore } from './store.js';

/** Largest upload the sandbox parses at all; per-route limits (2 MB images) are checked by the routes. */
const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** Builds the dependencies of a sandbox from its options. */
export function createSandboxDeps(options: SandboxOptions = sandboxOptions()): SandboxDeps {
  return {
    options,
    store: new SandboxStore(options.clock),
    tokens: new TokenStore(options.clock, {
      accessSeconds: options.accessTokenTtlSeconds,
      refreshSeconds: options.refreshTokenTtlSeconds,
      codeSeconds: options.authorizationCodeTtlSeconds,
    }),
    apiLimiter: new SlidingWindowLimiter(options.rateLimit),
    tokenLimiter: new SlidingWindowLimiter(options.tokenRateLimit),
    idempotency: new IdempotencyStore(options.idempotencyRetentionSeconds * 1000),
    faults: new FaultInjector(options.faults, options.random),
  };
}

const isApiPath = (url: string) =>
  url.startsWith(`${API_PREFIX}/`) || url === '/mcp' || url.startsWith('/mcp?');

/**
 * The sandbox's Fastify app, not listening (tests use `inject` or `listen({ port: 0 })`).
 * Order of checks on an API request: authentication (401), rate limit (429), injected faults,
 * scope (403), idempotency (400/409/422/503), then the route.
 */
export function buildSandboxApp(deps: SandboxDeps): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_UPLOAD_BYTES,
    trustProxy: false,
    forceCloseConnections: true,
  });
  const now = () => deps.options.clock.now();

  app.register(formbody);
  app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 100 },
  });

  app.addHook('onRequest', async (request, reply) => {
    if (!isApiPath(request.url)) return;
    reply.header('RateLimit-Policy', policyHeader('public-api', deps.options.rateLimit));
    const scopes = request.routeOptions.config.scopes;
    if (request.url.startsWith(`${API_PREFIX}/status`)) return;
    authenticate(request, reply, deps);
    limitRate(request, reply, deps);
    const injected = deps.faults.injectedError();
    if (injected !== undefined) throw new ApiError(injected, `HTTP_${injected}`, 'Injected fault (sandbox)');
    if (scopes && !scopes.some((s) => request.auth!.scopes.includes(s))) {
      throw new ApiError(
        403,
        'FORBIDDEN',
        `Insufficient scope: this endpoint needs one of ${scopes.join(', ')}`,
      );
    }
  });

  app.addHook('preHandler', async (request, reply) => {
    await checkIdempotency(request, reply);
    if (reply.sent) return reply;
    // Injected latency models a slow execution: it runs while an idempotency key is `running`.
    const latency = deps.faults.config.latencyMs;
    if (latency > 0 && isApiPath(request.url) && !reply.sent)
      await new Promise((r) => setTimeout(r, latency));
  });

  const checkIdempotency = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key'];
    if (key === undefined || !WRITE_METHODS.has(request.method) || !request.auth) return;
    const value = Array.isArray(key) ? key.join(',') : key;
    if (value.length < 1 || value.length > 255) {
      throw new ApiError(400, 'IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be 1 to 255 characters');
    }
    if (!deps.idempotency.available || deps.faults.config.idempotencyStoreDown) {
      throw new ApiError(
        503,
        'IDEMPOTENCY_STORE_UNAVAILABLE',
        'Idempotency store unreachable; nothing was executed',
      );
    }
    const path = request.url.split('?')[0]!;
    const scope = IdempotencyStore.scope(request.auth.clientId, request.method, path, value);
    const found = deps.idempotency.begin(scope, bodyFingerprint(request.body ?? null), now().getTime());
    if (found.kind === 'running') {
      throw new ApiError(
        409,
        'IDEMPOTENCY_REQUEST_IN_PROGRESS',
        'A request with this Idempotency-Key is running',
        {
          headers: { 'Retry-After': '1' },
        },
      );
    }
    if (found.kind === 'mismatch') {
      throw new ApiError(
        422,
        'IDEMPOTENCY_KEY_REUSED',
        'Idempotency-Key already used with a different request',
      );
    }
    if (found.kind === 'replay') {
      reply.header('Idempotent-Replay', 'true');
      if (found.contentType) reply.type(found.contentType);
      return reply.code(found.status).send(found.payload || undefined);
    }
    request.idempotencyScope = scope;
  };

  app.addHook('onSend', async (request, reply, payload) => {
    const scope = request.idempotencyScope;
    if (scope) {
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
      const type = reply.getHeader('content-type');
      deps.idempotency.finish(
        scope,
        reply.statusCode,
        body,
        type ? String(type) : undefined,
        now().getTime(),
      );
      request.idempotencyScope = undefined;
    }
    const committedWrite =
      WRITE_METHODS.has(request.method) && reply.statusCode < 400 && isApiPath(request.url);
    if (committedWrite && deps.faults.dropAfterCommit()) request.raw.socket?.destroy();
    return payload;
  });

  app.addHook('onResponse', async (request) => {
    if (request.idempotencyScope) deps.idempotency.release(request.idempotencyScope);
  });
  app.addHook('onRequestAbort', async (request) => {
    if (request.idempotencyScope) deps.idempotency.release(request.idempotencyScope);
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    let apiError = toApiError(error);
    // compat.managedActionStatus: the status a server chose for a code whose status the spec does not show.
    // compat.duplicateSourceStatus: the same for a duplicate sourceId or an already linked source.
    const { managedActionStatus, duplicateSourceStatus } = deps.options.compat;
    const wanted =
      apiError.code === MANAGED_ACTION_FORBIDDEN
        ? managedActionStatus
        : /(duplicate-source(-id)?|source-already-linked)$/.test(apiError.code)
          ? duplicateSourceStatus
          : apiError.status;
    if (wanted !== apiError.status) {
      apiError = new ApiError(wanted, apiError.code, apiError.message, {
        ...(apiError.resolution ? { resolution: apiError.resolution } : {}),
        headers: apiError.headers,
      });
    }
    return sendApiError(request, reply, apiError, now());
  });
  app.setNotFoundHandler((request, reply) =>
    sendApiError(
      request,
      reply,
      new ApiError(404, 'NOT_FOUND', `Route ${request.method} ${request.url} not found`),
      now(),
    ),
  );

  registerRoutes(app, deps);
  return app;
}

function authenticate(request: FastifyRequest, reply: FastifyReply, deps: SandboxDeps): void {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const grant = match ? deps.tokens.verifyAccess(match[1]!) : undefined;
  if (!match || !grant) {
    reply.header(
      'WWW-Authenticate',
      `Bearer resource_metadata="${baseUrlOf(request)}/.well-known/oauth-protected-resource"`,
    );
    throw new ApiError(401, 'UNAUTHORIZED', 'Missing or invalid OAuth access token');
  }
  request.auth = { ...grant, token: match[1]! };
}

function limitRate(request: FastifyRequest, reply: FastifyReply, deps: SandboxDeps): void {
  const nowMs = deps.options.clock.now().getTime();
  const forced = deps.faults.forced429();
  const decision =
    forced === undefined
      ? deps.apiLimiter.take(request.auth!.token, nowMs)
      : { allowed: false, remaining: 0, resetSeconds: forced, retryAfterSeconds: forced };
  reply.headers(rateHeaders('public-api', deps.options.rateLimit, decision, nowMs));
  if (!decision.allowed) throw tooManyRequests(decision.retryAfterSeconds);
}

function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
  if (status === 500) return new ApiError(500, 'INTERNAL_ERROR', 'Internal error');
  return new ApiError(status, error.code ?? `HTTP_${status}`, error.message);
}
