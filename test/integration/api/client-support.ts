import { Writable } from 'node:stream';
import type { TokenProvider } from '../../../src/api/auth/types.js';
import { ReceivablesClient, type ReceivablesClientProps } from '../../../src/api/client.js';
import type { RateInfo, RateLimiter } from '../../../src/api/rate-limit/types.js';
import { createLogger } from '../../../src/logging/logger.js';
import { PDF_BYTES, type TestSandbox } from '../../support/sandbox.js';

/** A token provider over fixed tokens: `invalidate` swaps to `next` (or refuses when there is none). */
export function testTokens(first: string, next?: string) {
  let current = first;
  const invalidated: string[] = [];
  const provider: TokenProvider = {
    getAccessToken: async () => current,
    invalidate: async (token) => {
      invalidated.push(token);
      if (next === undefined) throw new Error('no other token');
      current = next;
      return next;
    },
    budgetKey: () => 'test',
  };
  return { provider, invalidated };
}

/** A limiter that admits everything and remembers what it was told. */
export function recordingLimiter() {
  const observed: RateInfo[] = [];
  const limiter: RateLimiter = {
    acquire: async () => 0,
    observe: async (_key, info) => {
      observed.push(info);
    },
    close: async () => {},
  };
  return { limiter, observed };
}

export interface SentRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: Buffer | undefined;
  /** The status answered, or `error` when the connection failed. */
  status: number | 'error';
}

/** Wraps the real fetch and records every request with its body bytes and outcome. */
export function recordingFetch() {
  const sent: SentRequest[] = [];
  const recorded: typeof fetch = async (input, init) => {
    const body = init?.body;
    const entry: SentRequest = {
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      headers: new Headers(init?.headers),
      body:
        body === undefined || body === null
          ? undefined
          : typeof body === 'string'
            ? Buffer.from(body)
            : Buffer.from(body as Uint8Array),
      status: 'error',
    };
    sent.push(entry);
    const response = await fetch(input, init);
    entry.status = response.status;
    return response;
  };
  return { fetch: recorded, sent };
}

/** A pino logger writing into an array, at trace level, with the project's redaction. */
export function memoryLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level: 'trace', destination }), lines };
}

/**
 * A client against `sandbox` with recording doubles: backoff sleeps are recorded and resolve at
 * once (`onSleep` may change the sandbox's faults meanwhile), so tests never wait on timers.
 */
export function clientFor(
  sandbox: TestSandbox,
  overrides: Partial<ReceivablesClientProps> & { onSleep?: (ms: number) => Promise<void> | void } = {},
) {
  const { onSleep, ...props } = overrides;
  const tokens = testTokens(sandbox.accessToken);
  const limiter = recordingLimiter();
  const http = recordingFetch();
  const log = memoryLogger();
  const sleeps: number[] = [];
  const client = new ReceivablesClient({
    baseUrl: sandbox.baseUrl,
    tokens: tokens.provider,
    limiter: limiter.limiter,
    fetch: http.fetch,
    logger: log.logger,
    retry: { maxAttempts: 8, baseDelayMs: 10, maxDelayMs: 200 },
    sleep: async (ms) => {
      sleeps.push(ms);
      await onSleep?.(ms);
    },
    ...props,
  });
  return { client, tokens, limiter, sent: http.sent, logs: log.lines, sleeps };
}

export const address = { street: '1 rue de la Paix', city: 'Paris', postalCode: '75002', country: 'FR' };

export const pdf = (name: string) => ({ bytes: PDF_BYTES, filename: `${name}.pdf` });

/** An invoice creation input for `accountId`. */
export const invoiceInput = (accountId: string, n: number | string, sourceId?: string) => ({
  accountId,
  number: `INV-${n}`,
  issuedDate: { year: 2026, month: 1, day: 10 },
  dueDate: { year: 2026, month: 2, day: 9 },
  totalAmount: '120.00',
  taxAmount: '20.00',
  billingAddress: address,
  file: pdf(`INV-${n}`),
  sourceId,
});

/**
 * Closes a sandbox whose clients aborted requests (timeouts). After an abort, undici may open a
 * spare connection that never sends a request; Node does not count it as idle, so the sandbox's
 * `close()` would wait for it until the headers timeout. Reported to the sandbox owners.
 */
export async function closeAfterAborts(sandbox: TestSandbox): Promise<void> {
  const closing = sandbox.close();
  sandbox.app.server.closeAllConnections();
  await closing;
}
