import { isoDateOf, type RecordOrigin, type RowProblem, type SourceRecord } from '../domain/records.js';
import type { SourceBatch } from '../sources/source.js';

/** How a unit's first rows read, for a dry run to show before its plan. */
export interface UnitPreview {
  unit: string;
  rows: PreviewRow[];
}

/** One row as the configuration reads it: its record in a line, or why it is refused. */
export interface PreviewRow {
  line: number | null;
  text: string;
}

/** Rows shown per unit: enough to see the columns and formats read right, short enough to read. */
export const PREVIEW_ROWS = 3;

/**
 * Takes the first rows of a unit's batches, in line order (a batch's accounts, read from document
 * rows, come with the document's line), records and refusals alike, then the first record of each
 * other kind and the first refusal met later (a credit note on line 40 of an invoices file): a
 * user sees how the file reads under the configuration before anything is written.
 */
export class PreviewCollector {
  readonly rows: PreviewRow[] = [];
  /** Kinds shown so far: past the first rows, the first record of another kind is shown too. */
  readonly #kinds = new Set<string>();
  #refusals = 0;

  take(batch: SourceBatch): void {
    const items: Array<{ line: number | null; text: string; kind: string | null }> = [
      ...batch.records.map(({ record, origin }) => ({
        line: lineOf(origin),
        text: describeRecord(record),
        kind: record.kind as string | null,
      })),
      ...batch.rejected.map((problem) => ({
        line: problem.line ?? null,
        text: describeProblem(problem),
        kind: null,
      })),
    ];
    items.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
    for (const item of items) {
      const first = this.rows.length < PREVIEW_ROWS;
      const newKind = item.kind !== null && !this.#kinds.has(item.kind);
      const firstRefusal = item.kind === null && this.#refusals === 0;
      if (!first && !newKind && !firstRefusal) continue;
      this.rows.push({ line: item.line, text: item.text });
      if (item.kind !== null) this.#kinds.add(item.kind);
      else this.#refusals++;
    }
  }
}

const lineOf = (origin: RecordOrigin): number | null => origin.line ?? null;

/** `invoice RE-1 (account 10001): total 1428.00, tax 228.00, paid 1428.00, issued 2026-01-12, due 2026-02-11`. */
export function describeRecord(record: SourceRecord): string {
  switch (record.kind) {
    case 'account': {
      const where = [record.billingAddress.city, record.billingAddress.country].filter(Boolean).join(', ');
      return `account ${record.sourceId}: "${record.fullName}", ${record.currencyCode}${where ? `, ${where}` : ''}`;
    }
    case 'invoice':
      return (
        `invoice ${record.sourceId} (number ${record.number}, account ${record.accountSourceId}): ` +
        `total ${record.totalAmount}, tax ${record.taxAmount}, paid ${record.paidAmount ?? (record.paidAmountUnknown ? 'not given' : '0')}, ` +
        `issued ${isoDateOf(record.issuedDate)}, due ${isoDateOf(record.dueDate)}`
      );
    case 'creditNote':
      return (
        `credit note ${record.sourceId} (number ${record.number}, account ${record.accountSourceId}): ` +
        `total ${record.totalAmount}, tax ${record.taxAmount}, issued ${isoDateOf(record.issuedDate)}`
      );
  }
}

const describeProblem = (problem: RowProblem): string =>
  `refused (${problem.kind}${problem.column ? `, ${problem.column}` : ''}): ${problem.reason}`;
