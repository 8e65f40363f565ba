import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { RecordMapRepository } from '../../../src/state/record-map.js';
import { FingerprintSnapshots } from '../../../src/sync/fingerprint-snapshot.js';

const logger = pino({ level: 'silent' });
const policy = { minRows: 100, maxRatio: 8, limit: 10_000 };

/** A record map of `stored` invoices that logs what it is asked. */
function recordMap(stored: number) {
  const calls: string[] = [];
  const map = {
    async countUpTo(_source: string, _kind: string, max: number) {
      calls.push(`count ${max}`);
      return Math.min(stored, max);
    },
    async fingerprints(_source: string, _kind: string, max: number) {
      calls.push(`read ${max}`);
      return stored > max ? null : new Map(Array.from({ length: stored }, (_, i) => [`K-${i}`, `f${i}`]));
    },
  };
  return { calls, map: map as unknown as RecordMapRepository };
}

describe('FingerprintSnapshots', () => {
  it('when a pass has read fewer records than minRows, then the record map is not even counted', async () => {
    const { calls, map } = recordMap(50);
    const snapshots = new FingerprintSnapshots(map, 'erp', logger, policy);
    await snapshots.observe('invoice', 99);
    expect(calls).toEqual([]);
    expect(snapshots.unchanged('invoice', 'K-1', 'f1')).toBe(false);
  });

  it('when the record map is small next to the pass, then its fingerprints are read once and vouch for unchanged records only', async () => {
    const { calls, map } = recordMap(700);
    const snapshots = new FingerprintSnapshots(map, 'erp', logger, policy);
    await snapshots.observe('invoice', 100);
    await snapshots.observe('invoice', 1_000);
    expect(calls).toEqual(['count 801', 'read 800']);
    expect(snapshots.unchanged('invoice', 'K-1', 'f1')).toBe(true);
    expect(snapshots.unchanged('invoice', 'K-1', 'changed')).toBe(false);
    expect(snapshots.unchanged('invoice', 'K-999', 'f999')).toBe(false);
    expect(snapshots.unchanged('account', 'K-1', 'f1')).toBe(false);
    snapshots.forget('invoice', ['K-1']);
    expect(snapshots.unchanged('invoice', 'K-1', 'f1')).toBe(false);
  });

  it('when the record map is large next to the pass, then it is counted again only once the pass has grown fourfold, and read when it qualifies', async () => {
    const { calls, map } = recordMap(3_000);
    const snapshots = new FingerprintSnapshots(map, 'erp', logger, policy);
    for (let i = 0; i < 8; i++) await snapshots.observe('invoice', 100);
    expect(calls).toEqual(['count 801', 'count 3201', 'read 3200']);
    expect(snapshots.holds('invoice')).toBe(true);
  });

  it('when the record map holds more than the limit, then it is never counted again in that pass', async () => {
    const { calls, map } = recordMap(1_000_000);
    const snapshots = new FingerprintSnapshots(map, 'erp', logger, policy);
    for (let i = 0; i < 100; i++) await snapshots.observe('invoice', 1_000);
    expect(calls).toEqual(['count 8001', 'count 10001']);
    expect(snapshots.holds('invoice')).toBe(false);
  });
});
