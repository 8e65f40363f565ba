import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxDeps } from '../context.js';
import { ApiError, sendApiError, tooManyRequests } from '../errors.js';
import { rateHeaders } from '../rate-limiter.js';
import { TOKEN_PATH } from './discovery.js';
import { OAuthError, requiredParam } from './errors.js';
import { type IssuedTokens, s256 } from './token-store.js';

/** RFC 7636 §4.1: 43..128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

type Params = Record<string, unknown>;

/**
 * POST /api/oauth/token: the authorization code (PKCE S256) and refresh token grants, for public
 * clients (no client secret). Registered in its own plugin so its errors keep OAuth's shape.
 */
export function registerTokenRoute(app: FastifyInstance, deps: SandboxDeps): void {
  app.register(async (scope) => {
    scope.setErrorHandler((error: FastifyError | ApiError | OAuthError, request, reply) =>
      sendTokenError(error, request, reply, deps),
    );
    scope.post(
      TOKEN_PATH,
      { onRequest: async (request, reply) => limitTokenRate(request, reply, deps) },
      async (request) => grant((request.body ?? {}) as Params, deps),
    );
  });
}

/**
 * Every call counts against the caller's IP budget, whatever the grant and outcome (spec: policy
 * `auth`, 10 per 60 s). Runs before body parsing so even unparsable requests carry the headers.
 */
async function limitTokenRate(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: SandboxDeps,
): Promise<void> {
  const nowMs = deps.options.clock.now().getTime();
  const decision = deps.tokenLimiter.take(request.ip, nowMs);
  reply.headers(rateHeaders('auth', deps.options.tokenRateLimit, decision, nowMs));
  reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
  if (!decision.allowed) throw tooManyRequests(decision.retryAfterSeconds);
}

function grant(params: Params, deps: SandboxDeps) {
  const grantType = requiredParam(params, 'grant_type');
  const clientId = requiredParam(params, 'client_id');
  if (!deps.options.clientIds.includes(clientId))
    throw new OAuthError('invalid_client', `Unknown client_id ${clientId}`);
  if (grantType === 'authorization_code') return tokenResponse(exchangeCode(params, clientId, deps));
  if (grantType === 'refresh_token') return tokenResponse(refresh(params, clientId, deps));
  throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
}

/** The code is taken (and so spent) before any other check: a code is good for one attempt. */
function exchangeCode(params: Params, clientId: string, deps: SandboxDeps): IssuedTokens {
  const code = requiredParam(params, 'code');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const verifier = requiredParam(params, 'code_verifier');
  if (!CODE_VERIFIER.test(verifier)) {
    throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 unreserved characters');
  }
  const saved = deps.tokens.takeCode(code);
  if (!saved)
    throw new OAuthError('invalid_grant', 'The authorization code is unknown, expired or already used');
  if (saved.clientId !== clientId)
    throw new OAuthError('invalid_grant', 'The code was issued to another client');
  if (saved.redirectUri !== redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the one of the authorization request');
  }
  if (s256(verifier) !== saved.codeChallenge) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
  }
  return deps.tokens.issue({ clientId, userId: saved.userId, scopes: saved.scopes });
}

/**
 * Refresh tokens rotate: each is good once. Presenting a spent one is taken as theft and revokes
 * every token of its family (OAuth 2.1 §4.3.1). A `scope` parameter is not honoured: the new tokens
 * keep the original grant's scopes, which the response's `scope` states (RFC 6749 §5.1).
 */
function refresh(params: Params, clientId: string, deps: SandboxDeps): IssuedTokens {
  const result = deps.tokens.rotate(requiredParam(params, 'refresh_token'), clientId);
  if (result === 'reused') {
    throw new OAuthError('invalid_grant', 'The refresh token was already used; its token family is revoked');
  }
  if (result === 'invalid')
    throw new OAuthError('invalid_grant', 'The refresh token is unknown, expired or revoked');
  return result;
}

const tokenResponse = (tokens: IssuedTokens) => ({
  access_token: tokens.accessToken,
  token_type: 'Bearer',
  expires_in: tokens.expiresIn,
  refresh_token: tokens.refreshToken,
  scope: tokens.scopes.join(' '),
});

/**
 * The 429 keeps the Public API's error body (code `HTTP_429`, as the spec shows for rate limits);
 * every other failure answers in OAuth's `{error, error_description}` shape.
 */
function sendTokenError(
  error: FastifyError | ApiError | OAuthError,
  request: FastifyRequest,
  reply: FastifyReply,
  deps: SandboxDeps,
) {
  if (error instanceof ApiError) return sendApiError(request, reply, error, deps.options.clock.now());
  const oauth =
    error instanceof OAuthError
      ? error
      : new OAuthError('invalid_request', `Unreadable token request: ${error.message}`);
  return reply.code(oauth.status).type('application/json').send(oauth.toJSON());
}
