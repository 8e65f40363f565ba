import { ReceivablesError } from './errors.js';
import { encodeMultipart } from './multipart.js';
import { type Flow, flowOrCurrent } from './rate-limit/flow.js';
import { API_PREFIX, apiBaseOf, type HttpMethod, type QueryValue, type RequestOptions } from './requests.js';
import type { ResponseShape } from './response-shapes.js';

/**
 * A request as it goes out, made once from its `RequestOptions`: its URL with the query, its body's
 * bytes and content type, its Idempotency-Key. Every attempt of it sends the same bytes with the
 * same key, so a write retried after a lost answer is one write for the server.
 */
export interface Prepared {
  method: HttpMethod;
  path: string;
  url: string;
  body: string | Uint8Array | undefined;
  contentType: string | undefined;
  idempotencyKey: string | undefined;
  authenticated: boolean;
  signal: AbortSignal | undefined;
  expect: ResponseShape | undefined;
  /** Taken from `withFlow` when `send` is called: the async context does not follow p-queue's scheduling. */
  flow: Flow;
}

/**
 * Makes the request once: the query (arrays as repeated parameters, undefined and empty strings
 * left out), the JSON or multipart body, and for a write the caller's key or a new one (1 to 255
 * characters, as the API takes).
 */
export function prepareRequest(
  options: RequestOptions,
  baseUrl: string,
  newIdempotencyKey: () => string,
): Prepared {
  const url = new URL(`${apiBaseOf(baseUrl)}${options.path}`);
  for (const [name, value] of Object.entries(options.query ?? {})) appendQuery(url.searchParams, name, value);
  let body: Prepared['body'];
  let contentType: string | undefined;
  if (options.body && 'json' in options.body) {
    body = JSON.stringify(options.body.json);
    contentType = 'application/json';
  } else if (options.body) {
    const encoded = encodeMultipart(options.body.multipart);
    body = new Uint8Array(encoded.bytes);
    contentType = encoded.contentType;
  }
  let idempotencyKey: string | undefined;
  if (options.method !== 'GET') {
    idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    if (idempotencyKey.length < 1 || idempotencyKey.length > 255) {
      throw new ReceivablesError('IDEMPOTENCY_KEY_INVALID', 'an Idempotency-Key must be 1 to 255 characters');
    }
  }
  return {
    method: options.method,
    path: `${API_PREFIX}${options.path}`,
    url: url.toString(),
    body,
    contentType,
    idempotencyKey,
    authenticated: options.authenticated ?? true,
    signal: options.signal,
    expect: options.expect,
    flow: flowOrCurrent(),
  };
}

function appendQuery(params: URLSearchParams, name: string, value: QueryValue): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    for (const item of value) params.append(name, String(item));
    return;
  }
  const text = String(value);
  if (text !== '') params.append(name, text);
}
