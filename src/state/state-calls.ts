import { setTimeout as wait } from 'node:timers/promises';
import { AppError } from '../domain/errors.js';
import { isConnectionLoss, StateDbError, statementDidNotRun } from './state-errors.js';

/** Waits before each new attempt of a state DB statement whose connection was lost. */
export const STATE_RETRY_DELAYS_MS: readonly number[] = [100, 500, 2_000];

export interface StateCallsProps {
  /**
   * Waits before each new attempt of a `retried` statement whose connection was lost, in ms
   * (default `STATE_RETRY_DELAYS_MS`: 0.1, 0.5 and 2 s, then the error). `[]`: never again.
   */
  delaysMs?: readonly number[];
  /** How a wait is waited (default: a timer); a test passes one that returns at once. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Whether a failure is restated as a `StateDbError` (default true; an `AppError` passes as it
   * is). False: the driver's error as it was thrown (see `StateCalls.direct`).
   */
  restate?: boolean;
}

/**
 * How the repositories run their statements, each under a name (`recordMap.save`), so that what a
 * dropped connection does to a statement is decided where the statement is written:
 *
 * - `retried`: the statement is idempotent (a read, an upsert of values the caller holds, an update
 *   or a delete that sets what it sets again): when its connection was lost (`isConnectionLoss`),
 *   it runs again on a new connection after each of `delaysMs`. Run twice because the answer of a
 *   first attempt that took effect was lost, it changes nothing more. A restart or a failover of a
 *   few seconds then costs a pass nothing.
 * - `once`: the statement must not run twice (it adds to a counter, or inserts a row with a new id):
 *   it runs again only when its failure shows it did not take effect (`statementDidNotRun`: the
 *   server aborted it, as `pg_terminate_backend` or a shutdown does, or it never reached a server);
 *   a connection that dropped with its answer on the way stops the caller, as any outage does.
 *
 * Either way its failure comes out as a `StateDbError` naming the statement (`statement`), so what
 * stops a pass says it was the state DB and nothing blames the data for a dropped connection.
 *
 * @example
 * async finish(key: string): Promise<void> {
 *   await this.#calls.retried('pendingWrites.finish', () =>
 *     this.db.deleteFrom('pending_writes').where('idempotency_key', '=', key).execute(),
 *   );
 * }
 */
export class StateCalls {
  /**
   * Each statement once, its failure as the driver threw it: for the repositories built outside the
   * sync runtime (the dashboard's), where a failed read fails the page's request and the next
   * request runs on a new connection, so retrying inside it would only delay the answer.
   */
  static readonly direct = new StateCalls({ delaysMs: [], restate: false });

  readonly #delaysMs: readonly number[];
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #restate: boolean;

  constructor(props: StateCallsProps = {}) {
    this.#delaysMs = props.delaysMs ?? STATE_RETRY_DELAYS_MS;
    this.#sleep = props.sleep ?? ((ms) => wait(ms));
    this.#restate = props.restate ?? true;
  }

  /** Runs an idempotent statement, again on a new connection when its connection was lost. */
  retried<T>(name: string, statement: () => Promise<T>): Promise<T> {
    return this.#run(name, statement, isConnectionLoss);
  }

  /**
   * Runs a statement that must not run twice: again (after the same waits) only when its failure
   * shows it did not take effect.
   */
  once<T>(name: string, statement: () => Promise<T>): Promise<T> {
    return this.#run(name, statement, statementDidNotRun);
  }

  /** The statement, again after each of the waits while `mayRunAgain` says its failure allows it. */
  async #run<T>(
    name: string,
    statement: () => Promise<T>,
    mayRunAgain: (error: unknown) => boolean,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await statement();
      } catch (error) {
        const delay = this.#delaysMs[attempt];
        if (delay === undefined || !mayRunAgain(error)) throw this.#restated(name, error);
        await this.#sleep(delay);
      }
    }
  }

  #restated(name: string, error: unknown): unknown {
    if (!this.#restate || error instanceof AppError) return error;
    return new StateDbError(error, name);
  }
}
