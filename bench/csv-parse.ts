/**
 * CSV source throughput and memory, against bare csv-parse on the same file in the source's mode.
 *
 *   npx tsx bench/csv-parse.ts [file.csv] [--rows N] [--repeat N] [--case contract|german]
 *
 * Two cases, both by default (`--case` runs one): the contract's own format, and a German ERP's
 * export (bench/german-invoices.ts). Without a file, a synthetic invoices CSV of N rows (default
 * 1,000,000) is generated once in `os.tmpdir()` and reused; a file given is the contract case's
 * (the German file is always generated, N rows). Each measurement runs in its own child process,
 * so its peak RSS (`VmHWM`, see `peakRssMB`) is its own. The contract case:
 *
 * - `bare`: csv-parse streaming the file in the mode and with the options the source reads it
 *   (`CSV_PARSE_OPTIONS`: array rows, BOM, relaxed column count, empty lines skipped, a record size
 *   limit), rows counted and dropped: the baseline the ratio is against;
 * - `columns`: the same with `columns: true` (rows as objects), the baseline of earlier versions of
 *   this bench, about 1.6x slower than `bare`: printed for continuity only, never the goal;
 * - `source`: the CSV source's whole path on a drop folder holding the file: claim, checksum and
 *   UTF-8 check, header, parse, validation, batches drained, archive (no downstream sync), with the
 *   CLI's heap settings (src/cli/heap-growth.ts: the old generation's growth and the young
 *   generation's size bounded), as `sync --once` runs it; `--v8-default-heap`: with V8's own.
 *
 * The German case, on a file of Windows-1252 bytes, `;`, CRLF, amounts like `1.440,00` and dates
 * like `12.01.2026`:
 *
 * - `bare-german`: csv-parse with the source's options and `delimiter: ';'`, the bytes decoded by
 *   a streaming `TextDecoder('windows-1252')` as the source decodes them, rows counted and dropped;
 * - `source-german`: the CSV source's whole path with `files`, `format` and `columns` settings that
 *   read it (`germanSourceConfig`): the same as `source`, plus decoding and amounts and dates
 *   rewritten into the contract's form. Its first batch's records are compared with the values the
 *   generator wrote, and any refused row fails the bench: it must measure the real work.
 *
 * Each is run `--repeat` times (default 3), alternating: the best rows/s, the least CPU time and
 * the worst peak RSS are kept, so a busy machine skews the ratio less and the memory figure errs
 * high; the ratio by CPU time is printed beside the ratio by rows/s.
 *
 * Prints one line per figure, then one JSON line. Goals: source >= 0.7 x bare rows/s, source
 * peak RSS <= 200 MB; source-german >= 0.6 x bare-german rows/s, peak RSS <= 250 MB. Exit code 1
 * when a goal is missed. The machine's other work shows in both figures: on a shared machine,
 * compare several runs.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { link, mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { capYoungGeneration, limitHeapGrowth } from '../src/cli/heap-growth.js';
import type { SourceRecord } from '../src/domain/records.js';
import { CSV_PARSE_OPTIONS } from '../src/sources/csv/csv-rows.js';
import type { CsvSourceConfig } from '../src/sources/csv/csv-source.js';
import {
  type Case,
  type CaseRuns,
  type Measurement,
  MODES_OF,
  type Mode,
  reportContract,
  reportGerman,
} from './csv-parse-figures.js';
import { generateInvoicesCsv } from './generate-csv.js';

/**
 * The source's modules (and the German settings, which load the configuration's schema) are loaded
 * only where they are used: a bare child's peak RSS is csv-parse's, not that of modules it never
 * runs (date-fns alone, through the ESM loader of Node 24, takes the RSS past 300 MB).
 */
const sourceModules = async () => {
  const [csv, clock, logging, ports] = await Promise.all([
    import('../src/sources/csv/csv-source.js'),
    import('../src/domain/clock.js'),
    import('../src/logging/logger.js'),
    import('../src/sources/ports.js'),
  ]);
  return { ...csv, ...clock, ...logging, ...ports };
};
const germanInvoices = () => import('./german-invoices.js');

/** When a measurement starts: wall clock and CPU time. */
const start = () => ({ at: performance.now(), cpu: process.cpuUsage() });

