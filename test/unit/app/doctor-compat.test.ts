import { describe, expect, it } from 'vitest';
import { budgetKeyOf, StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../../../src/api/client.js';
import { DEFAULT_API_COMPAT } from '../../../src/api/compat.js';
import { documentWriteCheck } from '../../../src/app/doctor-compat.js';
import { createLogger } from '../../../src/logging/logger.js';

/**
 * How `doctor` reads the answers to its probe of the document write (a random id, so nothing can
 * change): servers answer a missing route in their own words, so each framework's is here.
 */

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

/** A server answering the probe on a document path with `probe`, any other path with `other`. */
function server(
  probe: Answer,
  other: Answer = { status: 404, body: { code: 'NOT_FOUND', message: 'Not Found' } },
) {
  const seen: Array<{ method: string; url: string; body: string }> = [];
  const fetchImpl = (async (url: string, init: RequestInit) => {
    seen.push({ method: String(init.method), url, body: String(init.body) });
    const answer = /\/(invoices|credit-notes)\//.test(url) ? probe : other;
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
    return new Response(text, { status: answer.status, headers: answer.headers ?? {} });
  }) as typeof fetch;
  return { fetchImpl, seen };
}

/** The budget keys the client asked the rate limiter for, in order. */
type Acquired = string[];

/** The probe goes through the API client: its transport calls the server's fetch. */
const check = (fetchImpl: typeof fetch, compat = DEFAULT_API_COMPAT, acquired: Acquired = []) =>
  documentWriteCheck(
    new ReceivablesClient({
      baseUrl: 'https://x.test',
      tokens: new StaticTokenProvider({ accessToken: 't' }),
      // Admits every request at once (this server tells no RateLimit-Policy to learn from), noting each.
      limiter: {
        acquire: async (key) => {
          acquired.push(key);
          return 0;
        },
        observe: async () => {},
        close: async () => {},
      },
      logger: createLogger({ level: 'silent' }),
      fetch: fetchImpl,
      timeoutMs: 1000,
    }),
    compat,
  );

describe('doctor: the document write probe', () => {
  it('when a random id answers 404 for the document, then the route is confirmed for both kinds, with a body that changes nothing', async () => {
    const { fetchImpl, seen } = server({
      status: 404,
      body: { code: 'NOT_FOUND', message: 'Invoice not found' },
    });
    const result = await check(fetchImpl);
    expect(result.status).toBe('ok');
    expect(result.detail).toContain('PATCH /{kind}/{id} {paidAmount, dueDate}');
    const probes = seen.filter((s) => /invoices|credit-notes/.test(s.url));
    expect(probes.map((p) => p.method)).toEqual(['PATCH', 'PATCH']);
    expect(probes.map((p) => JSON.parse(p.body))).toEqual([{ paidAmount: '0' }, { paidAmount: '0' }]);
  });

  it.each<[string, Answer]>([
    [
      '405 with Allow',
      { status: 405, body: { message: 'Method Not Allowed' }, headers: { allow: 'GET, PUT' } },
    ],
    ['NestJS', { status: 404, body: { message: 'Cannot PATCH /api/public/v1/invoices/1', statusCode: 404 } }],
    ['Fastify', { status: 404, body: { message: 'Route PATCH:/api/public/v1/invoices/1 not found' } }],
    ['Express (HTML)', { status: 404, body: '<pre>Cannot PATCH /api/public/v1/invoices/1</pre>' }],
    // No words to go by: the same answer as a path no server serves.
    ['the catch-all answer', { status: 404, body: { code: 'NOT_FOUND', message: 'Not Found' } }],
  ])(
    'when the server has no such route (%s), then the check fails with the setting to change',
    async (_, answer) => {
      const result = await check(server(answer).fetchImpl);
      expect(result.status).toBe('fail');
      expect(result.detail).toContain('api.compat.documentPatch');
      if (answer.headers?.allow) expect(result.detail).toContain('allowed: GET, PUT');
    },
  );

  it('when the route refuses the body before looking the document up, then a warning points at the field names', async () => {
    const result = await check(
      server({ status: 400, body: { message: 'paidAmount is not a known field' } }).fetchImpl,
    );
    expect(result.status).toBe('warn');
    expect(result.detail).toMatch(/paidAmountField and dueDateField/);
  });

  it('when createPaid is set, then the check says it is assumed, not confirmed', async () => {
    const { fetchImpl } = server({ status: 404, body: { message: 'Invoice not found' } });
    const result = await check(fetchImpl, { ...DEFAULT_API_COMPAT, createPaid: true });
    expect(result.status).toBe('ok');
    expect(result.detail).toMatch(/createPaid: true \(assumed/);
  });

  it("when the probe runs, then each request waits for the token's rate budget and is sent once, even when refused with a retryable status", async () => {
    const { fetchImpl, seen } = server({ status: 503, body: { message: 'Service Unavailable' } });
    const acquired: Acquired = [];
    const result = await check(fetchImpl, DEFAULT_API_COMPAT, acquired);
    expect(result).toMatchObject({ status: 'warn', detail: expect.stringContaining('answered 503') });
    // The control path, then the first document path: the check stops at the first answer it cannot confirm.
    expect(seen).toHaveLength(2);
    expect(acquired).toEqual([budgetKeyOf('t'), budgetKeyOf('t')]);
  });

  it('when the server cannot be reached, then the check warns instead of failing (the api check says why)', async () => {
    const result = await check((async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch);
    expect(result).toMatchObject({ status: 'warn', detail: expect.stringContaining('could not be checked') });
  });
});
