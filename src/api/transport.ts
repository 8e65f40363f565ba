import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { currentPassLog } from '../logging/pass-log.js';
import type { TokenProvider } from './auth/types.js';
import { NetworkError, ReceivablesError, TimeoutError } from './errors.js';
import type { FlowQueues } from './flow-queues.js';
import { type Prepared, prepareRequest } from './prepared-request.js';
import { parseRateInfo } from './rate-limit/headers.js';
import type { RateInfo, RateLimiter } from './rate-limit/types.js';
import type {
  ApiResult,
  HttpMethod,
  ProbeAnswer,
  Requester,
  RequestOptions,
  RequestStats,
  RetryNotice,
} from './requests.js';
import { type Answer, errorOfAnswer, successBody } from './response-body.js';
import { backoffDelay, isRetryable, type RetryPolicy } from './retry.js';

export interface TransportProps {
  baseUrl: string;
  tokens: TokenProvider;
  limiter: RateLimiter;
  fetch: typeof fetch;
  clock: Clock;
  /** Uniform [0, 1) draws for the backoff jitter. */
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  logger: Logger;
  timeoutMs: number;
  /**
   * Bounds the HTTP requests in flight, per flow (waits for the rate limiter happen inside a slot):
   * each request goes through the queue of the flow current when `send` was called (`withFlow`).
   */
  queues: FlowQueues;
  retry: RetryPolicy;
  idempotencyKey: () => string;
  userAgent: string;
  /** Told of each retry and of the end of a request that was retried (see `RetryNotice`). */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  token: string | undefined;
  rate: RateInfo;
}

const emptyStats = (): RequestStats => ({ requests: 0, rateLimited: 0, retries: 0, waitedMs: 0 });

/**
 * The single request path of the client: rate budget → fetch with a timeout → rate info observed
 * on every response → one token refresh on 401 → retries with full-jitter backoff (never shorter
 * than Retry-After) for retryable failures only → the API's error body as `ApiResponseError`, and
 * an answer the caller cannot use (a 2xx without what the contract gives, an error page that is not
 * the API's) as `UnexpectedResponseError` (`response-body.ts`).
 *
 * Keep-alive: Node's built-in fetch (undici) reuses connections through its global dispatcher by
 * default, so nothing is configured here; a request that lands on a socket the server just closed
 * fails as a NetworkError and is retried like any other.
 */
export class Transport implements Requester {
  readonly #props: TransportProps;
  readonly #log: Logger;
  readonly totals: RequestStats = emptyStats();
  /** Answers received since construction, by HTTP status (the metrics' `api_responses_total`). */
  readonly responsesByStatus = new Map<number, number>();

  constructor(props: TransportProps) {
    this.#props = props;
    this.#log = props.logger;
  }

  /** Sends `options` and returns the parsed body (undefined for an empty one). */
  async request<T>(options: RequestOptions): Promise<T> {
    return (await this.send<T>(options)).data;
  }

