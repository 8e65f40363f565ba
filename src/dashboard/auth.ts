import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../domain/error-codes.js';
import type { Logger } from '../logging/logger.js';
import { parseCookies, sessionCookie } from './cookies.js';
import {
  credentialsMatch,
  type DashboardCredentials,
  isLoopbackHost,
  parseBasicAuthorization,
} from './credentials.js';
import { type CsrfTokens, type Principal, submittedToken } from './csrf.js';
import { safeNext } from './next-path.js';
import type { SessionStore } from './sessions.js';
import type { SignInBackoff } from './sign-in-backoff.js';
import { refusalPage, signInPage } from './views/sign-in-page.js';

export const SESSION_COOKIE = 'rs_dashboard_session';
const REALM = 'Basic realm="receivables-sync dashboard", charset="UTF-8"';

export interface DashboardAuthProps {
  /** Undefined: no sign-in at all, and only loopback host names are answered. */
  credentials: DashboardCredentials | undefined;
  sessions: SessionStore;
  backoff: SignInBackoff;
  /** Holds an attempt for the back-off's delay (a timer; tests pass one that moves their clock). */
  wait: (ms: number) => Promise<void>;
  csrf: CsrfTokens;
  logger: Logger;
}

/** Whether the client asked for a page (a browser) rather than data. */
export const wantsHtml = (request: FastifyRequest): boolean =>
  (request.headers.accept ?? '').includes('text/html');

/**
 * Who may use the dashboard: HTTP Basic on every request, or a session cookie set by the sign-in
 * form; without configured credentials, anyone on this machine. Its hooks guard the routes of the
 * protected scope only (`/healthz`, `/readyz`, `/login` and `/assets` stay public).
 */
export class DashboardAuth {
  readonly #principals = new WeakMap<FastifyRequest, Principal>();

  constructor(private readonly props: DashboardAuthProps) {}

  get enabled(): boolean {
    return this.props.credentials !== undefined;
  }

  /** The principal of a request the `requireAuth` hook let through. */
  principal(request: FastifyRequest): Principal {
    const principal = this.#principals.get(request);
    if (!principal) throw new Error('principal() called on a route outside the protected scope');
    return principal;
  }

  csrfToken(request: FastifyRequest): string {
    return this.props.csrf.tokenFor(this.principal(request));
  }

