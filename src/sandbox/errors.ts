import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * An error the sandbox answers with, in the Public API's error body shape.
 * `code` is the API's own code (`LIST_FILTER_INVALID`, `app-invoicing.invoice.duplicate-source-id`, ...).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly resolution: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { resolution?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.resolution = options.resolution;
    this.headers = options.headers ?? {};
  }
}

/** Shorthands for the errors every route uses. */
export const badRequest = (message: string, code = 'BAD_REQUEST') => new ApiError(400, code, message);
export const notFound = (what: string) => new ApiError(404, 'NOT_FOUND', `${what} not found`);

/** The error body of the spec: message, code, frontMessage, timestamp, path, type, method, resolution. */
export interface ErrorBody {
  message: string;
  code: string;
  frontMessage: string;
  timestamp: string;
  path: string;
  type: string;
  method: string;
  resolution: string;
}

const DEFAULT_RESOLUTION: Record<number, string> = {
  400: 'Check the request parameters and body against the API reference.',
  401: 'Authenticate with a valid OAuth access token.',
  403: 'Use a token granted a scope this endpoint accepts.',
  404: 'Check the identifier.',
  409: 'Wait for the Retry-After delay, then retry with the same Idempotency-Key.',
  413: 'Send a smaller file.',
  422: 'Use a new Idempotency-Key for a different request body.',
  429: 'Wait for the Retry-After delay before retrying.',
  503: 'Retry the request unchanged with the same Idempotency-Key.',
};

export function errorBody(request: FastifyRequest, err: ApiError, now: Date): ErrorBody {
  return {
    message: err.message,
    code: err.code,
    frontMessage: err.message,
    timestamp: now.toISOString(),
    path: request.url.split('?')[0] ?? request.url,
    type: 'http',
    method: request.method,
    resolution: err.resolution ?? DEFAULT_RESOLUTION[err.status] ?? 'Retry later.',
  };
}

export function sendApiError(request: FastifyRequest, reply: FastifyReply, err: ApiError, now: Date) {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  return reply
    .code(err.status)
    .type('application/json')
    .send(errorBody(request, err, now));
}

/** 429 with `Retry-After`, for the API and the token endpoint alike. */
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(429, 'HTTP_429', 'Too many requests', {
    resolution: `Wait ${retryAfterSeconds} seconds (the Retry-After delay) before retrying.`,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
