import { AppError, messageOf } from '../../domain/errors.js';
import { RedisUnavailableError } from '../../domain/redis-unavailable.js';

/**
 * The shared limiter's Redis did not answer (ioredis gave up on the command): no request may go out
 * unmetered, so the caller's pass stops on an infrastructure fault and the next one resumes.
 */
export class LimiterStoreError extends RedisUnavailableError {
  constructor(cause: unknown) {
    super(`the rate limiter's Redis did not answer: ${messageOf(cause)}`, { cause });
  }
}

/** Rethrows a Redis failure as a `LimiterStoreError` (our own errors pass through). */
export const storeUnavailable = (error: unknown): never => {
  throw error instanceof AppError ? error : new LimiterStoreError(error);
};

/**
 * A failure every waiter of a process would meet (the limiter's Redis is down): the first waiter to
 * meet it fails the others at once, instead of each one trying in turn (each try of a dead Redis
 * takes seconds of reconnection attempts). Callers that arrive later try again: Redis may be back.
 *
 * @example
 * const failure = new SharedFailure();
 * const wake = AbortSignal.any([signal, failure.signal]); // sleeps and checks end on it
 * await unlessAborted(check().catch((error) => failure.rethrow(error)), wake);
 */
export class SharedFailure {
  #current = new AbortController();

  /** Aborted, with the failure as its reason, when a waiter of this generation fails for everyone. */
  get signal(): AbortSignal {
    return this.#current.signal;
  }

  /** Fails every waiter holding the current signal with `error`; later callers get a fresh one. */
  fail(error: unknown): void {
    const failed = this.#current;
    this.#current = new AbortController();
    failed.abort(error);
  }

  /** `storeUnavailable`, failing every waiter of this generation too when Redis did not answer. */
  rethrow(error: unknown): never {
    try {
      return storeUnavailable(error);
    } catch (failure) {
      if (failure instanceof LimiterStoreError) this.fail(failure);
      throw failure;
    }
  }
}

/** `work`'s outcome, or a rejection with `signal.reason` as soon as `signal` aborts. */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
