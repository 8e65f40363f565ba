import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/domain/records.js';
import { InMemoryCursorStore } from '../../../src/sources/ports.js';
import { createSingerSource, SINGER_STATE_STREAM } from '../../../src/sources/singer/index.js';

const logger = pino({ level: 'silent' });

/**
 * A tap of a few lines, run as a real child process: `--discover` prints a catalog of two streams
 * (customers, charges); a run writes the records after the `--state` it was given, and fails as its
 * config says. It records the arguments and catalog it was given, for the test to read.
 */
const TAP = `
import { appendFileSync, readFileSync } from 'node:fs';
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const config = JSON.parse(readFileSync(flag('--config'), 'utf8'));
appendFileSync(config.log, JSON.stringify({ args, catalog: flag('--catalog') ? JSON.parse(readFileSync(flag('--catalog'), 'utf8')) : null }) + '\\n');
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
if (args.includes('--discover')) {
  out({ streams: [
    { tap_stream_id: 'customers', stream: 'customers', schema: { type: 'object', properties: {} },
      metadata: [{ breadcrumb: [], metadata: { 'table-key-properties': ['id'] } },
                 { breadcrumb: ['properties', 'id'], metadata: { inclusion: 'automatic' } },
                 { breadcrumb: ['properties', 'secret'], metadata: { inclusion: 'unsupported' } }] },
    { tap_stream_id: 'charges', stream: 'charges', schema: { type: 'object', properties: {} }, metadata: [] },
  ] });
  process.exit(0);
}
const state = flag('--state') ? JSON.parse(readFileSync(flag('--state'), 'utf8')) : { after: 0 };
out({ type: 'SCHEMA', stream: 'customers', key_properties: ['id'], schema: { type: 'object', properties: { id: { type: 'string' } } } });
for (let i = state.after + 1; i <= Math.min(state.after + config.perRun, config.total); i++) {
  out({ type: 'RECORD', stream: 'customers', record: { id: 'C' + i, name: 'Customer ' + i, currency: 'EUR' } });
  out({ type: 'STATE', value: { after: i } });
  if (config.dieAfter === i) { console.error('ERROR 503 from the API: giving up'); process.exit(2); }
}
`;

describe('a Singer source running its tap', () => {
  let dir: string;
  let tapFile: string;
  const configure = (name: string, config: Record<string, unknown>) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ log: join(dir, `${name}.log`), perRun: 3, total: 5, ...config }));
    return file;
  };
  const calls = (name: string) => readFileSync(join(dir, `${name}.log`));
  const source = (name: string, cursors: InMemoryCursorStore, extra: Record<string, unknown> = {}) =>
    createSingerSource({
      config: {
        id: name,
        command: [process.execPath, tapFile],
        config: join(dir, `${name}.json`),
        cwd: dir,
        streams: { customers: { kind: 'accounts', columns: { fullName: 'name', currencyCode: 'currency' } } },
        ...extra,
      },
      cursors,
      logger,
      workDir: join(dir, 'work'),
    });
  const pass = async (s: ReturnType<typeof source>) => {
    const records: SourceRecord[] = [];
    for await (const unit of s.units()) {
      for await (const batch of unit.batches()) {
        records.push(...batch.records.map((r) => r.record));
        await unit.failed?.([]);
      }
      await unit.complete({ failures: [] });
    }
    return records.map((r) => r.sourceId);
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rs-singer-'));
    tapFile = join(dir, 'tap.mjs');
    writeFileSync(tapFile, TAP);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('discovers, selects the configured streams, and resumes from the STATE it stored', async () => {
    configure('waves', {});
    const cursors = new InMemoryCursorStore();
    const s = source('waves', cursors);
    expect(await pass(s)).toEqual(['C1', 'C2', 'C3']);
    expect(await cursors.get('waves', SINGER_STATE_STREAM)).toEqual({ state: { after: 3 } });
    expect(await pass(s)).toEqual(['C4', 'C5']);
    expect(await cursors.get('waves', SINGER_STATE_STREAM)).toEqual({ state: { after: 5 } });

    const all = calls('waves')
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Each pass discovers, then runs.
    expect(all.map((c: { args: string[] }) => c.args.includes('--discover'))).toEqual([
      true,
      false,
      true,
      false,
    ]);
    const [first, second] = all.filter((c: { args: string[] }) => !c.args.includes('--discover'));
    const selected = Object.fromEntries(
      first.catalog.streams.map(
        (st: {
          tap_stream_id: string;
          metadata: Array<{ breadcrumb: string[]; metadata: { selected?: boolean } }>;
        }) => [
          st.tap_stream_id,
          Object.fromEntries(
            st.metadata.map((m) => [m.breadcrumb.join('.') || '(stream)', m.metadata.selected]),
          ),
        ],
      ),
    );
    expect(selected).toEqual({
      customers: { '(stream)': true, 'properties.id': true, 'properties.secret': false },
      charges: { '(stream)': false },
    });
    expect(first.args).not.toContain('--state');
    expect(second.args).toContain('--state');
    // The run's files (state, catalog) are gone once it ended.
    expect(readdirSync(join(dir, 'work'))).toEqual([]);
  });

  it('fails the pass when the tap exits non-zero, with its stderr; the cursor stays; the next pass resumes', async () => {
    const config = configure('dies', { dieAfter: 2 });
    const cursors = new InMemoryCursorStore();
    await cursors.set('dies', SINGER_STATE_STREAM, { state: { after: 0 } });
    const s = source('dies', cursors);
    await expect(pass(s)).rejects.toThrow(
      /the tap exited with code 2; its last stderr lines:\n {2}ERROR 503 from the API/,
    );
    expect(await cursors.get('dies', SINGER_STATE_STREAM)).toEqual({ state: { after: 0 } });
    writeFileSync(config, JSON.stringify({ log: join(dir, 'dies.log'), perRun: 3, total: 5 }));
    expect(await pass(s)).toEqual(['C1', 'C2', 'C3']);
  });

  it('names the stream the tap does not have', async () => {
    configure('missing', {});
    const s = source('missing', new InMemoryCursorStore(), {
      streams: { invoices: { kind: 'invoices' } },
    });
    await expect(pass(s)).rejects.toThrow(
      'the tap has no stream "invoices" (its streams: customers, charges)',
    );
  });
});
