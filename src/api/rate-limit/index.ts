export { type CreateRateLimiterOptions, createRateLimiter } from './create-rate-limiter.js';
export { type ParseRateInfoOptions, PUBLIC_API_POLICY, parseRateInfo, parseRetryAfter } from './headers.js';
export { DEFAULT_MARGIN, type LimiterOptions, marginMs, PROBE_POLICY } from './policy.js';
export { type LimiterAlgorithm, RedisRateLimiter, type RedisRateLimiterProps } from './redis-limiter.js';
export { timerSleep } from './sleep.js';
export { limiterClosed, SlidingLogRateLimiter, type SlidingLogRateLimiterProps } from './sliding-log.js';
export type * from './types.js';
