import { AppError } from './errors.js';

/**
 * Redis did not answer: at start (the worker's queues), or a command the shared rate limiter gave
 * up on (`LimiterStoreError`). The one class of `REDIS_UNAVAILABLE`, here because both the queues
 * (`jobs/`) and the rate limiter (`api/`) throw it.
 */
export class RedisUnavailableError extends AppError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('REDIS_UNAVAILABLE', message, options);
  }
}
