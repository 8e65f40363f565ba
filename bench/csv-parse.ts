/**
 * CSV source throughput and memory, against bare csv-parse on the same file in the source's mode.
 *
 *   npx tsx bench/csv-parse.ts [file.csv] [--rows N] [--repeat N]
 *
 * Without a file, a synthetic invoices CSV of N rows (default 1,000,000) is generated once in
 * `os.tmpdir()` and reused. Each measurement runs in its own child process, so its peak RSS
 * (`VmHWM`, see `peakRssMB`) is its own:
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
 * Each is run `--repeat` times (default 3), alternating: the best rows/s, the least CPU time and
 * the worst peak RSS are kept, so a busy machine skews the ratio less and the memory figure errs
 * high; the ratio by CPU time is printed beside the ratio by rows/s.
 *
 * Prints one line per figure, then one JSON line. Goals: source >= 0.7 x bare rows/s, source
 * peak RSS <= 200 MB. Exit code 1 when a goal is missed. The machine's other work shows in both
 * figures: on a shared machine, compare several runs.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { link, mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { capYoungGeneration, limitHeapGrowth } from '../src/cli/heap-growth.js';
import { systemClock } from '../src/domain/clock.js';
import { createLogger } from '../src/logging/logger.js';
import { CSV_PARSE_OPTIONS } from '../src/sources/csv/csv-rows.js';
import { createCsvSource } from '../src/sources/csv/csv-source.js';
import { InMemoryDropFileLedger } from '../src/sources/ports.js';
import { generateInvoicesCsv } from './generate-csv.js';

const GOAL_RATIO = 0.7;
const GOAL_RSS_MB = 200;

type Mode = 'bare' | 'columns' | 'source';

interface Measurement {
  mode: Mode;
  rows: number;
  ms: number;
  /** CPU time of the process (all its threads) meanwhile: less swayed by a busy machine than `ms`. */
  cpuMs: number;
  rowsPerSecond: number;
  maxRssMB: number;
}

/** When a measurement starts: wall clock and CPU time. */
const start = () => ({ at: performance.now(), cpu: process.cpuUsage() });

