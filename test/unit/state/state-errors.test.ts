import { describe, expect, it } from 'vitest';
import { isConnectionLoss, StateDbError } from '../../../src/state/state-errors.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('state DB errors', () => {
  it('when the connection was lost, then it is told from a statement the database refused', () => {
    expect(isConnectionLoss(withCode('terminating connection due to administrator command', '57P01'))).toBe(
      true,
    );
    expect(isConnectionLoss(withCode('connection failure', '08006'))).toBe(true);
    expect(isConnectionLoss(withCode('read ECONNRESET', 'ECONNRESET'))).toBe(true);
    expect(isConnectionLoss(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(
      isConnectionLoss(new Error('Client has encountered a connection error and is not queryable')),
    ).toBe(true);
    expect(isConnectionLoss(withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021'))).toBe(
      false,
    );
    expect(isConnectionLoss(withCode('relation "runs" does not exist', '42P01'))).toBe(false);
  });

  it('when a value is refused, then it is the data’s problem; anything else is an outage that may pass', () => {
    expect(new StateDbError(withCode('invalid byte sequence', '22021'))).toMatchObject({
      code: 'STATE_DB_VALUE_REFUSED',
      kind: 'data',
      retryable: false,
      driverCode: '22021',
    });
    expect(new StateDbError(new Error('Connection terminated unexpectedly'), 'runs.finish')).toMatchObject({
      code: 'STATE_DB_UNAVAILABLE',
      kind: 'infrastructure',
      retryable: true,
      statement: 'runs.finish',
      message: 'state DB: Connection terminated unexpectedly',
    });
  });
});
