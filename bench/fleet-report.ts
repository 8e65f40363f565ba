/**
 * What `bench:fleet` (bench/fleet.ts) prints at its end: a table per token, the fairness and wait
 * figures, the workers' warnings, then one JSON line. Definitions: bench/fleet-figures.ts and
 * docs/performance.md, "Many tokens and sources: bench:fleet".
 */
import { availableParallelism, loadavg } from 'node:os';
import {
  firstRequests,
  inWindow,
  jainIndex,
  median,
  round3,
  type ServedResponse,
  sourceRequests,
  tokenFigures,
  type Window,
} from './fleet-figures.js';
import { connectionOf, type FleetSource, TOKENS } from './fleet-scenario.js';

/** The bench's settings, printed in the JSON line as they are. */
export interface FleetSettings {
  policy: { quota: number; windowSeconds: number };
  workers: number;
  jobConcurrency: number;
  windowSeconds: number;
  warmupSeconds: number;
  smallRows: number;
}

/** What one worker process logged (LOG_LEVEL=warn: warnings and errors only). */
export interface WorkerLog {
  warnings: number;
  errors: number;
  /** `<level>: <msg>` → lines. */
  messages: Map<string, number>;
}

/** One small file's sync, from the state DB (record_map rows of the file, with their run). */
export interface SmallFileRow {
  source_id: string;
  file: string;
  rows: number;
  first_synced: Date;
  last_synced: Date;
  started_at: Date | null;
  finished_at: Date | null;
  runs: number;
}

export interface ReportProps {
  served: readonly ServedResponse[];
  window: Window;
  sources: readonly FleetSource[];
  files: readonly SmallFileRow[];
  drops: Map<string, number>;
  atStart: Map<string, number>;
  atEnd: Map<string, number>;
  workers: readonly WorkerLog[];
  settings: FleetSettings;
}