const finish = (mode: Measurement['mode'], rows: number, started: ReturnType<typeof start>): Measurement => {
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

async function measureSource(file: string): Promise<Measurement> {
  const dropDir = await mkdtemp(join(tmpdir(), 'receivables-sync-bench-drop-'));
  try {
    // A hard link: the drop folder gets the file without a copy (claiming renames the link only).
    const dropped = join(
      dropDir,
      basename(file).toLowerCase().startsWith('invoices') ? basename(file) : 'invoices.csv',
    );
    await link(file, dropped);
    const old = new Date(Date.now() - 3_600_000);
    await utimes(dropped, old, old);
    const source = createCsvSource({
      config: { id: 'bench', type: 'csv', dropDir, stableSeconds: 5, mapping: {}, strictColumns: false },
      clock: systemClock,
      logger: createLogger({ level: 'silent' }),
      ledger: new InMemoryDropFileLedger(),
    });
    const started = start();
    let rows = 0;
    for await (const unit of source.units()) {
      for await (const batch of unit.batches()) rows += batch.records.length + batch.rejected.length;
      await unit.complete({ failures: [] });
    }
    return finish('source', rows, started);
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
  const heap = mode === 'source' && !V8_DEFAULT_HEAP ? ['--cli-heap'] : [];
  const child = spawnSync(process.execPath, ['--import', tsx, self, '--measure', mode, file, ...heap], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`the ${mode} measurement failed (exit ${child.status})`);
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Measurement;
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--measure') {
    const [, mode, file] = argv;
    if (argv.includes('--cli-heap')) {
      limitHeapGrowth();
      capYoungGeneration();
    }
    const result =
      mode === 'bare' || mode === 'columns' ? await measureBare(file!, mode) : await measureSource(file!);
    console.log(JSON.stringify(result));
    return;
  }
  const rowsAt = argv.indexOf('--rows');
  const rowCount = rowsAt >= 0 ? Number(argv[rowsAt + 1]) : 1_000_000;
  let file = argv.find(
    (arg, i) => !arg.startsWith('--') && argv[i - 1] !== '--rows' && argv[i - 1] !== '--repeat',
  );
  if (file === undefined) {
    const dir = join(tmpdir(), 'receivables-sync-bench');
    await mkdir(dir, { recursive: true });
    file = join(dir, `invoices-${rowCount}.csv`);
    if (!existsSync(file)) {
      console.log(`generating ${rowCount} rows in ${file}`);
      await generateInvoicesCsv(rowCount, file);
    }
  }
  const repeatAt = argv.indexOf('--repeat');
  const repeat = repeatAt >= 0 ? Math.max(1, Number(argv[repeatAt + 1])) : 3;
  const runs: Measurement[] = [];
  for (let i = 0; i < repeat; i++) {
    runs.push(runChild('bare', file), runChild('columns', file), runChild('source', file));
  }
  const best = (mode: Mode): Measurement => {
    const mine = runs.filter((run) => run.mode === mode);
    const fastest = mine.reduce((a, b) => (b.rowsPerSecond > a.rowsPerSecond ? b : a));
    return {
      ...fastest,
      cpuMs: Math.min(...mine.map((run) => run.cpuMs)),
      maxRssMB: Math.max(...mine.map((run) => run.maxRssMB)),
    };
  };
  const bare = best('bare');
  const columns = best('columns');
  const source = best('source');
  const ratioOf = (to: Measurement): number =>
    Math.round((source.rowsPerSecond / to.rowsPerSecond) * 100) / 100;
  const ratio = ratioOf(bare);
  const fmt = (n: number): string => n.toLocaleString('en-US');
  const line = (m: Measurement): string =>
    `${fmt(m.rowsPerSecond)} rows/s, ${fmt(m.ms)} ms (CPU ${fmt(m.cpuMs)} ms), peak RSS ${m.maxRssMB} MB`;
  const cpuRatio = Math.round((bare.cpuMs / source.cpuMs) * 100) / 100;
  console.log(`file: ${file} (${fmt(bare.rows)} rows), best of ${repeat} runs each`);
  console.log(`bare csv-parse, the source's mode (array rows, its options): ${line(bare)}`);
  console.log(`csv source (claim + checksum + parse + validate + archive):  ${line(source)}`);
  console.log(
    V8_DEFAULT_HEAP
      ? "  the source with V8's own heap settings (--v8-default-heap)"
      : "  the source with the CLI's heap settings (src/cli/heap-growth.ts), as sync --once runs it",
  );
  console.log(`ratio source / same-mode csv-parse: ${ratio} (goal >= ${GOAL_RATIO})`);
  console.log(`the same by CPU time (less swayed by other processes on the machine): ${cpuRatio}`);
  console.log(`csv source peak RSS: ${source.maxRssMB} MB (goal <= ${GOAL_RSS_MB} MB)`);
  console.log(
    `old baseline, csv-parse with columns: true (slower than the source's mode): ${line(columns)}; ` +
      `ratio source / it ${ratioOf(columns)} (for continuity only: not the goal)`,
  );
  const ok =
    ratio >= GOAL_RATIO &&
    source.maxRssMB <= GOAL_RSS_MB &&
    source.rows === bare.rows &&
    columns.rows === bare.rows;
  console.log(
    JSON.stringify({
      bench: 'csv-parse',
      file,
      rows: bare.rows,
      repeat,
      bare,
      source,
      sourceHeap: V8_DEFAULT_HEAP ? 'v8-default' : 'cli',
      ratio,
      cpuRatio,
      columnsTrue: { ...columns, ratio: ratioOf(columns) },
      ok,
    }),
  );
  if (!ok) process.exitCode = 1;
}

await main(process.argv.slice(2));
