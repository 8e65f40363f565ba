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

/**
 * The repository with every method's failure restated as a `StateDbError` (an `AppError` passes
 * as it is), so what stops a pass says it was the state DB, and nothing blames the data for a
 * dropped connection.
 */
export function withStateErrors<T extends object>(repository: T): T {
  return new Proxy(repository, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = value.apply(target, args);
          return result instanceof Promise ? result.catch(restate) : result;
        } catch (error) {
          return restate(error);
        }
      };
    },
  });
}

function restate(error: unknown): never {
  throw error instanceof AppError ? error : new StateDbError(error);
}