/** Prints the figures of one run: a line per figure, then one JSON line. */
export function report(props: ReportProps): void {
  const { served, window, sources, files, drops, settings } = props;
  const perToken = TOKENS.map((token) => tokenFigures(served, token, window, settings.policy));
  const counted = perToken.reduce((n, t) => n + t.counted, 0);
  const allowed = perToken.reduce((n, t) => n + t.allowed, 0);
  const cycleShares = perToken.flatMap((t) => (t.cycleShare === undefined ? [] : [t.cycleShare]));
  const fairness = TOKENS.filter((t) => t !== 1).map((token) => {
    const busy = sources.filter((s) => s.token === token && s.role === 'busy');
    const requests = busy.map((s) => sourceRequests(served, s.id, window));
    const rows = busy.map((s) => (props.atEnd.get(s.id) ?? 0) - (props.atStart.get(s.id) ?? 0));
    return { token, sources: busy.map((s) => s.id), requests, rows, jain: round3(jainIndex(requests)) };
  });
  const firstRequest = firstRequests(served);
  const tokenOfSource = new Map(sources.map((s) => [s.id, s.token]));
  const samples = files.map((f) => {
    const key = `${f.source_id}.${f.file}`;
    const token = tokenOfSource.get(f.source_id);
    const dropAt = drops.get(key) ?? Number.NaN;
    const first = firstRequest.get(key) ?? Number.NaN;
    const start = f.started_at ? f.started_at.getTime() : Number.NaN;
    return {
      file: key,
      underLoad: inWindow(dropAt, window),
      rows: f.rows,
      runs: f.runs,
      passStartToFirstRequestMs: first - start,
      // Other sources' requests the token's budget admitted between the pass's start and its first
      // request: fair queuing puts a newcomer ahead of the backlogs, so few beyond those in flight.
      othersBeforeFirst: served.filter(
        (r) =>
          r.token === token &&
          r.status !== 429 &&
          r.source !== f.source_id &&
          r.arrivedAt > start &&
          r.arrivedAt < first,
      ).length,
      dropToFirstRequestMs: first - dropAt,
      passMs: f.finished_at && f.started_at ? f.finished_at.getTime() - start : Number.NaN,
      dropToLastSyncedMs: f.last_synced.getTime() - dropAt,
    };
  });
  const loaded = samples.filter((s) => s.underLoad);
  const dropped = [...drops.keys()].filter((k) => k.includes('-small-') && inWindow(drops.get(k)!, window));
  const unfinished = dropped.filter((k) => !loaded.some((s) => s.file === k && s.rows >= settings.smallRows));
  const stat = (pick: (s: (typeof samples)[number]) => number, of = loaded) => {
    const values = of.map(pick).filter(Number.isFinite);
    return {
      max: values.length ? Math.round(Math.max(...values)) : Number.NaN,
      median: Math.round(median(values)),
      n: values.length,
    };
  };
  const waits = {
    passStartToFirstRequestMs: stat((s) => s.passStartToFirstRequestMs),
    othersBeforeFirst: stat((s) => s.othersBeforeFirst),
    dropToFirstRequestMs: stat((s) => s.dropToFirstRequestMs),
    passMs: stat((s) => s.passMs),
    dropToLastSyncedMs: stat((s) => s.dropToLastSyncedMs),
  };
  const atStartup = {
    passStartToFirstRequestMs: stat(
      (s) => s.passStartToFirstRequestMs,
      samples.filter((s) => !s.underLoad),
    ),
    passMs: stat(
      (s) => s.passMs,
      samples.filter((s) => !s.underLoad),
    ),
  };

  const columns: Array<[string, number]> = [
    ['token', 6],
    ['connection', 11],
    ['counted/allowed', 16],
    ['share', 6],
    ['per cycle (s)', 14],
    ['429 window/run', 15],
    ['max in w / 1 s', 15],
    ['longest gap', 12],
    ['busy a/b', 9],
    ['Jain', 0],
  ];
  const row = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(columns[i]![1])).join(' ');
  console.log(row(columns.map(([name]) => name)));
  for (const t of perToken) {
    const fair = fairness.find((f) => f.token === t.token);
    console.log(
      row([
        String(t.token),
        connectionOf(t.token),
        `${t.counted}/${t.allowed}`,
        t.share.toFixed(3),
        t.cycleShare === undefined ? '-' : `${t.cycleShare.toFixed(3)} (${(t.cycleMs! / 1000).toFixed(2)})`,
        `${t.rateLimitedInWindow}/${t.rateLimitedInRun}`,
        `${t.maxInAnyWindow} / ${t.maxInAnySecond}`,
        `${(t.longestGapMs / 1000).toFixed(1)} s`,
        fair ? fair.requests.join('/') : '-',
        fair ? fair.jain.toFixed(3) : '-',
      ]),
    );
  }
  const jainMin = Math.min(...fairness.map((f) => f.jain));
  const rateLimited = perToken.reduce((n, t) => n + t.rateLimitedInRun, 0);
  console.log(
    `aggregate share of the quotas in the window: ${round3(counted / allowed)} (${counted}/${allowed})`,
  );
  if (cycleShares.length > 0)
    console.log(
      `share per burst cycle (budgets spent in bursts: the long-run share, q per w over a cycle's length): ${Math.min(...cycleShares)}–${Math.max(...cycleShares)}`,
    );
  console.log(`429 responses: ${rateLimited} in the run`);
  console.log(`Jain's index between busy sources (tokens 2-4): min ${jainMin}`);
  console.log(
    `busy sources' rows synced in the window (record map): ${fairness.map((f) => `t${f.token} ${f.rows.join('/')}`).join(', ')}`,
  );
  const show = (s: { max: number; median: number; n: number }) => `max ${s.max} ms, median ${s.median} ms`;
  console.log(
    `small files dropped in the window: ${dropped.length}, synced: ${dropped.length - unfinished.length}`,
  );
  console.log(`small pass start -> first request: ${show(waits.passStartToFirstRequestMs)}`);
  console.log(
    `other sources' requests admitted on its token meanwhile: max ${waits.othersBeforeFirst.max}, median ${waits.othersBeforeFirst.median}`,
  );
  console.log(`small file drop -> first request: ${show(waits.dropToFirstRequestMs)}`);
  console.log(`small pass (${settings.smallRows} rows) duration: ${show(waits.passMs)}`);
  console.log(`small file drop -> last row synced: ${show(waits.dropToLastSyncedMs)}`);
  console.log(
    `at startup (files of the start, cold processes): pass start -> first request ${show(atStartup.passStartToFirstRequestMs)}; pass ${show(atStartup.passMs)}`,
  );
  const logged = props.workers.map((w) => ({ warnings: w.warnings, errors: w.errors }));
  const messages = new Map<string, number>();
  for (const w of props.workers) for (const [m, n] of w.messages) messages.set(m, (messages.get(m) ?? 0) + n);
  const top = [...messages.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5);
  console.log(`worker log lines (warn/error): ${logged.map((l) => `${l.warnings}/${l.errors}`).join(', ')}`);
  for (const [msg, n] of top) console.log(`  ${n} x ${msg.slice(0, 160)}`);
  console.log(
    `machine: ${availableParallelism()} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    JSON.stringify({
      ...settings,
      aggregateShare: round3(counted / allowed),
      rateLimited,
      tokens: perToken,
      fairness,
      jainMin,
      smallFiles: { dropped: dropped.length, unfinished, ...waits },
      atStartup,
      workerLogs: logged,
      cores: availableParallelism(),
    }),
  );
}
