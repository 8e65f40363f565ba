import { describe, expect, it } from 'vitest';
import type { TokenProvider } from '../../../src/api/auth/types.js';
import { ReceivablesClient, type ReceivablesClientProps } from '../../../src/api/client.js';
import { NetworkError, ReceivablesError, UnexpectedResponseError } from '../../../src/api/errors.js';
import type { RateInfo } from '../../../src/api/rate-limit/types.js';
import type { RetryNotice } from '../../../src/api/requests.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { createLogger } from '../../../src/logging/logger.js';

const tokens: TokenProvider = {
  getAccessToken: async () => 'tok',
  invalidate: async () => {
    throw new Error('no refresh');
  },
  budgetKey: () => 'budget-1',
};

/** A client over a scripted fetch: each call takes the next answer (a Response or an error to throw). */
function scripted(answers: (Response | Error)[], props: Partial<ReceivablesClientProps> = {}) {
  const calls: { url: string; init: RequestInit }[] = [];
  const observed: RateInfo[] = [];
  const acquired: string[] = [];
  const sleeps: number[] = [];
  const client = new ReceivablesClient({
    baseUrl: 'http://api.test/',
    tokens,
    limiter: {
      acquire: async (key) => {
        acquired.push(key);
        return 5;
      },
      observe: async (_key, info) => {
        observed.push(info);
      },
      close: async () => {},
    },
    logger: createLogger({ level: 'silent' }),
    clock: new ManualClock(),
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 },
    fetch: async (url, init) => {
      calls.push({ url: String(url), init: init ?? {} });
      const next = answers.shift();
      if (!next) throw new Error('no more answers');
      if (next instanceof Error) throw next;
      return next;
    },
    ...props,
  });
  return { client, calls, observed, acquired, sleeps };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers });

