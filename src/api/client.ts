import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../domain/clock.js';
import type { TokenProvider } from './auth/types.js';
import { type ApiCompat, DEFAULT_API_COMPAT } from './compat.js';
import { AccountsEndpoint } from './endpoints/accounts.js';
import { BalancesEndpoint } from './endpoints/balances.js';
import { CommunicationsEndpoint } from './endpoints/communications.js';
import {
  type CreditNotesEndpoint,
  creditNotesEndpoint,
  type InvoicesEndpoint,
  invoicesEndpoint,
} from './endpoints/documents.js';
import { OrganizationsEndpoint } from './endpoints/organizations.js';
import type { EndpointContext } from './endpoints/shared.js';
import { StatusEndpoint } from './endpoints/status.js';
import { TasksEndpoint } from './endpoints/tasks.js';
import { UsersEndpoint } from './endpoints/users.js';
import { FlowQueues } from './flow-queues.js';
import { timerSleep } from './rate-limit/sleep.js';
import type { RateLimiter } from './rate-limit/types.js';
import type { ApiResult, ProbeAnswer, RequestOptions, RequestStats, RetryNotice } from './requests.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
import { Transport } from './transport.js';

export interface ReceivablesClientProps {
  /** `{base_url}`; the client adds `/api/public/v1` itself. */
  baseUrl: string;
  tokens: TokenProvider;
  /** Shared budget per access token; the composition root owns it (and closes it). */
  limiter: RateLimiter;
  logger: Logger;
  /** Default: the built-in fetch (undici; keeps connections alive). */
  fetch?: typeof fetch | undefined;
  /** Default: the system clock. Used for Retry-After dates and timings in logs. */
  clock?: Clock | undefined;
  /** Uniform [0, 1) draws for the backoff jitter. Default: Math.random. */
  random?: (() => number) | undefined;
  /** Waits out a backoff; default: an abortable timer. Tests pass one that records and resolves. */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** Per attempt, headers and body included (default 30 s); an expiry is a retryable TimeoutError. */
  timeoutMs?: number | undefined;
  /**
   * HTTP requests in flight at most, per flow (default 8): each source's pass (`withFlow`) has its
   * own queue, so a backlog of one source never queues ahead of another's requests.
   */
  concurrency?: number | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  /** Generates the Idempotency-Key of a write when the caller gives none (default: randomUUID). */
  idempotencyKey?: (() => string) | undefined;
  userAgent?: string | undefined;
  /** The server's choices where the spec says "not shown" (`api.compat`); default: the contract's. */
  compat?: ApiCompat | undefined;
  /** Told of each retry, and of the end of a retried request (a progress line shows them). */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_USER_AGENT = 'receivables-sync/0.1.0';

/**
 * The typed client of the Receivables Public API: one group per resource, all going through one
 * request path (rate budget, timeout, token refresh on 401, retries with the same Idempotency-Key
 * and the same body bytes).
 *
 * @example
 * const client = new ReceivablesClient({ baseUrl, tokens, limiter, logger });
 * const account = await client.accounts.create({ organizationId, fullName: 'ACME', currencyCode: 'EUR', billingAddress });
 * const invoice = await client.invoices.create(input, { idempotencyKey: persistedKey });
 * for await (const doc of client.invoices.list({ organizationId, filters: invoiceFilters().where('status', 'is', 'Overdue') })) {}
 * console.log(client.stats); // { requests, rateLimited, retries, waitedMs }
 */
export class ReceivablesClient {
  readonly organizations: OrganizationsEndpoint;
  readonly users: UsersEndpoint;
  readonly accounts: AccountsEndpoint;
  readonly invoices: InvoicesEndpoint;
  readonly creditNotes: CreditNotesEndpoint;
  readonly balances: BalancesEndpoint;
  readonly communications: CommunicationsEndpoint;
  readonly tasks: TasksEndpoint;
  readonly status: StatusEndpoint;
  /** The server's choices this client follows where the spec says "not shown". */
  readonly compat: ApiCompat;
  readonly #transport: Transport;
  readonly #queues: FlowQueues;

  constructor(props: ReceivablesClientProps) {
    const logger = props.logger.child({ component: 'api-client' });
    this.#queues = new FlowQueues(props.concurrency ?? DEFAULT_CONCURRENCY);
    this.#transport = new Transport({
      baseUrl: props.baseUrl,
      tokens: props.tokens,
      limiter: props.limiter,
      fetch: props.fetch ?? globalThis.fetch,
      clock: props.clock ?? systemClock,
      random: props.random ?? Math.random,
      sleep: props.sleep ?? timerSleep,
      logger,
      timeoutMs: props.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      queues: this.#queues,
      retry: { ...DEFAULT_RETRY_POLICY, ...props.retry },
      idempotencyKey: props.idempotencyKey ?? randomUUID,
      userAgent: props.userAgent ?? DEFAULT_USER_AGENT,
      onRetry: props.onRetry,
    });
    const ctx: EndpointContext = { http: this.#transport, logger };
    this.organizations = new OrganizationsEndpoint(ctx);
    this.users = new UsersEndpoint(ctx);
    this.accounts = new AccountsEndpoint(ctx);
    const compat = props.compat ?? DEFAULT_API_COMPAT;
    this.compat = compat;
    this.invoices = invoicesEndpoint(ctx, compat);
    this.creditNotes = creditNotesEndpoint(ctx, compat);
    this.balances = new BalancesEndpoint(ctx);
    this.communications = new CommunicationsEndpoint(ctx);
    this.tasks = new TasksEndpoint(ctx);
    this.status = new StatusEndpoint(ctx);
  }

  /** Totals since construction: HTTP requests sent, 429s received, retries, ms waited. */
  get stats(): RequestStats {
    return { ...this.#transport.totals };
  }

  /** Any call through the same request path; resolves to the parsed body. */
  request<T>(options: RequestOptions): Promise<T> {
    return this.#transport.request<T>(options);
  }

  /** Answers received since construction, by HTTP status. */
  get responsesByStatus(): ReadonlyMap<number, number> {
    return this.#transport.responsesByStatus;
  }

  /** Like `request`, with the status, the replay flag, the key sent and the call's own stats. */
  send<T>(options: RequestOptions): Promise<ApiResult<T>> {
    return this.#transport.send<T>(options);
  }

  /**
   * One attempt, answered whatever its status: its status, headers and body, for a diagnosis
   * (`doctor`). It waits for the token's rate budget and counts against it like any request, but
   * is never retried, never refreshes the token on a 401, and throws only when no answer came
   * (see `Transport.probe`).
   *
   * @example
   * const answer = await client.probe({ method: 'GET', path: '/organizations' });
   * answer.headers.get('ratelimit-policy'); // '"public-api";q=300;w=60'
   */
  probe(options: RequestOptions): Promise<ProbeAnswer> {
    return this.#transport.probe(options);
  }

  /** Resolves once no request of any flow is queued or in flight. The limiter and token provider are the caller's to close. */
  async close(): Promise<void> {
    await this.#queues.onIdle();
  }
}
