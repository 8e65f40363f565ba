import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ManualClock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logging/logger.js';
import { createCsvSource } from '../../src/sources/csv/csv-source.js';
import { InMemoryDropFileLedger } from '../../src/sources/ports.js';
import type { Source, SourceUnit } from '../../src/sources/source.js';
import { runSync, type SourceSummary } from '../../src/sync/run-sync.js';
import { FakeApi, FakeState } from '../unit/sync/fakes.js';

/**
 * A drop folder synced by the real CSV source through the real engine (`runSync`), against the
 * engine's in-memory API and state: what a pass reports (its summary, its run) is what `sync --once`
 * and the worker report. The log lines are kept as JSON objects.
 */

export const NOW = '2026-01-15T10:00:00.000Z';
export const DAY = '2026-01-15';
export const ACCOUNTS = 'sourceId,fullName,currencyCode\nACC-1,Atelier,EUR\n';
/** An invoices file without its `dueDate` column: rejected before any row is read. */
export const INVOICES_NO_DUE_DATE =
  'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount\nI-1,ACC-1,F-1,2026-01-02,1.00,0.00\n';
export const INVOICE_HEADER = 'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount';

export interface DropWorld {
  dir: string;
  clock: ManualClock;
  api: FakeApi;
  state: FakeState;
  logLines: Array<Record<string, unknown>>;
  /** Writes a file in the drop folder, modified an hour ago (complete at once). */
  drop(name: string, content: string): Promise<void>;
  /**
   * One pass of a fresh source over the folder (a new process, as `sync --once` runs it).
   * `beforeSettle` runs once a unit was read and synced, before it is completed or abandoned (its
   * file still in `.processing/`): where a test makes a fault happen between reading and settling.
   */
  pass(hooks?: { beforeSettle?: (unit: SourceUnit) => Promise<void> }): Promise<SourceSummary>;
  cleanup(): Promise<void>;
}

export async function dropWorld(
  options: { dir?: (base: string) => Promise<string>; strictColumns?: boolean } = {},
): Promise<DropWorld> {
  const base = await mkdtemp(join(tmpdir(), 'csv-drop-'));
  const root = options.dir ? await options.dir(base) : base;
  const clock = new ManualClock(NOW);
  const api = new FakeApi();
  const state = new FakeState();
  const ledger = new InMemoryDropFileLedger();
  const logLines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination });
  return {
    dir: root,
    clock,
    api,
    state,
    logLines,
    async drop(name, content) {
      const path = join(root, name);
      await writeFile(path, content);
      const hourAgo = new Date(clock.now().getTime() - 3_600_000);
      await utimes(path, hourAgo, hourAgo);
    },
    pass(hooks = {}) {
      const csv = createCsvSource({
        config: {
          id: 'erp-csv',
          type: 'csv',
          dropDir: root,
          stableSeconds: 5,
          mapping: {},
          strictColumns: options.strictColumns ?? false,
        },
        clock,
        logger,
        ledger,
      });
      const { beforeSettle } = hooks;
      const source = beforeSettle ? hookedSource(csv, beforeSettle) : csv;
      return runSync({ source, connectionId: 'erp-csv', api, state, logger, clock, concurrency: 1 });
    },
    async cleanup() {
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** `source` whose units call `beforeSettle` first when they are completed or abandoned. */
function hookedSource(source: Source, beforeSettle: (unit: SourceUnit) => Promise<void>): Source {
  const hooked = (unit: SourceUnit): SourceUnit =>
    new Proxy(unit, {
      get(target, property) {
        if (property === 'complete' || property === 'abandon')
          return async (...args: never[]) => {
            await beforeSettle(target);
            return (target[property] as (...a: never[]) => Promise<void>).apply(target, args);
          };
        // Getters and methods read the unit's private fields: `this` must be the unit itself.
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return {
    ...source,
    id: source.id,
    type: source.type,
    async *units(signal) {
      for await (const unit of source.units(signal)) yield hooked(unit);
    },
  };
}

/** A folder outside the drop folder holding one file, to check that nothing reached it. */
export interface Outside {
  dir: string;
  file: string;
  /** Its listing, the file's content and mtime, as they were made. */
  snapshot(): Promise<{ listing: string[]; content: string; mtimeMs: number }>;
  cleanup(): Promise<void>;
}

export async function outsideFolder(): Promise<Outside> {
  const dir = await mkdtemp(join(tmpdir(), 'csv-outside-'));
  const file = join(dir, 'precious.txt');
  await writeFile(file, 'precious content\n');
  const past = new Date('2025-06-01T00:00:00Z');
  await utimes(file, past, past);
  return {
    dir,
    file,
    async snapshot() {
      return {
        listing: (await readdir(dir)).sort(),
        content: await readFile(file, 'utf8'),
        mtimeMs: (await stat(file)).mtimeMs,
      };
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
