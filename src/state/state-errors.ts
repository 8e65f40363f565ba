import { AppError, messageOf } from '../domain/errors.js';

/**
 * What the state DB's driver threw, restated with the error base: a value the database refuses
 * (SQLSTATE class 22 "data exception" or 23 "integrity constraint") is `data`
 * (`STATE_DB_VALUE_REFUSED`); anything else (a dropped connection, a restart, a failover, a full
 * disk) is `infrastructure` and may pass (`STATE_DB_UNAVAILABLE`). The repositories restate what
 * their statements throw (see `StateCalls`).
 */
export class StateDbError extends AppError {
  /** The driver's own code: a SQLSTATE (`57P01`) or a socket error (`ECONNREFUSED`), when it had one. */
  readonly driverCode: string | undefined;
  /** The statement that failed, by the name its repository gives it (`recordMap.save`), when known. */
  readonly statement: string | undefined;

  /**
   * @param statement the failed statement's name (see `StateCalls`)
   * @param opening the state DB could not be opened (connect, migrate): unavailable, whatever the
   *   driver said, and the message says so
   */
  constructor(cause: unknown, statement?: string, opening = false) {
    const driverCode = codeOf(cause);
    const refused = !opening && driverCode !== undefined && /^2[23][0-9A-Z]{3}$/.test(driverCode);
    super(
      refused ? 'STATE_DB_VALUE_REFUSED' : 'STATE_DB_UNAVAILABLE',
      `${opening ? 'cannot open the state DB' : 'state DB'}: ${messageOf(cause)}`,
      { cause },
    );
    this.driverCode = driverCode;
    this.statement = statement;
  }

  /** The state DB could not be opened (`cannot open the state DB: …`, `STATE_DB_UNAVAILABLE`). */
  static ofOpening(cause: unknown): StateDbError {
    return new StateDbError(cause, undefined, true);
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Whether the failure shows that the statement did not take effect: the server aborted it (57P01-03,
 * admin or crash shutdown, cannot connect now: its transaction rolled back), no connection was made
 * (08001, 08004, `ECONNREFUSED`), or the client knew its connection dead before sending it. A
 * connection dropped while the answer was on its way (`ECONNRESET`, "Connection terminated") is not
 * among them: the statement may have been committed.
 */
export function statementDidNotRun(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined && /^(57P0[123]|08001|08004|ECONNREFUSED)$/.test(code)) return true;
  return /Client has encountered a connection error and is not queryable/i.test(messageOf(error));
}

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
