import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_PREFIX, baseUrlOf, type SandboxDeps } from '../context.js';
import type { SandboxCompat } from '../options.js';
import { ALL_SCOPES } from './scopes.js';

export const AUTHORIZE_PATH = '/api/oauth/authorize';
export const TOKEN_PATH = '/api/oauth/token';

/** RFC 9728 protected resource metadata of the Public API (`resource`: see `compat.protectedResource`). */
export const protectedResourceMetadata = (
  base: string,
  form: SandboxCompat['protectedResource'] = 'api',
) => ({
  resource: form === 'api' ? `${base}${API_PREFIX}` : base,
  authorization_servers: [base],
  scopes_supported: [...ALL_SCOPES],
  bearer_methods_supported: ['header'],
  resource_name: 'Receivables Public API (sandbox)',
});

/** RFC 8414 authorization server metadata: public clients with PKCE S256 only (OAuth 2.1). */
export const authorizationServerMetadata = (base: string) => ({
  issuer: base,
  authorization_endpoint: `${base}${AUTHORIZE_PATH}`,
  token_endpoint: `${base}${TOKEN_PATH}`,
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['none'],
  scopes_supported: [...ALL_SCOPES],
  authorization_response_iss_parameter_supported: true,
});

/**
 * The discovery documents. The protected resource metadata is also served at the RFC 9728 §3.1
 * path-suffixed address of the `/api/public/v1` resource, for clients that derive it themselves.
 */
export function registerDiscoveryRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const resource = async (request: FastifyRequest) =>
    protectedResourceMetadata(baseUrlOf(request), deps.options.compat.protectedResource);
  app.get('/.well-known/oauth-protected-resource', resource);
  app.get(`/.well-known/oauth-protected-resource${API_PREFIX}`, resource);
  app.get('/.well-known/oauth-authorization-server', async (request) =>
    authorizationServerMetadata(baseUrlOf(request)),
  );
}