const finish = (mode: Mode, rows: number, started: ReturnType<typeof start>): Measurement => {
  const ms = performance.now() - started.at;
  const cpu = process.cpuUsage(started.cpu);
  return {
    mode,
    rows,
    ms: Math.round(ms),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    rowsPerSecond: Math.round(rows / (ms / 1000)),
    maxRssMB: peakRssMB(),
  };
};

/**
 * This process's peak resident memory, in MB: the kernel's high-water mark of its own memory
 * (`VmHWM`). Not `resourceUsage().maxRSS`: on Linux that also counts the parent's memory copied at
 * fork (before this process exec'd node), so a child of a large parent reported the parent's size.
 */
function peakRssMB(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Math.round(Number(hwm[1]) / 1024);
  } catch {
    // Not Linux: the portable figure below.
  }
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** Bare csv-parse: data rows counted (the header row is not one). */
async function measureBare(file: string, mode: 'bare' | 'columns'): Promise<Measurement> {
  const started = start();
  let rows = mode === 'bare' ? -1 : 0;
  const parser = parse(mode === 'bare' ? CSV_PARSE_OPTIONS : { columns: true });
  for await (const _row of createReadStream(file).pipe(parser)) rows++;
  return finish(mode, rows, started);
}

/**
 * Bare csv-parse on the German file: its bytes decoded by a streaming Windows-1252 decoder, as the
 * source decodes them (the text then goes to csv-parse, which takes it as UTF-8 bytes, as the
 * source's parser does), with the source's options and `;`.
 */
async function measureBareGerman(file: string): Promise<Measurement> {
  const started = start();
  let rows = -1;
  const decoder = new TextDecoder('windows-1252');
  const decode = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, decoder.decode(chunk, { stream: true }));
    },
    flush(done) {
      const rest = decoder.decode();
      done(null, rest === '' ? undefined : rest);
    },
  });
  const parser = parse({ ...CSV_PARSE_OPTIONS, delimiter: ';' });
  for await (const _row of createReadStream(file).pipe(decode).pipe(parser)) rows++;
  return finish('bare-german', rows, started);
}

/** The source's settings and the name the file is dropped under, per source mode. */
const SOURCE_CASES = {
  source: {
    config: async (dropDir: string): Promise<CsvSourceConfig> => ({
      id: 'bench',
      type: 'csv',
      dropDir,
      stableSeconds: 5,
      mapping: {},
      strictColumns: false,
    }),
    dropName: (file: string) =>
      basename(file).toLowerCase().startsWith('invoices') ? basename(file) : 'invoices.csv',
  },
  'source-german': {
    config: async (dropDir: string) => (await germanInvoices()).germanSourceConfig(dropDir),
    dropName: (file: string) =>
      basename(file).toLowerCase().startsWith('rechnungen') ? basename(file) : 'Rechnungen.csv',
  },
} as const;

async function measureSource(file: string, mode: 'source' | 'source-german'): Promise<Measurement> {
  const dropDir = await mkdtemp(join(tmpdir(), 'receivables-sync-bench-drop-'));
  try {
    // A hard link: the drop folder gets the file without a copy (claiming renames the link only).
    const dropped = join(dropDir, SOURCE_CASES[mode].dropName(file));
    await link(file, dropped);
    const old = new Date(Date.now() - 3_600_000);
    await utimes(dropped, old, old);
    const { createCsvSource, systemClock, createLogger, InMemoryDropFileLedger } = await sourceModules();
    const source = createCsvSource({
      config: await SOURCE_CASES[mode].config(dropDir),
      clock: systemClock,
      logger: createLogger({ level: 'silent' }),
      ledger: new InMemoryDropFileLedger(),
    });
    // The high-water mark before the first row: what loading the source's modules took.
    const loadedRssMB = peakRssMB();
    const started = start();
    let rows = 0;
    let rejected = 0;
    let firstBatch: SourceRecord[] | undefined;
    for await (const unit of source.units()) {
      for await (const batch of unit.batches()) {
        rows += batch.records.length + batch.rejected.length;
        rejected += batch.rejected.length;
        firstBatch ??= batch.records.map((made) => made.record);
      }
      await unit.complete({ failures: [] });
    }
    const measured = { ...finish(mode, rows, started), loadedRssMB };
    if (mode === 'source') return measured;
    return { ...measured, rejected, sample: (await germanInvoices()).compareWithGenerated(firstBatch ?? []) };
  } finally {
    await rm(dropDir, { recursive: true, force: true });
  }
}

