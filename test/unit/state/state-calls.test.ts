import { describe, expect, it } from 'vitest';
import { StateCalls } from '../../../src/state/state-calls.js';
import { StateDbError } from '../../../src/state/state-errors.js';
import { PassCancelledError } from '../../../src/sync/pass-cancelled.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const terminated = () => withCode('terminating connection due to administrator command', '57P01');

/** StateCalls whose waits are recorded, not waited. */
function recordedCalls(delaysMs?: readonly number[]) {
  const waited: number[] = [];
  const calls = new StateCalls({
    ...(delaysMs ? { delaysMs } : {}),
    sleep: async (ms) => {
      waited.push(ms);
    },
  });
  return { calls, waited };
}

/** A statement that fails `failures` times with what `error` makes, then answers `answer`. */
function flaky<T>(failures: number, error: () => unknown, answer: T) {
  const statement = Object.assign(
    async () => {
      statement.runs++;
      if (statement.runs <= failures) throw error();
      return answer;
    },
    { runs: 0 },
  );
  return statement;
}

describe('state DB calls', () => {
  it('when a retried statement loses its connection twice, then it runs a third time after 0.1 and 0.5 s, and its answer is returned', async () => {
    const { calls, waited } = recordedCalls();
    const statement = flaky(2, terminated, 'saved');
    await expect(calls.retried('recordMap.save', statement)).resolves.toBe('saved');
    expect(statement.runs).toBe(3);
    expect(waited).toEqual([100, 500]);
  });

  it('when the connection stays lost, then after the last wait the error is restated as STATE_DB_UNAVAILABLE, naming the statement', async () => {
    const { calls, waited } = recordedCalls();
    const statement = flaky(
      Number.POSITIVE_INFINITY,
      () => new Error('Connection terminated unexpectedly'),
      0,
    );
    const error = await calls.retried('runs.finish', statement).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateDbError);
    expect(error).toMatchObject({
      code: 'STATE_DB_UNAVAILABLE',
      kind: 'infrastructure',
      retryable: true,
      statement: 'runs.finish',
    });
    expect(statement.runs).toBe(4);
    expect(waited).toEqual([100, 500, 2_000]);
  });

  it('when the database refuses a value, then it is not retried and is the data’s problem', async () => {
    const { calls, waited } = recordedCalls();
    const statement = flaky(1, () => withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021'), 0);
    await expect(calls.retried('failures.record', statement)).rejects.toMatchObject({
      code: 'STATE_DB_VALUE_REFUSED',
      kind: 'data',
    });
    expect(statement.runs).toBe(1);
    expect(waited).toEqual([]);
  });

  it('when a statement that must not run twice is aborted by the server, then it runs again (it did not take effect)', async () => {
    const { calls, waited } = recordedCalls();
    const statement = flaky(1, terminated, 'inserted');
    await expect(calls.once('runRecords.record', statement)).resolves.toBe('inserted');
    expect(statement.runs).toBe(2);
    expect(waited).toEqual([100]);
  });

  it('when a statement that must not run twice loses its connection with its answer on the way, then it is not run again and the outage is restated', async () => {
    const { calls, waited } = recordedCalls();
    const reset = () => withCode('read ECONNRESET', 'ECONNRESET');
    const statement = flaky(1, reset, 'inserted');
    await expect(calls.once('runRecords.record', statement)).rejects.toMatchObject({
      code: 'STATE_DB_UNAVAILABLE',
      driverCode: 'ECONNRESET',
      statement: 'runRecords.record',
    });
    expect(statement.runs).toBe(1);
    expect(waited).toEqual([]);
  });

  it('when a statement throws an AppError, then it passes as it is', async () => {
    const { calls } = recordedCalls([1]);
    const own = new PassCancelledError('7', 'ada');
    await expect(
      calls.retried(
        'runs.start',
        flaky(1, () => own, 0),
      ),
    ).rejects.toBe(own);
    await expect(
      calls.once(
        'runs.insert',
        flaky(1, () => own, 0),
      ),
    ).rejects.toBe(own);
  });

  it('when the calls are direct, then a statement runs once and its error is the driver’s, as thrown', async () => {
    const lost = terminated();
    const statement = flaky(1, () => lost, 0);
    await expect(StateCalls.direct.retried('runs.recent', statement)).rejects.toBe(lost);
    expect(statement.runs).toBe(1);
  });
});
