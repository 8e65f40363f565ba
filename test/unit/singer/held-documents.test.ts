import { describe, expect, it } from 'vitest';
import { HeldDocuments } from '../../../src/sources/singer/held-documents.js';

const doc = (seq: number, account: string) => ({ seq, account });
const seqs = (items: ReadonlyArray<{ seq: number }>) => items.map((i) => i.seq);

describe('HeldDocuments: documents waiting for their account in one tap run', () => {
  it('when an account comes, then the documents that waited for it go, in the order they came, and later ones go at once', () => {
    const held = new HeldDocuments<ReturnType<typeof doc>>(10);
    expect(held.hold('A', doc(0, 'A'))).toEqual([]);
    expect(held.hold('B', doc(1, 'B'))).toEqual([]);
    expect(held.hold('A', doc(2, 'A'))).toEqual([]);
    expect(held.hasSeen('A')).toBe(false);

    expect(seqs(held.accountCame('A'))).toEqual([0, 2]);
    expect(held.hasSeen('A')).toBe(true);
    expect(held.accountCame('A')).toEqual([]);
    expect(held.lowestSeq()).toBe(1);
    expect(held.mostHeld).toBe(3);
  });

  it('when more documents wait than the bound, then the account that waited longest lets all its documents go', () => {
    const held = new HeldDocuments<ReturnType<typeof doc>>(3);
    held.hold('B', doc(0, 'B'));
    held.hold('A', doc(1, 'A'));
    held.hold('B', doc(2, 'B'));
    // The fourth is one past the bound: B's documents (the oldest, seq 0) go on, A's keep waiting.
    expect(seqs(held.hold('A', doc(3, 'A')))).toEqual([0, 2]);
    expect(held.mostHeld).toBe(4);
    expect(held.lowestSeq()).toBe(1);
    // B's account never came: a later B document waits again (the engine fails what goes without it).
    expect(held.hold('B', doc(4, 'B'))).toEqual([]);
    expect(seqs(held.releaseAll())).toEqual([1, 3, 4]);
  });

  it('when the input ends, then every held document goes in the order it came, and none is left', () => {
    const held = new HeldDocuments<ReturnType<typeof doc>>(10);
    held.hold('C', doc(5, 'C'));
    held.hold('A', doc(1, 'A'));
    held.hold('C', doc(7, 'C'));
    held.hold('B', doc(3, 'B'));
    expect(seqs(held.releaseAll())).toEqual([1, 3, 5, 7]);
    expect(held.releaseAll()).toEqual([]);
    expect(held.lowestSeq()).toBe(Number.POSITIVE_INFINITY);
  });
});
