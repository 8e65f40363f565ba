import type { MultipartField } from './multipart.js';
import type { ResponseShape } from './response-shapes.js';

/*
 * One request to the Public API as its callers see it: what they ask for (`RequestOptions`), what
 * comes back (`ApiResult`, `ProbeAnswer`), what it cost (`RequestStats`) and what is told while it
 * is retried (`RetryNotice`). The endpoint groups depend on the `Requester` port here, not on the
 * transport that implements it (`transport.ts`).
 */

/** Every Public API path starts with this. */
export const API_PREFIX = '/api/public/v1';

/** `{base_url}/api/public/v1`, the Public API's resource identifier. */
export const apiBaseOf = (baseUrl: string) => `${baseUrl.replace(/\/+$/, '')}${API_PREFIX}`;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | readonly string[] | { toString(): string } | undefined;

/** A request body: JSON (serialised once) or multipart form fields (encoded once). */
export type RequestBody = { json: unknown } | { multipart: readonly MultipartField[] };

/** One logical API call; retries of it reuse the same bytes and the same Idempotency-Key. */
export interface RequestOptions {
  method: HttpMethod;
  /** Under /api/public/v1, starting with `/`; path segments already encoded. */
  path: string;
  /** Arrays become repeated parameters; undefined and empty strings are left out. */
  query?: Record<string, QueryValue> | undefined;
  body?: RequestBody | undefined;
  /** For writes: the key to send (persist it before calling to survive a crash); else one is generated. */
  idempotencyKey?: string | undefined;
  /** false for `GET /status`: no token, no rate budget. Default true. */
  authenticated?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /**
   * What a 2xx answer must hold for the caller to use it (`response-shapes.ts`). One that does not
   * (an empty body, `{}` where an `id` is due, HTML) is the service's fault, not the record's: it
   * is retried with the same key and bytes, then thrown as `UnexpectedResponseError`. Default: any
   * JSON, or an empty body.
   */
  expect?: ResponseShape | undefined;
}

/** What one logical call cost: the counters the sync's summary adds up. */
export interface RequestStats {
  /** HTTP requests sent (attempts). */
  requests: number;
  /** 429 answers received. */
  rateLimited: number;
  /** Attempts after the first (401 refreshes included). */
  retries: number;
  /** Milliseconds spent waiting for the rate limiter and in backoff. */
  waitedMs: number;
}

export interface ApiResult<T> {
  status: number;
  data: T;
  /** The server answered with a stored response (`Idempotent-Replay: true`). */
  replayed: boolean;
  idempotencyKey: string | undefined;
  stats: RequestStats;
}

/**
 * What one request got, whatever its status (`Transport.probe`): what a diagnosis reads where
 * `send` would turn the answer into data or an error (the status of a refusal, the rate-limit
 * headers, the `Allow` of a 405).
 */
export interface ProbeAnswer {
  status: number;
  headers: Headers;
  /** The body as received ('' when empty). */
  text: string;
}

/**
 * What the client tells while it retries a request (a progress line shows it): `retrying` before
 * each wait, then `settled` once the request got its answer or gave up. A request answered at its
 * first attempt tells nothing.
 */
export type RetryNotice =
  | {
      type: 'retrying';
      /** `{base_url}` of the API. */
      baseUrl: string;
      method: HttpMethod;
      path: string;
      /** The attempt that failed (1 for the first), and how many there are at most. */
      attempt: number;
      maxAttempts: number;
      /** Why: `NETWORK_ERROR`, `TIMEOUT`, an HTTP status's code, with the status when one came. */
      code: string;
      status?: number | undefined;
      /** The wait before the next attempt. */
      delayMs: number;
    }
  | { type: 'settled'; baseUrl: string; method: HttpMethod; path: string; answered: boolean };

/** What endpoint groups need to send a request: the transport implements it (tests can fake it). */
export interface Requester {
  send<T>(options: RequestOptions): Promise<ApiResult<T>>;
}
