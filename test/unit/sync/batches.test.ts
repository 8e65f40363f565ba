import { describe, expect, it, vi } from 'vitest';
import { readAhead, roundsOf } from '../../../src/sync/pass-batches.js';

const item = (sourceId: string, n: number) => ({ record: { sourceId }, n });

describe('roundsOf', () => {
  it('when every key is distinct, then there is one round in the order given', () => {
    const items = [item('a', 1), item('b', 2), item('c', 3)];
    expect(roundsOf(items)).toEqual([items]);
  });

  it('when a key comes back, then each of its versions goes in a later round, in order', () => {
    const rounds = roundsOf([item('a', 1), item('b', 2), item('a', 3), item('a', 4), item('c', 5)]);
    expect(rounds.map((r) => r.map((i) => `${i.record.sourceId}${i.n}`))).toEqual([
      ['a1', 'b2', 'c5'],
      ['a3'],
      ['a4'],
    ]);
  });

  it('when there is nothing, then there is no round', () => {
    expect(roundsOf([])).toEqual([]);
  });
});

describe('readAhead', () => {
  /**
   * Batches that log when each is asked for, when its read ends and when it is taken. A read is
   * I/O: it ends on a later turn of the event loop, whatever the consumer does meanwhile.
   */
  function logged(count: number, log: string[], failAt?: number) {
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for (let i = 1; i <= count; i++) {
            log.push(`read ${i}`);
            await new Promise((resolve) => setImmediate(resolve));
            if (i === failAt) throw new Error(`batch ${i} unreadable`);
            log.push(`read ${i} done`);
            yield i;
          }
        } finally {
          log.push('closed');
        }
      },
    };
  }

  it('when batches are consumed, then the next one is being read while the current one is handled', async () => {
    const log: string[] = [];
    for await (const batch of readAhead(logged(3, log))) {
      log.push(`handle ${batch} start`);
      // Handling lasts until the next batch has been read: it can end only if that read runs now.
      if (batch < 3) await vi.waitFor(() => expect(log).toContain(`read ${batch + 1} done`), { interval: 1 });
      log.push(`handle ${batch} end`);
    }
    expect(log).toEqual([
      'read 1',
      'read 1 done',
      'read 2',
      'handle 1 start',
      'read 2 done',
      'handle 1 end',
      'read 3',
      'handle 2 start',
      'read 3 done',
      'handle 2 end',
      // Asked for a fourth batch, the source finished (and closed) before the third was handled.
      'closed',
      'handle 3 start',
      'handle 3 end',
    ]);
  });

  it('when a batch cannot be read, then the batches before it are handled and the error surfaces after', async () => {
    const log: string[] = [];
    const handled: number[] = [];
    await expect(async () => {
      for await (const batch of readAhead(logged(3, log, 2))) handled.push(batch);
    }).rejects.toThrow('batch 2 unreadable');
    expect(handled).toEqual([1]);
    expect(log).toContain('closed');
  });

  it('when the consumer stops early, then the source is closed and no rejection is left unhandled', async () => {
    const log: string[] = [];
    for await (const batch of readAhead(logged(3, log, 2))) {
      if (batch === 1) break;
    }
    expect(log.at(-1)).toBe('closed');
  });
});
