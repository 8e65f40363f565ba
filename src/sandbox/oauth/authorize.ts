import type { FastifyInstance } from 'fastify';
import type { SandboxDeps } from '../context.js';
import { baseUrlOf } from '../context.js';
import type { User } from '../model.js';
import { AUTHORIZE_PATH } from './discovery.js';
import { OAuthError, oauthParam, requiredParam } from './errors.js';
import { isLoopbackRedirectUri, redirectWith } from './redirect-uri.js';
import { ALL_SCOPES, isScope, type Scope } from './scopes.js';

/** RFC 7636 §4.2: a S256 challenge is 43 base64url characters; the grammar allows 43..128 unreserved. */
const CODE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;

type Params = Record<string, unknown>;

/**
 * GET /api/oauth/authorize. The sandbox has no login page: it consents at once for the first
 * seeded user (or the user named by `login_hint`) and redirects back with a code, so a local
 * client can run the whole Authorization Code + PKCE flow unattended.
 */
export function registerAuthorizeRoute(app: FastifyInstance, deps: SandboxDeps): void {
  app.get(AUTHORIZE_PATH, async (request, reply) => {
    const params = (request.query ?? {}) as Params;
    reply.header('Cache-Control', 'no-store');
    let client: ValidatedClient;
    try {
      client = checkClientAndRedirect(params, deps);
    } catch (error) {
      // Never redirect to a URI that was not validated: tell the user agent instead (RFC 6749 §4.1.2.1).
      if (error instanceof OAuthError) return reply.code(error.status).send(error.toJSON());
      throw error;
    }
    // Echoed on every redirect; a repeated state is refused by grantCode, and cannot be echoed.
    const state = typeof params.state === 'string' ? params.state : undefined;
    const iss = baseUrlOf(request);
    try {
      const code = grantCode(params, client, deps);
      return reply.redirect(redirectWith(client.redirectUri, { code, state, iss }), 302);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      const query = { error: error.error, error_description: error.description, state, iss };
      return reply.redirect(redirectWith(client.redirectUri, query), 302);
    }
  });
}

interface ValidatedClient {
  clientId: string;
  redirectUri: string;
}

/** The checks that decide whether errors may be sent to the redirect URI at all. */
function checkClientAndRedirect(params: Params, deps: SandboxDeps): ValidatedClient {
  const clientId = requiredParam(params, 'client_id');
  if (!deps.options.clientIds.includes(clientId)) {
    throw new OAuthError('invalid_client', `Unknown client_id ${clientId}`, 400);
  }
  const redirectUri = requiredParam(params, 'redirect_uri');
  if (!isLoopbackRedirectUri(redirectUri)) {
    throw new OAuthError(
      'invalid_request',
      'redirect_uri must be a loopback http URI (http://127.0.0.1:<port>/..., http://[::1]:<port>/... or http://localhost:<port>/...) without a fragment',
    );
  }
  return { clientId, redirectUri };
}

/** Validates the rest of the request and stores a single-use authorization code. */
function grantCode(params: Params, client: ValidatedClient, deps: SandboxDeps): string {
  oauthParam(params, 'state');
  const responseType = requiredParam(params, 'response_type');
  if (responseType !== 'code') {
    throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported');
  }
  const codeChallenge = requiredParam(params, 'code_challenge');
  checkChallengeMethod(oauthParam(params, 'code_challenge_method'));
  if (!CODE_CHALLENGE.test(codeChallenge)) {
    throw new OAuthError('invalid_request', 'code_challenge must be 43 to 128 base64url characters');
  }
  const scopes = requestedScopes(oauthParam(params, 'scope'));
  const user = consentingUser(oauthParam(params, 'login_hint'), deps);
  return deps.tokens.saveCode({
    ...client,
    userId: user.id,
    scopes,
    codeChallenge,
    expiresAt: deps.options.clock.now().getTime() + deps.options.authorizationCodeTtlSeconds * 1000,
  });
}

/** OAuth 2.1 requires PKCE; an absent method means `plain` (RFC 7636 §4.3), which is refused. */
function checkChallengeMethod(method: string | undefined): void {
  if (method !== 'S256') {
    throw new OAuthError('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
  }
}

/** Space-separated scopes, each from the catalogue; none requested = every scope. */
export function requestedScopes(scope: string | undefined): Scope[] {
  const names = (scope ?? '').split(' ').filter((s) => s !== '');
  if (names.length === 0) return [...ALL_SCOPES];
  const unknown = names.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new OAuthError('invalid_scope', `Unknown scope(s): ${unknown.join(', ')}`);
  return [...new Set(names)] as Scope[];
}

/** The user the sandbox consents for: the one named by `login_hint`, else the first seeded user. */
function consentingUser(loginHint: string | undefined, deps: SandboxDeps): User {
  if (loginHint !== undefined) {
    const user = deps.store.userByEmail(loginHint);
    if (!user) throw new OAuthError('invalid_request', `login_hint ${loginHint} is not a sandbox user`);
    if (!user.active) throw new OAuthError('access_denied', `User ${loginHint} is not active`);
    return user;
  }
  const first = deps.store.users.values().next().value;
  if (!first) throw new OAuthError('access_denied', 'The sandbox has no user to authorize');
  return first;
}