  /** onRequest hook of the protected scope: 401 without valid credentials. */
  readonly requireAuth = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { credentials } = this.props;
    if (!credentials) {
      // No credentials means loopback only: refuse other Host names, so a DNS-rebinding page
      // (evil.example resolving to 127.0.0.1) cannot drive the dashboard from a local browser;
      // and behind a trusted proxy, the public name it forwards too (this machine only).
      const hosts = [request.headers.host, request.host];
      if (!hosts.every((host) => isLoopbackHost(hostnameOf(host)))) {
        await refuse(
          reply.code(403),
          request,
          'DASHBOARD_HOST_REFUSED',
          'This dashboard has no credentials and answers to loopback host names only.',
        );
        return;
      }
      this.#principals.set(request, { via: 'anonymous', user: null });
      return;
    }
    const basic = parseBasicAuthorization(request.headers.authorization);
    if (basic) {
      const outcome = await this.#check(request, credentials, basic.user, basic.password);
      if (outcome === 'ok') {
        this.#principals.set(request, { via: 'basic', user: basic.user });
        return;
      }
      if (outcome === 'wrong') {
        this.props.logger.warn({ ip: request.ip }, 'dashboard: wrong HTTP Basic credentials');
        await this.#unauthorized(request, reply, 'Wrong user or password.');
        return;
      }
      reply.header('retry-after', String(outcome.retryAfterSeconds));
      await refuse(
        reply.code(429),
        request,
        'DASHBOARD_SIGN_IN_THROTTLED',
        throttledMessage(outcome.retryAfterSeconds),
      );
      return;
    }
    const session = this.props.sessions.get(parseCookies(request.headers.cookie)[SESSION_COOKIE]);
    if (session) {
      this.#principals.set(request, { via: 'session', user: session.user, sessionId: session.id });
      return;
    }
    await this.#unauthorized(request, reply, null);
  };

  /** preHandler of every state-changing route: the synchronizer token must match the principal. */
  readonly requireCsrf = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (this.props.csrf.verify(this.principal(request), submittedToken(request))) return;
    this.props.logger.warn(
      { url: request.url, ip: request.ip },
      'dashboard: action refused, CSRF token missing or wrong',
    );
    await refuse(
      reply.code(403),
      request,
      'DASHBOARD_CSRF_REFUSED',
      'This action did not come from a page of this dashboard (its form token is missing or stale): reload the page and try again.',
    );
  };

  /** The sign-in form's POST: a session cookie (new id, against fixation) and a redirect. */
  async signIn(
    request: FastifyRequest,
    reply: FastifyReply,
    form: { user: string; password: string; next: string },
  ): Promise<void> {
    const { credentials } = this.props;
    if (!credentials) {
      await reply.redirect(form.next, 303);
      return;
    }
    const outcome = await this.#check(request, credentials, form.user, form.password);
    if (outcome !== 'ok') {
      let error = 'Wrong user or password.';
      if (outcome === 'wrong') {
        this.props.logger.warn({ ip: request.ip }, 'dashboard: failed sign-in');
        reply.code(401);
      } else {
        reply.code(429).header('retry-after', String(outcome.retryAfterSeconds));
        error = throttledMessage(outcome.retryAfterSeconds);
      }
      reply.type('text/html; charset=utf-8');
      await reply.send(signInPage({ next: form.next, error }).value);
      return;
    }
    const old = parseCookies(request.headers.cookie)[SESSION_COOKIE];
    if (old) this.props.sessions.delete(old);
    const session = this.props.sessions.create(form.user);
    this.props.logger.info({ user: form.user, ip: request.ip }, 'dashboard: signed in');
    reply.header('set-cookie', this.#cookie(request, session.id, this.props.sessions.ttlMs / 1000));
    await reply.redirect(form.next, 303);
  }

  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = this.principal(request);
    if (principal.via === 'session') this.props.sessions.delete(principal.sessionId);
    reply.header('set-cookie', this.#cookie(request, '', 0));
    await reply.redirect(this.enabled ? '/login' : '/', 303);
  }

  /**
   * A password check behind the back-off: held for its delay (at most `maxDelayMs`), then
   * checked, or turned away (429) when its address already has attempts queued that far ahead.
   * The address is `request.ip`: the client's, from `X-Forwarded-For`, when the proxy is trusted.
   */
  async #check(
    request: FastifyRequest,
    credentials: DashboardCredentials,
    user: string,
    password: string,
  ): Promise<'ok' | 'wrong' | { retryAfterSeconds: number }> {
    const attempt = this.props.backoff.begin(request.ip, user);
    if (attempt.refused) {
      this.props.logger.warn({ ip: request.ip }, 'dashboard: sign-in attempt refused, too many failures');
      return { retryAfterSeconds: attempt.retryAfterSeconds };
    }
    try {
      if (attempt.waitMs > 0) await this.props.wait(attempt.waitMs);
    } catch (error) {
      attempt.end(false);
      throw error;
    }
    const ok = credentialsMatch(credentials, user, password);
    attempt.end(ok);
    return ok ? 'ok' : 'wrong';
  }

  #cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
    // `protocol` is the browser's (X-Forwarded-Proto) when the TLS-terminating proxy is trusted:
    // without trustProxy a cookie set behind one would travel over plain HTTP too.
    return sessionCookie(SESSION_COOKIE, value, { maxAgeSeconds, secure: request.protocol === 'https' });
  }

  async #unauthorized(request: FastifyRequest, reply: FastifyReply, error: string | null): Promise<void> {
    reply.code(401).header('cache-control', 'no-store');
    if (wantsHtml(request)) {
      // No WWW-Authenticate for a browser: it would open its own dialog instead of this form.
      reply.type('text/html; charset=utf-8');
      await reply.send(signInPage({ next: safeNext(request.url), error }).value);
      return;
    }
    reply.header('www-authenticate', REALM);
    await reply.send({
      code: 'DASHBOARD_UNAUTHORIZED' satisfies ErrorCode,
      message: error ?? 'Sign in, or send HTTP Basic credentials.',
    });
  }
}

/** A refusal as a page for browsers, as `{code, message}` for the rest. */
export async function refuse(
  reply: FastifyReply,
  request: FastifyRequest,
  code: ErrorCode,
  message: string,
): Promise<void> {
  reply.header('cache-control', 'no-store');
  if (wantsHtml(request)) {
    reply.type('text/html; charset=utf-8');
    await reply.send(refusalPage('Refused', message).value);
  } else {
    await reply.send({ code, message });
  }
}

const throttledMessage = (seconds: number) =>
  `Too many failed sign-ins from this address: try again in ${seconds} s.`;

function hostnameOf(host: string | undefined): string {
  if (!host) return '';
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return '';
  }
}
