import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** Who a request acts as: a signed-in session, HTTP Basic, or nobody (no credentials, loopback). */
export type Principal =
  | { via: 'session'; user: string; sessionId: string }
  | { via: 'basic'; user: string }
  | { via: 'anonymous'; user: null };

/**
 * Synchronizer tokens without server state: HMAC(secret, session id) for a signed-in browser,
 * HMAC(secret, "basic:" + user) for HTTP Basic. The secret is random per process, so a token is
 * useless to another origin (it cannot read our pages) and after a restart.
 */
export class CsrfTokens {
  constructor(private readonly secret: Buffer) {}

  tokenFor(principal: Principal): string {
    const subject =
      principal.via === 'session'
        ? `session:${principal.sessionId}`
        : principal.via === 'basic'
          ? `basic:${principal.user}`
          : 'anonymous';
    return createHmac('sha256', this.secret).update(subject).digest('base64url');
  }

  verify(principal: Principal, token: unknown): boolean {
    if (typeof token !== 'string' || token.length === 0) return false;
    const expected = Buffer.from(this.tokenFor(principal));
    const given = Buffer.from(token);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** The token of a state-changing request: the `_csrf` form field, else the `x-csrf-token` header. */
export function submittedToken(request: FastifyRequest): unknown {
  const body = request.body as Record<string, unknown> | undefined;
  return body && typeof body === 'object' && '_csrf' in body ? body._csrf : request.headers['x-csrf-token'];
}

/**
 * A browser always sends `Origin` on a cross-site POST; when present (or `Referer`, when it is
 * not), it must be this very origin. Requests with neither come from non-browser clients, which
 * still need credentials and a token.
 *
 * "This origin" is the one the browser sees: `request.protocol` and `request.host`, which Fastify
 * takes from `X-Forwarded-Proto` / `X-Forwarded-Host` only when the connecting peer is a trusted
 * proxy (`dashboard.trustProxy`); otherwise they are the connection's and the `Host` header, and
 * forged forwarded headers change nothing. Both sides are compared as parsed origins, so
 * `https://x:443` and `https://x` are the same.
 */
export function sameOrigin(request: FastifyRequest): boolean {
  const claimed = request.headers.origin || refererOrigin(request.headers.referer);
  if (claimed === undefined) return true;
  const own = originOf(`${request.protocol}://${request.host}`);
  return own !== undefined && own !== 'null' && originOf(claimed) === own;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  return originOf(referer) ?? 'invalid';
}
