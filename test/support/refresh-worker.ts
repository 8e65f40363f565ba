/**
 * A child process for the multi-process token refresh test: it builds the token provider exactly as
 * the application does (`createTokenProvider`: encrypted file store, file + Redis lock, Redis token
 * endpoint budget), then calls `getAccessToken` + `GET /organizations` in a loop until `durationMs`
 * after the parent says "go". Its logs (debug level) go to stderr, for the parent to search.
 *
 * Run: `node --import tsx test/support/refresh-worker.ts '<RefreshWorkerArgs JSON>'`. It prints
 * `{"ready":true}`, waits for a `go` line on stdin, then prints one `RefreshWorkerReport` JSON line.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createTokenProvider } from '../../src/api/auth/token-provider-factory.js';
import { createLogger } from '../../src/logging/logger.js';

export interface RefreshWorkerArgs {
  baseUrl: string;
  clientId: string;
  dataDir: string;
  tokenKey: string;
  redisUrl: string;
  prefix: string;
  durationMs: number;
}

export interface RefreshWorkerReport {
  pid: number;
  statuses: number[];
  /** Budget keys (hashes) of the access tokens used. */
  tokens: string[];
  tokenCalls: { at: number; status: number }[];
  /** Raw secrets this worker saw on the wire, for the parent to search the logs for. */
  secrets: string[];
  errors: string[];
}

async function runWorker(args: RefreshWorkerArgs): Promise<RefreshWorkerReport> {
  const redis = new Redis(args.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const report: RefreshWorkerReport = {
    pid: process.pid,
    statuses: [],
    tokens: [],
    tokenCalls: [],
    secrets: [],
    errors: [],
  };
  const recording = (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    if (String(input).endsWith('/api/oauth/token')) {
      report.tokenCalls.push({ at: Date.now(), status: response.status });
      const body = (await response
        .clone()
        .json()
        .catch(() => ({}))) as Record<string, string | undefined>;
      for (const name of ['access_token', 'refresh_token']) if (body[name]) report.secrets.push(body[name]!);
    }
    return response;
  }) as typeof fetch;
  const provider = createTokenProvider({
    config: {
      api: { baseUrl: args.baseUrl },
      auth: { clientId: args.clientId },
      state: { dataDir: args.dataDir },
    },
    secrets: { accessToken: undefined, refreshToken: undefined, tokenKey: args.tokenKey },
    log: createLogger({ level: 'debug' }).child({ pid: process.pid }),
    fetch: recording,
    redis,
    redisPrefix: args.prefix,
  });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  await waitForGo();
  const tokens = new Set<string>();
  const deadline = Date.now() + args.durationMs;
  while (Date.now() < deadline) {
    try {
      const token = await provider.getAccessToken();
      tokens.add(provider.budgetKey(token));
      const response = await fetch(`${args.baseUrl}/api/public/v1/organizations`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await response.arrayBuffer();
      report.statuses.push(response.status);
    } catch (error) {
      report.errors.push((error as Error).message);
      break;
    }
    // Pacing, not a wait: the worker works 20-50 ms between calls while the tokens expire in real
    // time (the sandbox issues them), as a process of a running sync would.
    await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
  }
  report.tokens = [...tokens];
  await redis.quit();
  return report;
}

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() === 'go') {
        lines.close();
        resolve();
      }
    });
  });
}

// ---- parent side ----

export interface RefreshWorkers {
  /** Starts every worker at once; resolves with their reports (and stderr logs) when all have exited. */
  go(): Promise<{ reports: RefreshWorkerReport[]; logs: string }>;
  kill(): void;
}

export async function spawnRefreshWorkers(count: number, args: RefreshWorkerArgs): Promise<RefreshWorkers> {
  const file = fileURLToPath(import.meta.url);
  const children: ChildProcessWithoutNullStreams[] = [];
  const outputs: { stdout: string; stderr: string }[] = [];
  const ready = Array.from({ length: count }, (_, i) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, JSON.stringify(args)], { stdio: 'pipe' });
    children.push(child);
    const output = { stdout: '', stderr: '' };
    outputs.push(output);
    child.stderr.on('data', (chunk) => {
      output.stderr += String(chunk);
    });
    return new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        output.stdout += String(chunk);
        if (output.stdout.includes('{"ready":true}')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker ${i} exited early (${code}): ${output.stderr}`)));
    });
  });
  await Promise.all(ready);
  const exits = children.map((child) => new Promise<void>((resolve) => child.once('exit', () => resolve())));
  return {
    async go() {
      for (const child of children) child.stdin.write('go\n');
      await Promise.all(exits);
      const reports = outputs.map(({ stdout, stderr }, i) => {
        const line = stdout.trim().split('\n').at(-1) ?? '';
        if (!line.startsWith('{"pid"')) throw new Error(`worker ${i} gave no report: ${stderr}`);
        return JSON.parse(line) as RefreshWorkerReport;
      });
      return { reports, logs: outputs.map((o) => o.stderr).join('') };
    },
    kill() {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Exits explicitly: the stdin pipe (read for "go") would keep the process alive.
  runWorker(JSON.parse(process.argv[2] ?? '{}') as RefreshWorkerArgs).then(
    (report) => process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0)),
    (error) => {
      process.stderr.write(`${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}
