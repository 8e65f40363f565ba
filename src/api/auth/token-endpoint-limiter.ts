import type { Redis } from 'ioredis';
import type { Clock } from '../../domain/clock.js';
import type { Logger } from '../../logging/logger.js';
import { createRateLimiter } from '../rate-limit/create-rate-limiter.js';
import type { MeteredRateLimiter, RateLimitPolicy, Sleep } from '../rate-limit/types.js';

/** The spec's token endpoint policy: 10 requests per 60 s per IP address, named `auth`. */
export const TOKEN_ENDPOINT_POLICY_NAME = 'auth';
export const TOKEN_ENDPOINT_POLICY: RateLimitPolicy = { quota: 10, windowSeconds: 60 };

export interface TokenEndpointLimiterOptions {
  /** With a connection: one budget for every process of the host (the server counts per IP). */
  redis?: Redis | undefined;
  /** Redis key prefix. Default `receivables-sync`. */
  prefix?: string | undefined;
  clock?: Clock | undefined;
  sleep?: Sleep | undefined;
  logger?: Logger | undefined;
}

/**
 * The budget of `POST /api/oauth/token` (every grant: code exchange, refresh, import): the API
 * client's sliding-log limiter (src/api/rate-limit/), starting at the spec's 10 / 60 s rather than
 * probing, following `RateLimit-Policy: "auth";q=..;w=..` and pausing on a 429's Retry-After.
 * Its key is `token-endpoint:<host>` (see TokenEndpointClient), apart from the API's token budgets.
 */
export function createTokenEndpointLimiter(options: TokenEndpointLimiterOptions = {}): MeteredRateLimiter {
  return createRateLimiter({
    redis: options.redis,
    prefix: options.prefix,
    clock: options.clock,
    sleep: options.sleep,
    logger: options.logger,
    defaultPolicy: TOKEN_ENDPOINT_POLICY,
    policyName: TOKEN_ENDPOINT_POLICY_NAME,
  });
}
