/**
 * Worker processes for the `worker` integration tests: the BUILT CLI (`node bin/receivables-sync.js
 * --config <yaml> worker`), its pino lines parsed from stderr so a test can await a log event
 * instead of sleeping, and a per-file environment (temp drop folder, config, own Postgres schema,
 * own BullMQ prefix) pointed at a test sandbox.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { BIN, REPO_ROOT, runCli } from './cli.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './postgres.js';
import { apiEnvOf, type TestSandbox } from './sandbox.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** One pino line of a worker's stderr. */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface WorkerProcess {
  name: string;
  child: ChildProcessWithoutNullStreams;
  pid: number;
  /** Every log line so far. */
  logs: LogLine[];
  /**
   * Resolves with the first line (past or future) matching: a string is the line's `event` field
   * (`worker.started`, `job.started`, `job.done`, `schedule.fired`, `redis.lost`, `redis.back`);
   * rejects after `timeoutMs`.
   */
  waitForLog(match: string | ((line: LogLine) => boolean), timeoutMs?: number): Promise<LogLine>;
  /** Lines whose `event` is `event`. */
  linesOf(event: string): LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `worker` and resolves once it logged its `worker.started` event (or `options.until`:
 * `worker.serving` once `/healthz` answers, before its dependencies do).
 */
export async function startWorker(
  name: string,
  configFile: string,
  env: NodeJS.ProcessEnv,
  options: { startTimeoutMs?: number; until?: string } = {},
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, '--config', configFile, 'worker'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
  });
  const logs: LogLine[] = [];
  const listeners = new Set<(line: LogLine) => void>();
  let stderrTail = '';
  createInterface({ input: child.stderr }).on('line', (text) => {
    stderrTail = `${stderrTail}\n${text}`.slice(-4000);
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      line = { msg: text, raw: true };
    }
    logs.push(line);
    for (const listener of listeners) listener(line);
  });
  child.stdout.resume();
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const waitForLog: WorkerProcess['waitForLog'] = (match, timeoutMs = 20_000) => {
    const test = typeof match === 'string' ? (l: LogLine) => l.event === match : match;
    const past = logs.find(test);
    if (past) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(
          new Error(
            `${name}: no log line matching ${String(match)} within ${timeoutMs} ms; stderr:${stderrTail}`,
          ),
        );
      }, timeoutMs);
      const listener = (line: LogLine) => {
        if (!test(line)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve(line);
      };
      listeners.add(listener);
      void exited.then(({ code, signal }) => {
        if (!listeners.has(listener)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        reject(
          new Error(
            `${name} exited (${code ?? signal}) before logging ${String(match)}; stderr:${stderrTail}`,
          ),
        );
      });
    });
  };
  const worker: WorkerProcess = {
    name,
    child,
    pid: child.pid!,
    logs,
    waitForLog,
    linesOf: (event) => logs.filter((l) => l.event === event),
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  await waitForLog(options.until ?? 'worker.started', options.startTimeoutMs ?? 30_000);
  return worker;
}

/** A temp folder with a drop folder, a worker config, its own Postgres schema and BullMQ prefix. */
export interface WorkerEnv {
  dir: string;
  dropDir: string;
  prefix: string;
  schema: string;
  redisUrl: string;
  env: NodeJS.ProcessEnv;
  /** Writes a config file (the `queue:` and `api:` extras are merged in) and returns its path. */
  writeConfig(options?: {
    name?: string;
    queue?: Record<string, number | string>;
    apiConcurrency?: number;
    schedule?: string;
  }): string;
  cleanup(): Promise<void>;
}

export async function workerEnv(
  sandbox: TestSandbox,
  options: { label: string; redisUrl?: string },
): Promise<WorkerEnv> {
  const dir = mkdtempSync(join(tmpdir(), `rs-worker-${options.label}-`));
  const dropDir = join(dir, 'drop');
  mkdirSync(dropDir, { recursive: true });
  const schema = uniqueSchema(`worker_${options.label}`);
  const prefix = `t-worker-${options.label}-${randomBytes(4).toString('hex')}`;
  const redisUrl = options.redisUrl ?? TEST_REDIS_URL;
  const env: NodeJS.ProcessEnv = {
    ...apiEnvOf(sandbox),
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL: redisUrl,
    LOG_LEVEL: process.env.WORKER_LOG_LEVEL ?? 'info',
    DASHBOARD_PORT: '0',
  };
  const writeConfig: WorkerEnv['writeConfig'] = (o = {}) => {
    const queue = {
      prefix,
      lockSeconds: 2,
      stalledCheckSeconds: 1,
      backoffSeconds: 1,
      shutdownSeconds: 20,
      ...o.queue,
    };
    const file = join(dir, `${o.name ?? 'worker'}.yaml`);
    writeFileSync(
      file,
      [
        'state:',
        `  dataDir: ${join(dir, 'data')}`,
        'api:',
        `  concurrency: ${o.apiConcurrency ?? 8}`,
        'queue:',
        ...Object.entries(queue).map(([k, v]) => `  ${k}: ${typeof v === 'string' ? JSON.stringify(v) : v}`),
        'sources:',
        '  - id: erp-csv',
        '    type: csv',
        `    dropDir: ${dropDir}`,
        '    stableSeconds: 0',
        `    schedule: "${o.schedule ?? '*/2 * * * * *'}"`,
        '',
      ].join('\n'),
    );
    return file;
  };
  // Migrated once here: two workers starting together would race to create the schema.
  const migrated = await runCli(['--config', writeConfig({ name: 'migrate' }), 'migrate'], { env });
  if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
  return {
    dir,
    dropDir,
    prefix,
    schema,
    redisUrl,
    env,
    writeConfig,
    async cleanup() {
      await deleteKeys(redisUrl, `${prefix}:*`).catch(() => undefined);
      await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Deletes the keys matching `pattern` (a test's prefix). */
export async function deleteKeys(redisUrl: string, pattern: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Polls `read` until `done` holds (for state only observable by asking: the sandbox's stats). */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last: T = await read();
  while (!done(last)) {
    if (Date.now() > deadline) {
      throw new Error(
        `${options.what ?? 'condition'} not reached in time; last value: ${JSON.stringify(last)}`,
      );
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
    last = await read();
  }
  return last;
}

/** A private `redis-server` on a free port, for tests that restart Redis or change its policy. */
export interface PrivateRedis {
  port: number;
  url: string;
  /** Kills the server (SIGKILL: no persistence, everything is lost) and waits for its exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
}

export async function startPrivateRedis(extraArgs: readonly string[] = []): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ReturnType<typeof spawn> | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        ...extraArgs,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const ready = new Promise<void>((resolve, reject) => {
      let output = '';
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      });
      child!.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${output}`)));
    });
    await ready;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exit = once(child, 'exit');
      child.kill('SIGKILL');
      await exit;
    },
    restart: start,
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
