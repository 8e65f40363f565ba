import type { RecordOrigin, SourceRecord, Stream } from '../domain/records.js';
import { STREAM_OF, STREAM_ORDER } from '../domain/records.js';
import { type FailureRow, FILE_FAILURE_STAGE } from '../domain/sync-state.js';
import type { Source, SourceBatch, SourceUnit } from '../sources/source.js';

export interface ReplayItem {
  record: SourceRecord;
  origin: RecordOrigin;
}

const isRecord = (value: unknown): value is SourceRecord =>
  typeof value === 'object' && value !== null && 'kind' in value && 'sourceId' in value;

/**
 * A source over records already known to the state DB (a failure's stored payload, the record map's
 * last synced version): used to retry failures and to re-sync on demand. Accounts come first.
 */
export function replaySource(
  sourceId: string,
  type: string,
  items: readonly ReplayItem[],
  batchSize = 500,
): Source {
  return {
    id: sourceId,
    type,
    async *units(): AsyncIterable<SourceUnit> {
      for (const stream of STREAM_ORDER) {
        const ofStream = items.filter((i) => STREAM_OF[i.record.kind] === stream);
        if (ofStream.length > 0)
          yield unitOf(`${type}: ${ofStream.length} ${stream}`, stream, ofStream, batchSize);
      }
    },
  };
}

function unitOf(name: string, stream: Stream, items: readonly ReplayItem[], batchSize: number): SourceUnit {
  return {
    name,
    stream,
    async *batches(): AsyncIterable<SourceBatch> {
      for (let i = 0; i < items.length; i += batchSize)
        yield { records: items.slice(i, i + batchSize), rejected: [] };
    },
    complete: async () => {},
    abandon: async () => {},
    release: async () => {},
  };
}

/**
 * Failed records that can be retried as they are (their record was stored); the rows refused by
 * validation, which need corrected data first; and the files that could not be read at all, which
 * need the file (or the source's configuration) fixed and the file dropped again.
 */
export function retryableFailures(failures: readonly FailureRow[]): {
  items: ReplayItem[];
  needData: FailureRow[];
  needFile: FailureRow[];
} {
  const items: ReplayItem[] = [];
  const needData: FailureRow[] = [];
  const needFile: FailureRow[] = [];
  for (const f of failures) {
    if (f.stage === FILE_FAILURE_STAGE) {
      needFile.push(f);
      continue;
    }
    const record = f.payload?.record;
    if (!isRecord(record)) {
      needData.push(f);
      continue;
    }
    items.push({
      record,
      origin: { ...(f.file ? { file: f.file } : {}), ...(f.line ? { line: f.line } : {}) },
    });
  }
  return { items, needData, needFile };
}

/** Records of the record map as replay items (their origin is no longer known). */
export const storedItems = (rows: ReadonlyArray<{ record: Record<string, unknown> }>): ReplayItem[] =>
  rows
    .filter((r) => isRecord(r.record))
    .map((r) => ({ record: r.record as unknown as SourceRecord, origin: {} }));
