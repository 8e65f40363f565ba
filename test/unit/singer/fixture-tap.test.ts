import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** The fixture Singer tap and its recordings (test/fixtures/singer/README.md). */
const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'singer');
const TAP = join(FIXTURES, 'tap.mjs');
const TAPS = ['stripe', 'quickbooks', 'xero'] as const;
type Tap = (typeof TAPS)[number];

const work = mkdtempSync(join(tmpdir(), 'fixture-tap-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let files = 0;
function file(content: unknown): string {
  const path = join(work, `f${++files}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  lines: string[];
}

function runTap(config: object, ...args: string[]): Run {
  const child = spawnSync(process.execPath, [TAP, '--config', file(config), ...args], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 30_000,
  });
  const lines = child.stdout.split('\n').filter((l) => l !== '');
  return { status: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr, lines };
}

const messages = (run: Run) => run.lines.map((l) => JSON.parse(l));
const records = (run: Run) => messages(run).filter((m) => m.type === 'RECORD');
const states = (run: Run) => messages(run).filter((m) => m.type === 'STATE');

/** The id of a record of any of the three taps. */
function idOf(record: Record<string, unknown>): string {
  return String(
    record.id ?? record.Id ?? record.ContactID ?? record.InvoiceID ?? record.CreditNoteID ?? record.Code,
  );
}

describe('fixture tap: replaying a recording', () => {
  it.each(TAPS)(
    'when %s is replayed, then every line is a Singer message and each stream has a SCHEMA before its records',
    (tap) => {
      const run = runTap({ recording: tap });
      expect(run.status).toBe(0);
      const schemaSeen = new Set<string>();
      for (const line of run.lines) {
        const m = JSON.parse(line);
        expect(['SCHEMA', 'RECORD', 'STATE', 'ACTIVATE_VERSION']).toContain(m.type);
        if (m.type === 'SCHEMA') {
          expect(m.schema).toBeTypeOf('object');
          expect(Array.isArray(m.key_properties)).toBe(true);
          schemaSeen.add(m.stream);
        }
        if (m.type === 'RECORD') {
          expect(schemaSeen.has(m.stream), `RECORD of ${m.stream} before its SCHEMA`).toBe(true);
          expect(m.record).toBeTypeOf('object');
        }
        if (m.type === 'STATE') expect(m.value).toBeTypeOf('object');
      }
      expect(run.stdout).not.toContain('_WAVE_BREAK');
    },
  );

  it('when a recording is replayed, then its lines are written byte for byte (Python floats and escapes kept)', () => {
    const recorded = readFileSync(join(FIXTURES, 'xero', 'messages.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.includes('_WAVE_BREAK'));
    const run = runTap({ recording: 'xero' });
    expect(run.lines).toEqual(recorded);
    expect(run.stdout).toContain('"Total": 1440.0');
    expect(run.stdout).toContain('"TotalTax": 0.1');
    expect(run.stdout).toContain('M\\u00fcller & S\\u00f6hne GmbH');
  });

  it('when an invoice arrives before its customer, then the recordings show it (stripe: catalog order, quickbooks: batch rounds)', () => {
    for (const [tap, stream, ref] of [
      ['stripe', 'customers', (r: any) => r.customer],
      ['quickbooks', 'customers', (r: any) => r.CustomerRef?.value],
    ] as const) {
      const seen = new Set<string>();
      let early = 0;
      for (const m of records(runTap({ recording: tap, wave: 1 }))) {
        if (m.stream === stream) seen.add(idOf(m.record));
        else if (ref(m.record) && !seen.has(ref(m.record))) early++;
      }
      expect(early, tap).toBeGreaterThan(0);
    }
  });
});

/** Wave 1, then wave 2 with wave 1's last state: the records wave 2 brings. */
function twoWaves(tap: Tap) {
  const wave1 = runTap({ recording: tap, wave: 1 });
  expect(wave1.status).toBe(0);
  const lastState = states(wave1).at(-1)!.value;
  const wave2 = runTap({ recording: tap, wave: 2 }, '--state', file(lastState));
  expect(wave2.status).toBe(0);
  return { wave1, lastState, wave2 };
}

const keys = (run: Run) =>
  records(run)
    .map((m) => `${m.stream}:${idOf(m.record)}`)
    .sort();

describe('fixture tap: two waves', () => {
  it('when stripe wave 2 runs with wave 1 state, then only the new customer, its invoice and the paid invoice come', () => {
    const { wave2 } = twoWaves('stripe');
    expect(keys(wave2)).toEqual(
      [
        // created pass and events pass: each new object twice
        'customers:cus_SA2nT8hL4cQwY7',
        'customers:cus_SA2nT8hL4cQwY7',
        'invoices:in_1RKbM13LkdIwHu7ixR8wTuV3',
        'invoices:in_1RKbM13LkdIwHu7ixR8wTuV3',
        'invoices:in_1QqB02LkdIwHu7ixW4mNcE7B',
      ].sort(),
    );
    const paid = records(wave2).find((m) => m.record.id === 'in_1QqB02LkdIwHu7ixW4mNcE7B')!;
    expect(paid.record).toMatchObject({
      status: 'paid',
      amount_paid: 54060,
      updated_by_event_type: 'invoice.paid',
    });
  });

  it('when quickbooks wave 2 runs with wave 1 state, then the new and updated records come, and the last record of each stream again (its query is >=)', () => {
    const { wave2 } = twoWaves('quickbooks');
    expect(keys(wave2)).toEqual(
      [
        'customers:66',
        'invoices:143',
        'invoices:138',
        'credit_memos:152',
        'customers:58',
        'invoices:142',
      ].sort(),
    );
    const paid = records(wave2).filter((m) => m.record.Id === '138');
    expect(paid.at(-1).record.Balance).toBe('0');
  });

  it('when xero wave 2 runs with wave 1 state, then the new contact, its invoice and the paid invoice come, and the FULL_TABLE stream in full', () => {
    const { wave2 } = twoWaves('xero');
    expect(keys(wave2)).toEqual(
      [
        'contacts:b9a8c7d6-e5f4-4a3b-8c2d-9e8f7a6b5c49',
        'invoices:a0b1c2d3-0012-4e5f-8a9b-0c1d2e3f4a12',
        'invoices:a0b1c2d3-0002-4e5f-8a9b-0c1d2e3f4a02',
        'currencies:GBP',
        'currencies:EUR',
        'currencies:NOK',
        'currencies:SEK',
      ].sort(),
    );
    expect(wave2.stdout).toContain('"AmountPaid": 1250.5');
  });

  it.each(TAPS)(
    'when %s wave 2 continues from wave 1 state, then its STATE messages never go back and end where the whole recording ends',
    (tap) => {
      const { lastState, wave2 } = twoWaves(tap);
      const all = runTap({ recording: tap });
      const values = states(wave2).map((m) => m.value);
      expect(values.length).toBeGreaterThan(0);
      expect(values.at(-1)).toEqual(states(all).at(-1)!.value);
      const bookmarks = (v: any) => JSON.stringify(v.bookmarks ?? {});
      expect(bookmarks(values[0])).not.toBe('{}');
      // Every bookmark of wave 1 is still there, at the same or a later value.
      for (const v of values) {
        for (const [stream, marks] of Object.entries<any>(lastState.bookmarks)) {
          for (const [key, value] of Object.entries<any>(marks)) {
            const now = v.bookmarks[stream][key];
            const instant = (x: any) => (typeof x === 'number' ? x * 1000 : Date.parse(x));
            expect(instant(now), `${tap} ${stream}.${key}`).toBeGreaterThanOrEqual(instant(value));
          }
        }
      }
    },
  );

  it('when wave 2 runs without state, then both runs are replayed, the changed invoice last in its new version', () => {
    const wave1 = runTap({ recording: 'xero', wave: 1 });
    const all = runTap({ recording: 'xero', wave: 2 });
    expect(records(all).length).toBe(records(wave1).length + 3);
    const inv2 = records(all).filter((m) => m.record.InvoiceNumber === 'INV-0002');
    expect(inv2.map((m) => m.record.Status)).toEqual(['AUTHORISED', 'PAID']);
  });

  it('when a startDate is set and there is no state, then older records are left out', () => {
    const run = runTap({ recording: 'xero', wave: 1, startDate: '2025-04-01T00:00:00Z' });
    const numbers = records(run)
      .filter((m) => m.stream === 'invoices')
      .map((m) => m.record.InvoiceNumber);
    expect(numbers).toEqual(['OSD-88412', 'INV-0010', 'INV-0008', 'INV-0011']);
  });
});

describe('fixture recordings: expected.json', () => {
  const KINDS: Record<Tap, Record<string, 'accounts' | 'invoices' | 'creditNotes'>> = {
    stripe: { customers: 'accounts', invoices: 'invoices' },
    quickbooks: { customers: 'accounts', invoices: 'invoices', credit_memos: 'creditNotes' },
    xero: { contacts: 'accounts', invoices: 'invoices', credit_notes: 'creditNotes' },
  };

  it.each(TAPS)(
    'when %s expected.json is read, then it names every record of the mapped streams once, in the wave it arrives in',
    (tap) => {
      const expected = JSON.parse(readFileSync(join(FIXTURES, tap, 'expected.json'), 'utf8'));
      const firstWave = new Map<string, number>();
      for (const [wave, run] of [
        [1, runTap({ recording: tap, wave: 1 })],
        [2, runTap({ recording: tap })],
      ] as const) {
        for (const m of records(run)) {
          const kind = KINDS[tap][m.stream];
          // By id alone: a stream's record may be of another kind (a negative Stripe invoice, a credit note).
          if (kind && !firstWave.has(idOf(m.record))) firstWave.set(idOf(m.record), wave);
        }
      }
      const named = new Map<string, number | 'skipped'>();
      for (const kind of ['accounts', 'invoices', 'creditNotes'] as const) {
        for (const e of expected[kind]) named.set(e.sourceId, e.wave);
      }
      for (const s of expected.skipped) named.set(s.sourceId, 'skipped');
      expect([...named.keys()].sort()).toEqual([...firstWave.keys()].sort());
      for (const [key, wave] of named) if (wave !== 'skipped') expect(wave, key).toBe(firstWave.get(key));
      for (const kind of ['accounts', 'invoices', 'creditNotes'] as const)
        expect(expected[kind].length, kind).toBe(expected.counts.afterWave2[kind]);
    },
  );
});

describe('fixture tap: faults', () => {
  it('when exitAfter is set, then it writes that many messages, a CRITICAL line on stderr, and exits 1', () => {
    const run = runTap({ recording: 'stripe', exitAfter: 7, stderr: ['INFO starting', 'WARNING slow API'] });
    expect(run.status).toBe(1);
    expect(run.lines).toHaveLength(7);
    expect(run.stderr).toContain('WARNING slow API');
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^CRITICAL .*exitAfter 7/);
  });

  it('when killSelfAfter is set, then it dies of SIGKILL right after that many records', () => {
    const run = runTap({ recording: 'quickbooks', killSelfAfter: 4 });
    expect(run.signal).toBe('SIGKILL');
    expect(records(run)).toHaveLength(4);
    expect(run.lines.at(-1)).toContain('"type": "RECORD"');
  });

  it('when garbageAfter is set, then one line is not JSON and the rest goes on', () => {
    const run = runTap({ recording: 'stripe', wave: 1, garbageAfter: 3 });
    const whole = runTap({ recording: 'stripe', wave: 1 });
    expect(run.status).toBe(0);
    expect(run.lines).toHaveLength(whole.lines.length + 1);
    expect(() => JSON.parse(run.lines[3]!)).toThrow();
    expect(run.lines.filter((l) => !l.startsWith('{'))).toHaveLength(1);
  });

  it('when hangAfter is set, then it writes that many messages and stays alive writing nothing', async () => {
    const child = spawn(process.execPath, [TAP, '--config', file({ recording: 'xero', hangAfter: 5 })]);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      await expect.poll(() => out.split('\n').filter(Boolean).length, { timeout: 5000 }).toBe(5);
      const before = out;
      await new Promise((r) => setTimeout(r, 400));
      expect(out).toBe(before);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });
});

describe('fixture tap: discovery and catalogs', () => {
  it('when run with --discover, then it prints a catalog of the recording streams with replication metadata', () => {
    const run = runTap({ recording: 'quickbooks' }, '--discover');
    expect(run.status).toBe(0);
    expect(run.lines.length).toBeGreaterThan(1); // pretty-printed, as the real taps print it
    const catalog = JSON.parse(run.stdout);
    expect(catalog.streams.map((s: any) => s.tap_stream_id)).toEqual([
      'credit_memos',
      'customers',
      'invoices',
    ]);
    const invoices = catalog.streams.find((s: any) => s.stream === 'invoices');
    const top = invoices.metadata.find((m: any) => m.breadcrumb.length === 0).metadata;
    expect(top).toMatchObject({
      'table-key-properties': ['Id'],
      'replication-key': 'MetaData',
      'valid-replication-keys': ['MetaData'],
      selected: false,
    });
    expect(invoices.schema.properties.TotalAmt).toEqual({
      format: 'singer.decimal',
      type: ['null', 'string'],
    });
  });

  it('when a catalog selects some streams, then only those are written (STATE still is)', () => {
    const catalog = JSON.parse(runTap({ recording: 'stripe' }, '--discover').stdout);
    for (const s of catalog.streams) s.metadata[0].metadata.selected = s.stream === 'invoices';
    const run = runTap({ recording: 'stripe' }, '--catalog', file(catalog));
    const streams = new Set(
      messages(run)
        .filter((m) => m.type !== 'STATE')
        .map((m) => m.stream),
    );
    expect([...streams]).toEqual(['invoices']);
    expect(states(run).length).toBeGreaterThan(0);
  });
});

describe('fixture tap: generator', () => {
  it('when generating, then it writes that many valid records with a STATE every 1,000 and resumes from a STATE', () => {
    const config = { generate: { customers: 10, invoices: 2500, shape: 'stripe' } };
    const run = runTap(config);
    expect(run.status).toBe(0);
    const all = messages(run);
    expect(all.filter((m) => m.type === 'RECORD' && m.stream === 'customers')).toHaveLength(10);
    expect(all.filter((m) => m.type === 'RECORD' && m.stream === 'invoices')).toHaveLength(2500);
    expect(states(run)).toHaveLength(3);
    const customers = new Set(
      all.filter((m) => m.stream === 'customers' && m.record).map((m) => m.record.id),
    );
    for (const m of all.filter((x) => x.type === 'RECORD' && x.stream === 'invoices')) {
      expect(customers.has(m.record.customer)).toBe(true);
      expect(Number.isInteger(m.record.total)).toBe(true);
    }
    const firstState = states(run)[0]!.value;
    const resumed = runTap(config, '--state', file(firstState));
    expect(records(resumed)).toHaveLength(2510 - 1000);
  });
});