/** Whether the source runs with V8's own heap settings instead of the CLI's. */
const V8_DEFAULT_HEAP = process.argv.includes('--v8-default-heap');

function runChild(mode: Mode, file: string): Measurement {
  const self = fileURLToPath(import.meta.url);
  // tsx's loader by absolute URL: the child resolves it whatever its working directory.
  const tsx = import.meta.resolve('tsx');
  const heap = mode.startsWith('source') && !V8_DEFAULT_HEAP ? ['--cli-heap'] : [];
  const child = spawnSync(process.execPath, ['--import', tsx, self, '--measure', mode, file, ...heap], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`the ${mode} measurement failed (exit ${child.status})`);
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Measurement;
}

/** The value given after `flag`, if any. */
const optionOf = (argv: readonly string[], flag: string): string | undefined => {
  const at = argv.indexOf(flag);
  return at >= 0 ? argv[at + 1] : undefined;
};
const VALUED_FLAGS = new Set(['--rows', '--repeat', '--case']);

/** A generated file of `rows` rows in the bench's temp folder, made once and reused. */
async function generated(
  name: string,
  rows: number,
  generate: (rows: number, out: string) => Promise<void>,
): Promise<string> {
  const dir = join(tmpdir(), 'receivables-sync-bench');
  await mkdir(dir, { recursive: true });
  const file = join(dir, name);
  if (!existsSync(file)) {
    console.log(`generating ${rows} rows in ${file}`);
    await generate(rows, file);
  }
  return file;
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--measure') {
    const [, mode, file] = argv as [string, Mode, string];
    if (argv.includes('--cli-heap')) {
      limitHeapGrowth();
      capYoungGeneration();
    }
    const result =
      mode === 'bare' || mode === 'columns'
        ? await measureBare(file, mode)
        : mode === 'bare-german'
          ? await measureBareGerman(file)
          : await measureSource(file, mode);
    console.log(JSON.stringify(result));
    return;
  }
  const rowCount = Number(optionOf(argv, '--rows') ?? 1_000_000);
  const only = optionOf(argv, '--case');
  if (only !== undefined && only !== 'contract' && only !== 'german') {
    console.error(`--case ${only}: one of contract, german (both when not given)`);
    process.exitCode = 1;
    return;
  }
  const cases: Case[] = only === undefined ? ['contract', 'german'] : [only];
  const given = argv.find((arg, i) => !arg.startsWith('--') && !VALUED_FLAGS.has(argv[i - 1] ?? ''));
  const files: Partial<Record<Case, string>> = {};
  if (cases.includes('contract'))
    files.contract = given ?? (await generated(`invoices-${rowCount}.csv`, rowCount, generateInvoicesCsv));
  if (cases.includes('german'))
    files.german = await generated(
      `Rechnungen-${rowCount}.csv`,
      rowCount,
      (await germanInvoices()).generateGermanInvoicesCsv,
    );
  const repeat = Math.max(1, Number(optionOf(argv, '--repeat') ?? 3));
  const runs: Measurement[] = [];
  for (let i = 0; i < repeat; i++) {
    for (const c of cases) for (const mode of MODES_OF[c]) runs.push(runChild(mode, files[c]!));
  }
  const best = (mode: Mode): Measurement => {
    const mine = runs.filter((run) => run.mode === mode);
    const fastest = mine.reduce((a, b) => (b.rowsPerSecond > a.rowsPerSecond ? b : a));
    return {
      ...fastest,
      cpuMs: Math.min(...mine.map((run) => run.cpuMs)),
      maxRssMB: Math.max(...mine.map((run) => run.maxRssMB)),
      ...(fastest.loadedRssMB === undefined
        ? {}
        : { loadedRssMB: Math.max(...mine.map((run) => run.loadedRssMB ?? 0)) }),
    };
  };
  const reports = cases.map((c) => {
    const of: CaseRuns = { file: files[c]!, repeat, best, v8DefaultHeap: V8_DEFAULT_HEAP };
    return c === 'contract' ? reportContract(of) : reportGerman(of);
  });
  const ok = reports.every((report) => report.ok);
  console.log(
    JSON.stringify({
      bench: 'csv-parse',
      repeat,
      sourceHeap: V8_DEFAULT_HEAP ? 'v8-default' : 'cli',
      ...Object.assign({}, ...reports.map((report) => report.json)),
      ok,
    }),
  );
  if (!ok) process.exitCode = 1;
}

await main(process.argv.slice(2));
