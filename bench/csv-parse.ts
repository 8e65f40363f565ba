/**
 * CSV source throughput and memory, against bare csv-parse on the same file.
 *
 *   npx tsx bench/csv-parse.ts [file.csv] [--rows N] [--repeat N]
 *
 * Without a file, a synthetic invoices CSV of N rows (default 1,000,000) is generated once in
 * `os.tmpdir()` and reused. Each measurement runs in its own child process, so its peak RSS
 * (`process.resourceUsage().maxRSS`) is its own:
 *
 * - `bare`: csv-parse streaming the file with `columns: true`, rows counted and dropped;
 * - `source`: the CSV source's whole path on a drop folder holding the file: claim, checksum and
 *   UTF-8 check, header, parse, validation, batches drained, archive (no downstream sync).
 *
 * Each is run `--repeat` times (default 3), alternating: the best rows/s and the worst peak RSS
 * are kept, so a busy machine skews the ratio less and the memory figure errs high.
 *
 * Prints one line per figure, then one JSON line. Goals: source >= 0.5 x bare rows/s, source
 * peak RSS < 300 MB. Exit code 1 when a goal is missed.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { systemClock } from '../src/domain/clock.js';
import { createLogger } from '../src/logging/logger.js';
import { createCsvSource } from '../src/sources/csv/csv-source.js';
import { InMemoryDropFileLedger } from '../src/sources/ports.js';
import { generateInvoicesCsv } from './generate-csv.js';

const GOAL_RATIO = 0.5;
const GOAL_RSS_MB = 300;

interface Measurement {
  mode: 'bare' | 'source';
  rows: number;
  ms: number;
  rowsPerSecond: number;
  maxRssMB: number;
}

const finish = (mode: Measurement['mode'], rows: number, started: number): Measurement => {
  const ms = performance.now() - started;
  return {
    mode,
    rows,
    ms: Math.round(ms),
    rowsPerSecond: Math.round(rows / (ms / 1000)),
    maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
};

async function measureBare(file: string): Promise<Measurement> {
  const started = performance.now();
  let rows = 0;
  for await (const _row of createReadStream(file).pipe(parse({ columns: true }))) rows++;
  return finish('bare', rows, started);
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
    const started = performance.now();
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

function runChild(mode: Measurement['mode'], file: string): Measurement {
  const self = fileURLToPath(import.meta.url);
  // tsx's loader by absolute URL: the child resolves it whatever its working directory.
  const tsx = import.meta.resolve('tsx');
  const child = spawnSync(process.execPath, ['--import', tsx, self, '--measure', mode, file], {
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
    const result = mode === 'bare' ? await measureBare(file!) : await measureSource(file!);
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
  for (let i = 0; i < repeat; i++) runs.push(runChild('bare', file), runChild('source', file));
  const best = (mode: Measurement['mode']): Measurement => {
    const mine = runs.filter((run) => run.mode === mode);
    const fastest = mine.reduce((a, b) => (b.rowsPerSecond > a.rowsPerSecond ? b : a));
    return { ...fastest, maxRssMB: Math.max(...mine.map((run) => run.maxRssMB)) };
  };
  const bare = best('bare');
  const source = best('source');
  const ratio = Math.round((source.rowsPerSecond / bare.rowsPerSecond) * 100) / 100;
  const fmt = (n: number): string => n.toLocaleString('en-US');
  console.log(`file: ${file} (${fmt(bare.rows)} rows), best of ${repeat} runs each`);
  console.log(
    `bare csv-parse (columns: true): ${fmt(bare.rowsPerSecond)} rows/s, ${bare.ms} ms, peak RSS ${bare.maxRssMB} MB`,
  );
  console.log(
    `csv source (claim + checksum + parse + validate + archive): ${fmt(source.rowsPerSecond)} rows/s, ${source.ms} ms`,
  );
  console.log(`ratio source/bare: ${ratio} (goal >= ${GOAL_RATIO})`);
  console.log(`csv source peak RSS: ${source.maxRssMB} MB (goal < ${GOAL_RSS_MB} MB)`);
  const ok = ratio >= GOAL_RATIO && source.maxRssMB < GOAL_RSS_MB && source.rows === bare.rows;
  console.log(JSON.stringify({ bench: 'csv-parse', file, rows: bare.rows, repeat, bare, source, ratio, ok }));
  if (!ok) process.exitCode = 1;
}

await main(process.argv.slice(2));
