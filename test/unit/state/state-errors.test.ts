import { describe, expect, it } from 'vitest';
import { isConnectionLoss, StateDbError, withStateErrors } from '../../../src/state/state-errors.js';

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

  it('when a call loses its connection twice, then it runs a third time and its result is returned', async () => {
    let calls = 0;
    const repo = withStateErrors(
      {
        async save(value: string) {
          calls++;
          if (calls < 3) throw withCode('terminating connection due to administrator command', '57P01');
          return `saved ${value}`;
        },
      },
      [1, 1, 1],
    );
    await expect(repo.save('C-1')).resolves.toBe('saved C-1');
    expect(calls).toBe(3);
  });

  it('when the connection stays lost, then the last error is restated as STATE_DB_UNAVAILABLE, after the retries', async () => {
    let calls = 0;
    const repo = withStateErrors(
      {
        async save() {
          calls++;
          throw new Error('Connection terminated unexpectedly');
        },
      },
      [1, 1],
    );
    const error = await repo.save().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateDbError);
    expect(error).toMatchObject({ code: 'STATE_DB_UNAVAILABLE', kind: 'infrastructure', retryable: true });
    expect(calls).toBe(3);
  });

  it('when the database refuses a value, then it is not retried and is the data’s problem', async () => {
    let calls = 0;
    const repo = withStateErrors(
      {
        async save() {
          calls++;
          throw withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021');
        },
      },
      [1, 1],
    );
    await expect(repo.save()).rejects.toMatchObject({ code: 'STATE_DB_VALUE_REFUSED', kind: 'data' });
    expect(calls).toBe(1);
  });
});
