import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../support/cli.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { eventually, type LogLine, type WorkerEnv, workerEnv } from '../support/worker-process.js';

/**
 * `bin/receivables-sync.js` started by the system Node (older than 22) re-runs itself under the
 * Node 24 of `node_modules/node`: signals sent to it must reach that child, and it must end as the
 * child ended.
 */
const SYSTEM_NODE = process.env.SYSTEM_NODE ?? '/usr/bin/node';
const systemMajor = existsSync(SYSTEM_NODE)
  ? Number(execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node.split(".")[0]']).toString().trim())
  : null;
const skipReason =
  systemMajor === null
    ? `no system Node at ${SYSTEM_NODE}`
    : systemMajor >= 22
      ? `the system Node (${SYSTEM_NODE}) is ${systemMajor} >= 22: bin/ runs in process, there is no wrapper to test`
      : null;
if (skipReason) console.warn(`bin-signals tests skipped: ${skipReason}`);

interface Wrapped {
  wrapper: ChildProcess;
  logs: LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLog(event: string): Promise<LogLine>;
}

/** `worker` through the wrapper: the system Node runs bin/, which spawns Node 24. */
function startWrapped(env: WorkerEnv, configFile: string, options: { detached?: boolean } = {}): Wrapped {
  const wrapper = spawn(SYSTEM_NODE, [BIN, '--config', configFile, 'worker'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env.env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: options.detached ?? false,
  });
  const logs: LogLine[] = [];
  createInterface({ input: wrapper.stderr! }).on('line', (text) => {
    try {
      logs.push(JSON.parse(text) as LogLine);
    } catch {
      logs.push({ msg: text, raw: true });
    }
  });
  const exited = once(wrapper, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const waitForLog = (event: string) =>
    eventually(
      async () => logs.find((l) => l.event === event),
      (l) => l !== undefined || wrapper.exitCode !== null,
      { what: `the ${event} log line`, timeoutMs: 30_000, intervalMs: 50 },
    ).then((line) => {
      if (!line) throw new Error(`the wrapper exited before ${event}: ${JSON.stringify(logs)}`);
      return line;
    });
  return { wrapper, logs, exited, waitForLog };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The pids whose parent is `pid` (`ps --ppid`). */
const childrenOf = (pid: number): number[] => {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)])
      .toString()
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when there is none
  }
};

describe.skipIf(skipReason !== null)(
  'bin/receivables-sync.js under the system Node: signals reach the Node 24 child',
  () => {
    let sandbox: TestSandbox;
    let env: WorkerEnv;
    const pids: number[] = [];

    beforeAll(async () => {
      sandbox = await startTestSandbox();
      env = await workerEnv(sandbox, { label: 'bin' });
    });
    afterAll(async () => {
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await env?.cleanup();
      await sandbox?.close();
    });

    it('when the wrapper gets SIGTERM, then the worker (its child) stops gracefully, no process is left, and the wrapper exits with the child’s code', async () => {
      const run = startWrapped(env, env.writeConfig({ name: 'term' }));
      pids.push(run.wrapper.pid!);
      const started = await run.waitForLog('worker.started');
      const childPid = started.pid as number;
      pids.push(childPid);
      expect(childPid).not.toBe(run.wrapper.pid);
      expect(childrenOf(run.wrapper.pid!)).toEqual([childPid]);

      run.wrapper.kill('SIGTERM');
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(run.logs.filter((l) => l.event === 'worker.stopping')).toEqual([
        expect.objectContaining({ signal: 'SIGTERM' }),
      ]);
      expect(run.logs.filter((l) => l.event === 'worker.stopped')).toHaveLength(1);
      await eventually(
        async () => alive(childPid),
        (a) => !a,
        { what: 'the child gone', timeoutMs: 10_000 },
      );
    });

    it('when Ctrl-C reaches the whole process group (wrapper and child), then the child takes it as one signal and stops gracefully, exit 0', async () => {
      // Its own process group, as a shell's foreground job: SIGINT to the group reaches both processes,
      // and the wrapper forwards its own copy as well.
      const run = startWrapped(env, env.writeConfig({ name: 'int' }), { detached: true });
      pids.push(run.wrapper.pid!);
      const started = await run.waitForLog('worker.started');
      const childPid = started.pid as number;
      pids.push(childPid);

      process.kill(-run.wrapper.pid!, 'SIGINT');
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(run.logs.filter((l) => l.msg === 'second signal: exiting now')).toEqual([]);
      expect(run.logs.filter((l) => l.event === 'worker.stopped')).toHaveLength(1);
      await eventually(
        async () => alive(childPid),
        (a) => !a,
        { what: 'the child gone', timeoutMs: 10_000 },
      );
    });

    it('when the child dies of a signal, then the wrapper dies of the same signal (its shell sees 128+n)', async () => {
      // The wrapper run by a shell that reports its exit status, as an operator's terminal would.
      const shell = spawn(
        'sh',
        [
          '-c',
          `"${SYSTEM_NODE}" "${BIN}" --config "${env.writeConfig({ name: 'kill' })}" worker; echo "status $?" >&2`,
        ],
        { cwd: REPO_ROOT, env: { ...process.env, ...env.env }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const lines: string[] = [];
      createInterface({ input: shell.stderr }).on('line', (line) => lines.push(line));
      const started = await eventually(
        async () =>
          lines
            .map((l) => (l.startsWith('{') ? (JSON.parse(l) as LogLine) : null))
            .find((l) => l?.event === 'worker.started'),
        (l) => l !== undefined || shell.exitCode !== null,
        { what: 'worker.started', timeoutMs: 30_000, intervalMs: 50 },
      );
      const childPid = started!.pid as number;
      pids.push(childPid);

      process.kill(childPid, 'SIGKILL');
      await once(shell, 'exit');
      expect(lines).toContain('status 137'); // 128 + SIGKILL (9)
    });

    it('when the child exits with a code, then the wrapper exits with that code', async () => {
      const wrapper = spawn(
        SYSTEM_NODE,
        [BIN, '--config', '/nonexistent/receivables-sync.yaml', 'sync', '--once'],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, ...env.env },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      wrapper.stderr.on('data', (c) => (stderr += c));
      const [code] = (await once(wrapper, 'exit')) as [number | null];
      const direct = spawn(
        process.execPath,
        [BIN, '--config', '/nonexistent/receivables-sync.yaml', 'sync', '--once'],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, ...env.env },
          stdio: 'ignore',
        },
      );
      const [directCode] = (await once(direct, 'exit')) as [number | null];
      expect(directCode).not.toBe(0);
      expect(code, stderr).toBe(directCode);
    });
  },
);
