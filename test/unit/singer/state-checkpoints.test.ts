import { describe, expect, it } from 'vitest';
import { StateCheckpoints } from '../../../src/sources/singer/state-checkpoints.js';

describe('StateCheckpoints: a STATE is reached once every record before it was processed', () => {
  it('when batches are processed in turn, then each STATE is reached by the batch holding the last record before it, not sooner', () => {
    const states = new StateCheckpoints();
    // Records 0-1 in batch A, STATE s1, records 2-3 in batch B, STATE s2, record 4 being filled.
    states.filled(0);
    states.handedOut(2);
    states.noted('s1', 2);
    states.filled(2);
    states.handedOut(4);
    states.noted('s2', 4);
    states.filled(4);

    expect(states.last).toEqual({ value: 's2' });
    expect(states.reached).toBeNull();
    // A processed: s1 (after records 0-1) is reached; s2 waits for batch B.
    expect(states.processed(5)).toEqual({ value: 's1' });
    // B processed, but record 4 is still in the batch being filled: s2 (before record 4) is reached.
    expect(states.processed(5)).toEqual({ value: 's2' });
    expect(states.reached).toEqual({ value: 's2' });
  });

  it('when a record before a STATE is held back (its account has not come), then the STATE waits for it, and the end reaches every STATE', () => {
    const states = new StateCheckpoints();
    // Record 0 is held back; record 1 goes in batch A; STATE s1 after both.
    states.filled(1);
    states.handedOut(2);
    states.noted('s1', 2);

    // A processed, record 0 still held: the lowest record not sent is 0, so s1 is not reached.
    expect(states.processed(0)).toBeNull();
    expect(states.reached).toBeNull();
    // The input ended and every batch was processed.
    expect(states.processedAll()).toEqual({ value: 's1' });
    expect(states.processedAll()).toBeNull();
  });

  it('when a batch holds no record (only STATEs came), then it is known by the next record, and processing it reaches them', () => {
    const states = new StateCheckpoints();
    states.noted({ bookmark: 1 }, 0);
    states.noted({ bookmark: 2 }, 0);
    states.handedOut(0);
    expect(states.processed(0)).toEqual({ value: { bookmark: 2 } });
  });
});
