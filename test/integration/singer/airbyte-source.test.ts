import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/domain/records.js';
import { InMemoryCursorStore } from '../../../src/sources/ports.js';
import { createSingerSource, SINGER_STATE_STREAM } from '../../../src/sources/singer/index.js';

const logger = pino({ level: 'silent' });

/**
 * An Airbyte source of a few lines, as the Airbyte protocol has it (docs.airbyte.com, "Airbyte
 * Protocol"): `discover` writes LOG lines and a CATALOG message; `read` writes LOG, RECORD
 * (`{record: {stream, data, emitted_at}}`) and per-stream STATE messages (`{state: {type: STREAM,
 * stream: {stream_descriptor, stream_state}}}`), resuming from the `--state` list it is given; with
 * `fail` in its config it reports a TRACE error and exits 1. It logs the catalog and state it got.
 */
const SOURCE = `
import { appendFileSync, readFileSync } from 'node:fs';
const [command, ...args] = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const config = JSON.parse(readFileSync(flag('--config'), 'utf8'));
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const log = (message) => out({ type: 'LOG', log: { level: 'INFO', message } });
if (command === 'discover') {
  log('discovering');
  out({ type: 'CATALOG', catalog: { streams: [
    { name: 'customers', json_schema: { type: 'object', properties: { id: { type: 'string' }, balance: { type: ['null', 'number'] } } },
      supported_sync_modes: ['full_refresh', 'incremental'], source_defined_cursor: true, default_cursor_field: ['updated'],
      source_defined_primary_key: [['id']] },
    { name: 'charges', json_schema: { type: 'object' }, supported_sync_modes: ['full_refresh'] },
  ] } });
  process.exit(0);
}
const catalog = JSON.parse(readFileSync(flag('--catalog'), 'utf8'));
const state = flag('--state') ? JSON.parse(readFileSync(flag('--state'), 'utf8')) : null;
appendFileSync(config.log, JSON.stringify({ catalog, state }) + '\\n');
const after = state ? state.find((s) => s.stream.stream_descriptor.name === 'customers').stream.stream_state.updated : 0;
log('reading');
for (let i = after + 1; i <= Math.min(after + 2, 4); i++) {
  out({ type: 'RECORD', record: { stream: 'customers', emitted_at: 1767225600000, data: { id: 'C' + i, name: 'Customer ' + i, currency: 'eur', updated: i } } });
  out({ type: 'STATE', state: { type: 'STREAM', stream: { stream_descriptor: { name: 'customers' }, stream_state: { updated: i } } } });
}
if (config.fail) {
  out({ type: 'TRACE', trace: { type: 'ERROR', emitted_at: 1, error: { message: 'Stripe said 401: invalid API key', failure_type: 'config_error' } } });
  process.exit(1);
}
`;

describe('an Airbyte source (protocol: airbyte)', () => {
  let dir: string;
  const run = async (cursors: InMemoryCursorStore, config: Record<string, unknown>) => {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ log: join(dir, 'calls.log'), ...config }));
    const source = createSingerSource({
      config: {
        id: 'stripe',
        protocol: 'airbyte',
        command: [process.execPath, join(dir, 'source.mjs')],
        config: join(dir, 'config.json'),
        cwd: dir,
        streams: { customers: { kind: 'accounts', columns: { fullName: 'name', currencyCode: 'currency' } } },
      },
      cursors,
      logger,
      workDir: join(dir, 'work'),
    });
    const records: SourceRecord[] = [];
    for await (const unit of source.units()) {
      for await (const batch of unit.batches()) {
        records.push(...batch.records.map((r) => r.record));
        await unit.failed?.([]);
      }
      await unit.complete({ failures: [] });
    }
    return records.map((r) => r.sourceId);
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rs-airbyte-'));
    writeFileSync(join(dir, 'source.mjs'), SOURCE);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs discover then read with a configured catalog, and resumes from the per-stream states it stored', async () => {
    const cursors = new InMemoryCursorStore();
    expect(await run(cursors, {})).toEqual(['C1', 'C2']);
    const stored = await cursors.get('stripe', SINGER_STATE_STREAM);
    expect(stored).toEqual({
      state: [
        {
          type: 'STREAM',
          stream: { stream_descriptor: { name: 'customers' }, stream_state: { updated: 2 } },
        },
      ],
    });
    expect(await run(cursors, {})).toEqual(['C3', 'C4']);

    const [first, second] = readFileSync(join(dir, 'calls.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Only the configured stream, incremental on the source's own cursor.
    expect(first.catalog.streams).toEqual([
      expect.objectContaining({
        stream: expect.objectContaining({ name: 'customers' }),
        sync_mode: 'incremental',
        cursor_field: ['updated'],
        destination_sync_mode: 'append',
      }),
    ]);
    expect(first.state).toBeNull();
    expect(second.state).toEqual(stored!.state);
  });

  it("fails with the source's own TRACE error when it exits non-zero, the cursor unchanged", async () => {
    const cursors = new InMemoryCursorStore();
    await expect(run(cursors, { fail: true })).rejects.toThrow(
      /the tap exited with code 1; it reported: Stripe said 401: invalid API key/,
    );
    expect(await cursors.get('stripe', SINGER_STATE_STREAM)).toBeNull();
  });
});
