import { AppError, messageOf } from '../domain/errors.js';

/**
 * What the state DB's driver threw, restated with the error base: a value the database refuses
 * (SQLSTATE class 22 "data exception" or 23 "integrity constraint") is `data`
 * (`STATE_DB_VALUE_REFUSED`); anything else (a dropped connection, a restart, a failover, a full
 * disk) is `infrastructure` and may pass (`STATE_DB_UNAVAILABLE`).
 */
export class StateDbError extends AppError {
  /** The driver's own code: a SQLSTATE (`57P01`) or a socket error (`ECONNREFUSED`), when it had one. */
  readonly driverCode: string | undefined;

  constructor(cause: unknown) {
    const driverCode = codeOf(cause);
    const refused = driverCode !== undefined && /^2[23][0-9A-Z]{3}$/.test(driverCode);
    super(refused ? 'STATE_DB_VALUE_REFUSED' : 'STATE_DB_UNAVAILABLE', `state DB: ${messageOf(cause)}`, {
      kind: refused ? 'data' : 'infrastructure',
      retryable: !refused,
      cause,
    });
    this.driverCode = driverCode;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Waits before each new attempt of a state DB call whose connection was lost. */
export const STATE_RETRY_DELAYS_MS: readonly number[] = [100, 500, 2_000];

/**
 * Whether the call failed because its connection was lost (a terminated backend, a restart, a
 * failover, a reset socket) rather than because of the statement: then a new connection, taken
 * from the pool, may run it.
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined) {
    // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now.
    if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code)) return true;
    if (['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN'].includes(code)) return true;
  }
  return /Connection terminated|Client has encountered a connection error|Connection closed/i.test(
    messageOf(error),
  );
}

/**
 * The repository with every method's failure restated as a `StateDbError` (an `AppError` passes
 * as it is), so what stops a pass says it was the state DB, and nothing blames the data for a
 * dropped connection. A call whose connection was lost is run again on a new one, after 0.1, 0.5
 * and 2 s: a restart or a failover of a few seconds costs the pass nothing. Every write of the
 * repositories is an upsert or keyed by what the caller holds, so a call that took effect before
 * its connection dropped does the same thing twice (at worst an extra attempt counted, or a run row
 * closed as `interrupted` by the next pass).
 */
export function withStateErrors<T extends object>(
  repository: T,
  delaysMs: readonly number[] = STATE_RETRY_DELAYS_MS,
): T {
  return new Proxy(repository, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const call = () => value.apply(target, args) as unknown;
        try {
          const result = call();
          return result instanceof Promise ? retried(result, call, delaysMs).catch(restate) : result;
        } catch (error) {
          return restate(error);
        }
      };
    },
  });
}

async function retried(first: Promise<unknown>, call: () => unknown, delaysMs: readonly number[]) {
  let attempt: Promise<unknown> = first;
  for (let i = 0; ; i++) {
    try {
      return await attempt;
    } catch (error) {
      if (i >= delaysMs.length || !isConnectionLoss(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delaysMs[i]));
      attempt = Promise.resolve().then(call);
    }
  }
}

function restate(error: unknown): never {
  throw error instanceof AppError ? error : new StateDbError(error);
}