  async send<T>(options: RequestOptions): Promise<ApiResult<T>> {
    const prepared = prepareRequest(options, this.#props.baseUrl, this.#props.idempotencyKey);
    const { retry } = this.#props;
    const stats = emptyStats();
    let freshToken: string | undefined;
    let refreshed = false;
    let retried = false;
    const settle = (answered: boolean) => {
      if (retried) this.#tell({ type: 'settled', ...this.#where(prepared), answered });
    };
    for (let attempt = 1; ; attempt++) {
      let failure: ReceivablesError;
      try {
        const waitedBefore = stats.waitedMs;
        const raw = await this.#props.queues.add(prepared.flow, () =>
          this.#attempt(prepared, freshToken, stats),
        );
        // Told in the caller's context: the pass under way, if any, keeps it in its run's log.
        currentPassLog()?.rateLimitWait(stats.waitedMs - waitedBefore);
        freshToken = undefined;
        if (raw.status === 429) this.#count(stats, 'rateLimited', 1);
        if (raw.status < 400) {
          settle(true);
          return this.#success<T>(prepared, raw, stats);
        }
        if (raw.status === 401 && raw.token !== undefined && !refreshed) {
          refreshed = true;
          this.#log.debug({ method: prepared.method, path: prepared.path }, 'token refused, refreshing once');
          freshToken = await this.#props.tokens.invalidate(raw.token);
          this.#count(stats, 'retries', 1);
          continue;
        }
        failure = errorOfAnswer(answerOf(prepared, raw));
      } catch (error) {
        if (!(error instanceof ReceivablesError)) {
          settle(false);
          throw error;
        }
        failure = error;
      }
      if (!isRetryable(failure) || attempt >= retry.maxAttempts) {
        settle(failure.status !== undefined);
        throw failure;
      }
      const retryAfterSeconds = 'retryAfterSeconds' in failure ? failure.retryAfterSeconds : undefined;
      const retryAfterMs = typeof retryAfterSeconds === 'number' ? retryAfterSeconds * 1000 : undefined;
      const delayMs = backoffDelay({
        retry: attempt - 1,
        policy: retry,
        random: this.#props.random,
        retryAfterMs,
      });
      // With the pass's bindings (its runId) when a pass made the request: its run's log says it.
      (currentPassLog()?.logger ?? this.#log).info(
        {
          method: prepared.method,
          path: prepared.path,
          attempt,
          code: failure.code,
          status: failure.status,
          delayMs,
        },
        'request failed, retrying',
      );
      retried = true;
      this.#tell({
        type: 'retrying',
        ...this.#where(prepared),
        attempt,
        maxAttempts: retry.maxAttempts,
        code: failure.code,
        status: failure.status,
        delayMs,
      });
      await this.#props.sleep(delayMs, prepared.signal);
      this.#count(stats, 'waitedMs', delayMs);
      this.#count(stats, 'retries', 1);
    }
  }

  /**
   * One attempt of `options` through the same path as `send` (the flow's queue, the rate budget,
   * the timeout, the limiter told of the answer, counted in `totals`), answered whatever its
   * status: no retry, no token refresh on a 401, no error for a 4xx or 5xx. A network fault or a
   * timeout still throws (`NetworkError`, `TimeoutError`). For `doctor`, which reports what the
   * service answered instead of acting on it.
   */
  async probe(options: RequestOptions): Promise<ProbeAnswer> {
    const prepared = prepareRequest(options, this.#props.baseUrl, this.#props.idempotencyKey);
    const stats = emptyStats();
    const raw = await this.#props.queues.add(prepared.flow, () => this.#attempt(prepared, undefined, stats));
    if (raw.status === 429) this.#count(stats, 'rateLimited', 1);
    return { status: raw.status, headers: raw.headers, text: raw.text };
  }

  async #attempt(p: Prepared, freshToken: string | undefined, stats: RequestStats): Promise<RawResponse> {
    const token = p.authenticated ? (freshToken ?? (await this.#props.tokens.getAccessToken())) : undefined;
    const budget = token === undefined ? undefined : this.#props.tokens.budgetKey(token);
    if (budget !== undefined)
      this.#count(stats, 'waitedMs', await this.#props.limiter.acquire(budget, p.signal, p.flow));
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.#props.userAgent,
    };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (p.contentType !== undefined) headers['content-type'] = p.contentType;
    if (p.idempotencyKey !== undefined) headers['idempotency-key'] = p.idempotencyKey;
    const timeout = AbortSignal.timeout(this.#props.timeoutMs);
    const signal = p.signal ? AbortSignal.any([p.signal, timeout]) : timeout;
    const started = this.#props.clock.now().getTime();
    this.#count(stats, 'requests', 1);
    let raw: RawResponse;
    try {
      const response = await this.#props.fetch(p.url, { method: p.method, headers, body: p.body, signal });
      const rate: RateInfo = {
        ...parseRateInfo(response.status, response.headers, { now: this.#props.clock.now() }),
        elapsedMs: this.#props.clock.now().getTime() - started,
      };
      raw = { status: response.status, headers: response.headers, text: await response.text(), token, rate };
      this.responsesByStatus.set(raw.status, (this.responsesByStatus.get(raw.status) ?? 0) + 1);
    } catch (error) {
      if (p.signal?.aborted) throw p.signal.reason;
      const where = `${p.method} ${p.path}`;
      if (timeout.aborted) throw new TimeoutError(`${where}: no answer within ${this.#props.timeoutMs} ms`);
      throw new NetworkError(`${where}: ${describeNetworkError(error)}`, error);
    }
    this.#log.debug(
      {
        method: p.method,
        path: p.path,
        status: raw.status,
        ms: this.#props.clock.now().getTime() - started,
        idempotencyKey: p.idempotencyKey,
        replayed: raw.headers.get('idempotent-replay') === 'true' || undefined,
      },
      'api response',
    );
    if (budget !== undefined) await this.#observe(budget, raw);
    return raw;
  }

  async #observe(budget: string, raw: RawResponse): Promise<void> {
    try {
      await this.#props.limiter.observe(budget, raw.rate);
    } catch (error) {
      this.#log.warn({ err: error }, 'rate limiter could not record a response');
    }
  }

  #success<T>(p: Prepared, raw: RawResponse, stats: RequestStats): ApiResult<T> {
    const data = successBody(answerOf(p, raw), p.expect);
    return {
      status: raw.status,
      data: data as T,
      replayed: raw.headers.get('idempotent-replay') === 'true',
      idempotencyKey: p.idempotencyKey,
      stats,
    };
  }

  #where(p: Prepared): { baseUrl: string; method: HttpMethod; path: string } {
    return { baseUrl: this.#props.baseUrl, method: p.method, path: p.path };
  }

  /** A listener's fault never fails the request it is told about. */
  #tell(notice: RetryNotice): void {
    try {
      this.#props.onRetry?.(notice);
    } catch (error) {
      this.#log.warn({ err: error }, 'a retry listener failed');
    }
  }

  #count(stats: RequestStats, field: keyof RequestStats, amount: number): void {
    stats[field] += amount;
    this.totals[field] += amount;
  }
}

function answerOf(p: Prepared, raw: RawResponse): Answer {
  return {
    method: p.method,
    path: p.path,
    status: raw.status,
    headers: raw.headers,
    text: raw.text,
    retryAfterSeconds: raw.rate.retryAfterSeconds,
  };
}

/** undici reports "fetch failed" with the useful part (ECONNRESET, other side closed) in `cause`. */
function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = cause && 'code' in cause ? ` (${String(cause.code)})` : '';
  return cause ? `${error.message}: ${cause.message}${code}` : error.message;
}