describe('the request path', () => {
  it('when the connection fails, then it is retried with backoff and the stats count it', async () => {
    const failed = new TypeError('fetch failed', {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    });
    const { client, calls, sleeps } = scripted([failed, json(200, { id: 'o1' })]);
    expect(await client.organizations.get('o1')).toEqual({ id: 'o1' });
    expect(calls).toHaveLength(2);
    expect(sleeps).toEqual([50]); // 0.5 * min(1000, 100 * 2^0)
    expect(client.stats).toEqual({ requests: 2, rateLimited: 0, retries: 1, waitedMs: 5 + 50 + 5 });
  });

  it('when every attempt fails on the network, then the NetworkError names the cause', async () => {
    const failed = () => new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
    const { client } = scripted([failed(), failed(), failed(), failed()]);
    const error = await client.organizations.get('o1').catch((e) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toBe('GET /api/public/v1/organizations/o1: fetch failed: ECONNRESET');
  });

  it('when a request is retried, then onRetry is told before each wait, and once it settles; a first answer tells nothing', async () => {
    const notices: RetryNotice[] = [];
    const failed = () => new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') });
    const { client } = scripted(
      [failed(), json(503, { code: 'HTTP_503', message: 'down' }), json(200, { id: 'o1' })],
      {
        onRetry: (notice) => notices.push(notice),
      },
    );
    await client.organizations.get('o1');
    const where = { baseUrl: 'http://api.test/', method: 'GET', path: '/api/public/v1/organizations/o1' };
    expect(notices).toEqual([
      {
        type: 'retrying',
        ...where,
        attempt: 1,
        maxAttempts: 4,
        code: 'NETWORK_ERROR',
        status: undefined,
        delayMs: 50,
      },
      { type: 'retrying', ...where, attempt: 2, maxAttempts: 4, code: 'HTTP_503', status: 503, delayMs: 100 },
      { type: 'settled', ...where, answered: true },
    ]);
    notices.length = 0;
    await scripted([json(200, { id: 'o1' })], {
      onRetry: (notice) => notices.push(notice),
    }).client.organizations.get('o1');
    expect(notices).toEqual([]);
    // Every attempt failed: the last word is that it settled without an answer.
    const down = scripted([failed(), failed(), failed(), failed()], {
      onRetry: (notice) => notices.push(notice),
    });
    await expect(down.client.organizations.get('o1')).rejects.toBeInstanceOf(NetworkError);
    expect(notices.map((n) => (n.type === 'retrying' ? n.attempt : n.answered))).toEqual([1, 2, 3, false]);
  });

  it('when the caller aborts, then the abort reason is thrown and nothing is retried', async () => {
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    const abortError = new DOMException('aborted', 'AbortError');
    const { client, calls } = scripted([abortError, json(200, {})]);
    await expect(client.organizations.get('o1', { signal: controller.signal })).rejects.toThrow(
      'shutting down',
    );
    expect(calls).toHaveLength(1);
  });

  it('when any response arrives, then the limiter observes it under the token budget key', async () => {
    const { client, observed, acquired } = scripted([
      json(500, { code: 'HTTP_500', message: 'boom' }, { 'RateLimit-Policy': '"public-api";q=300;w=60' }),
      json(
        200,
        { id: 'o1' },
        { 'RateLimit-Policy': '"public-api";q=300;w=60', RateLimit: '"public-api";r=298;t=60' },
      ),
    ]);
    await client.organizations.get('o1');
    expect(acquired).toEqual(['budget-1', 'budget-1']);
    expect(observed.map((i) => [i.status, i.policy?.quota, i.remaining])).toEqual([
      [500, 300, undefined],
      [200, 300, 298],
    ]);
  });

  it('when a write is sent, then JSON is serialised once and the key is generated once per call', async () => {
    let n = 0;
    const { client, calls } = scripted([json(503, {}), json(201, { id: 'a1' }), json(201, { id: 'a2' })], {
      idempotencyKey: () => `key-${++n}`,
    });
    const input = {
      organizationId: 'o',
      fullName: 'A',
      currencyCode: 'EUR',
      billingAddress: { street: null, city: null, postalCode: null, country: null },
    };
    await client.accounts.create(input);
    await client.accounts.create(input);
    const keys = calls.map((c) => new Headers(c.init.headers).get('idempotency-key'));
    expect(keys).toEqual(['key-1', 'key-1', 'key-2']);
    expect(calls[0]!.init.body).toBe(calls[1]!.init.body);
    expect(new Headers(calls[0]!.init.headers).get('content-type')).toBe('application/json');
  });

  it('when the caller gives an Idempotency-Key out of 1..255 characters, then nothing is sent', async () => {
    const { client, calls } = scripted([]);
    const error = await client.accounts.delete('a1', { idempotencyKey: 'k'.repeat(256) }).catch((e) => e);
    expect(error).toBeInstanceOf(ReceivablesError);
    expect(error.code).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(calls).toHaveLength(0);
  });

  it('when a 2xx body is not JSON, then it is retried, then RESPONSE_INVALID names the status, type and excerpt', async () => {
    const page = () =>
      new Response('<html><body><h1>Welcome</h1>\n<p>Sign in</p></body></html>', {
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
      });
    const { client, calls } = scripted([page(), page(), page(), page()]);
    const error = await client.organizations.get('o1').catch((e) => e);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'RESPONSE_INVALID', kind: 'infrastructure', retryable: true });
    expect(error.message).toBe(
      'GET /api/public/v1/organizations/o1 answered 200 (text/html) with a body that is not JSON: Welcome Sign in',
    );
    expect(calls).toHaveLength(4);
  });

  it('when a create answers {} and then its replay, then the retry carries the same key and bytes and the id is used', async () => {
    const { client, calls } = scripted([
      json(201, {}),
      new Response('', { status: 201 }),
      json(201, { id: 'a1', source: null }, { 'Idempotent-Replay': 'true' }),
    ]);
    const input = {
      organizationId: 'o',
      fullName: 'A',
      currencyCode: 'EUR',
      billingAddress: { street: null, city: null, postalCode: null, country: null },
    };
    expect(await client.accounts.create(input, { idempotencyKey: 'key-1' })).toEqual({
      id: 'a1',
      source: null,
    });
    const keys = calls.map((c) => new Headers(c.init.headers).get('idempotency-key'));
    expect(keys).toEqual(['key-1', 'key-1', 'key-1']);
    expect(new Set(calls.map((c) => c.init.body)).size).toBe(1);
    expect(client.stats.retries).toBe(2);
  });

  it('when a delete answers 204, then an empty body is fine (nothing is expected of it)', async () => {
    const { client } = scripted([new Response(null, { status: 204 })]);
    await expect(client.accounts.delete('a1')).resolves.toBeUndefined();
  });

  it('when query values are arrays or empty, then arrays repeat and empties are left out', async () => {
    const { client, calls } = scripted([json(200, { items: [] })]);
    await client.organizations.audit('o 1', { actorTypes: ['USER', 'AGENT'], search: '', page: 2 });
    const url = new URL(calls[0]!.url);
    expect(url.pathname).toBe('/api/public/v1/organizations/o%201/audit');
    expect(url.searchParams.getAll('actorTypes')).toEqual(['USER', 'AGENT']);
    expect(url.searchParams.has('search')).toBe(false);
    expect(url.searchParams.get('page')).toBe('2');
  });
});
