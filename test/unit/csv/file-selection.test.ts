import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import {
  isIgnoredName,
  orderDropFiles,
  StabilityTracker,
  streamOfFileName,
} from '../../../src/sources/csv/file-selection.js';

describe('streamOfFileName', () => {
  it('when a name matches a pattern in any case, then it gives the stream', () => {
    expect(streamOfFileName('accounts.csv')).toBe('accounts');
    expect(streamOfFileName('Accounts-2026-01.CSV')).toBe('accounts');
    expect(streamOfFileName('INVOICES_january.csv')).toBe('invoices');
    expect(streamOfFileName('credit-notes.csv')).toBe('creditNotes');
    expect(streamOfFileName('Credit-Notes-02.Csv')).toBe('creditNotes');
  });

  it('when a name matches no pattern, then the file is not taken', () => {
    for (const name of [
      'payments.csv',
      'invoices.xlsx',
      'my-invoices.csv',
      'credit_notes.csv',
      'invoices.csv.bak',
      'readme.md',
    ]) {
      expect(streamOfFileName(name), name).toBeNull();
    }
  });

  it('when a name is hidden or ends in .tmp or .part, then it is never taken', () => {
    for (const name of [
      '.invoices.csv',
      'invoices.csv.tmp',
      'invoices.csv.part',
      'invoices.csv.PART',
      '.~lock.accounts.csv#',
    ]) {
      expect(isIgnoredName(name), name).toBe(true);
      expect(streamOfFileName(name), name).toBeNull();
    }
  });
});

describe('orderDropFiles', () => {
  it('when files of every kind are dropped, then accounts come first, then invoices, then credit notes, each by name ignoring case', () => {
    const names = [
      'credit-notes-b.csv',
      'INVOICES-2.csv',
      'notes.txt',
      'accounts-b.csv',
      'credit-notes-a.csv',
      'invoices-1.csv',
      'Accounts-a.csv',
      'invoices.csv.part',
    ];
    expect(orderDropFiles(names)).toEqual([
      { name: 'Accounts-a.csv', stream: 'accounts' },
      { name: 'accounts-b.csv', stream: 'accounts' },
      { name: 'invoices-1.csv', stream: 'invoices' },
      { name: 'INVOICES-2.csv', stream: 'invoices' },
      { name: 'credit-notes-a.csv', stream: 'creditNotes' },
      { name: 'credit-notes-b.csv', stream: 'creditNotes' },
    ]);
  });
});

describe('StabilityTracker', () => {
  const clock = new ManualClock('2026-01-15T10:00:00Z');
  const at = (offsetSeconds: number): number => clock.now().getTime() + offsetSeconds * 1000;

  it('when a file was last modified longer ago than stableSeconds, then it is complete at once', () => {
    const tracker = new StabilityTracker(5);
    expect(tracker.isComplete('a.csv', { size: 10, mtimeMs: at(-5) }, at(0))).toBe(true);
    expect(tracker.isComplete('b.csv', { size: 10, mtimeMs: at(-3600) }, at(0))).toBe(true);
  });

  it('when a file was modified recently, then it waits until stableSeconds have passed since', () => {
    const tracker = new StabilityTracker(5);
    const stamp = { size: 10, mtimeMs: at(-2) };
    expect(tracker.isComplete('a.csv', stamp, at(0))).toBe(false);
    expect(tracker.isComplete('a.csv', stamp, at(2))).toBe(false);
    expect(tracker.isComplete('a.csv', stamp, at(3))).toBe(true);
  });

  it('when a file keeps growing, then it is not complete until it stops', () => {
    const tracker = new StabilityTracker(5);
    expect(tracker.isComplete('a.csv', { size: 10, mtimeMs: at(0) }, at(1))).toBe(false);
    expect(tracker.isComplete('a.csv', { size: 20, mtimeMs: at(4) }, at(6))).toBe(false);
    expect(tracker.isComplete('a.csv', { size: 20, mtimeMs: at(4) }, at(9))).toBe(true);
  });

  it('when the mtime is in the future (a writer clock ahead), then size and mtime must stay unchanged for stableSeconds', () => {
    const tracker = new StabilityTracker(5);
    const ahead = { size: 10, mtimeMs: at(3600) };
    expect(tracker.isComplete('a.csv', ahead, at(0))).toBe(false);
    expect(tracker.isComplete('a.csv', ahead, at(4))).toBe(false);
    expect(tracker.isComplete('a.csv', { size: 11, mtimeMs: at(3600) }, at(5))).toBe(false);
    expect(tracker.isComplete('a.csv', { size: 11, mtimeMs: at(3600) }, at(10))).toBe(true);
  });

  it('when stableSeconds is 0, then every file is complete at once', () => {
    expect(new StabilityTracker(0).isComplete('a.csv', { size: 1, mtimeMs: at(0) }, at(0))).toBe(true);
  });
});
