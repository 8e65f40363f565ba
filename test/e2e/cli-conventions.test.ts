import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type SyncEnv, syncEnv } from '../support/sync-env.js';
import { COLOUR, onTerminal, withoutColours } from '../support/terminal.js';

/** The variables that decide colours, removed: each test sets the ones it is about. */
const NO_COLOUR_SETTINGS = { NO_COLOR: undefined, FORCE_COLOR: undefined, NODE_DISABLE_COLORS: undefined };

/** A port nothing listens on: an API that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A stack trace's frame, or Node's report of an unhandled error. */
const STACK_TRACE = /^\s+at |Unhandled 'error' event|node:internal/m;

/**
 * The conventions of a command-line tool, through the built CLI: `--version`, colours on a
 * terminal only, a reader that closes the pipe early, and a word while the API is retried.
 */
describe('the CLI as a command-line tool', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  const cli = (args: string[], over: NodeJS.ProcessEnv = {}) =>
    runCli(['--config', env.configFile, ...args], { env: { ...env.env, ...NO_COLOUR_SETTINGS, ...over } });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    env = syncEnv(sandbox, 'postgres');
    // 40 rows refused by the checks (no currency): 40 open failures to list, no API write.
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 40).map((i) => accountRow(i).replace(',EUR,', ',,')),
    );
    const pass = await cli(['sync', '--once']);
    expect(pass.code, pass.stderr).toBe(2);
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when --version or -V is given, then the version of package.json is printed and the exit code is 0', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(`${version}\n`);
    }
  });

  describe('colours', () => {
    // A configuration file that is not there: the error line, at once, with no state DB or API.
    const failing = ['--config', '/nonexistent/receivables-sync.yaml', 'status'];

    it('when the CLI runs at a terminal, then the error line and the checks of doctor are coloured', async () => {
      const error = await onTerminal(failing, NO_COLOUR_SETTINGS);
      expect(error.code, error.screen).toBe(1);
      expect(error.screen).toContain('\x1b[31mreceivables-sync:\x1b[39m');
      const doctor = await onTerminal(['--config', env.configFile, 'doctor'], {
        ...env.env,
        ...NO_COLOUR_SETTINGS,
      });
      expect(doctor.code, doctor.screen).toBe(0);
      expect(doctor.screen).toContain('\x1b[32mok\x1b[39m    state DB');
      expect(doctor.screen).toContain('\x1b[32mready\x1b[39m: next');
    });

    it('when NO_COLOR is set or --no-color is given at a terminal, then no escape code is written', async () => {
      const noColor = await onTerminal(failing, { ...NO_COLOUR_SETTINGS, NO_COLOR: '1' });
      expect(noColor.code).toBe(1);
      expect(noColor.screen).toMatch(/^receivables-sync: /m);
      expect(noColor.screen).not.toMatch(COLOUR);
      const flag = await onTerminal(['--no-color', ...failing], NO_COLOUR_SETTINGS);
      expect(flag.code).toBe(1);
      expect(flag.screen).toMatch(/^receivables-sync: /m);
      expect(flag.screen).not.toMatch(COLOUR);
      const doctor = await onTerminal(['--no-color', '--config', env.configFile, 'doctor'], {
        ...env.env,
        ...NO_COLOUR_SETTINGS,
      });
      expect(doctor.code, doctor.screen).toBe(0);
      expect(doctor.screen).toMatch(/^ok {4}state DB/m);
      expect(doctor.screen).not.toMatch(COLOUR);
    });

    it('when the output is a pipe, or --json output, then it is never coloured (FORCE_COLOR forces it on a pipe, --no-color wins)', async () => {
      const piped = await runCli(failing, { env: NO_COLOUR_SETTINGS });
      expect(piped.code).toBe(1);
      expect(piped.stderr).toMatch(/^receivables-sync: /);
      expect(piped.stderr).not.toMatch(COLOUR);
      const doctor = await cli(['doctor']);
      expect(doctor.code, doctor.stderr).toBe(0);
      expect(doctor.stdout + doctor.stderr).not.toMatch(COLOUR);
      // --json at a terminal: the JSON line (a file here) and the report on the terminal, both plain.
      const out = join(env.dir, 'doctor.json');
      const json = await onTerminal(
        ['--config', env.configFile, 'doctor', '--json'],
        { ...env.env, ...NO_COLOUR_SETTINGS },
        { stdoutFile: out },
      );
      expect(json.code, json.screen).toBe(0);
      expect(json.screen).toMatch(/^ok {4}state DB/m);
      expect(json.screen + readFileSync(out, 'utf8')).not.toMatch(COLOUR);
      // FORCE_COLOR, for a CI log that shows colours, is Node's convention; --no-color still wins.
      const forced = await runCli(failing, { env: { ...NO_COLOUR_SETTINGS, FORCE_COLOR: '1' } });
      expect(forced.stderr).toContain('\x1b[31mreceivables-sync:\x1b[39m');
      const refused = await runCli(['--no-color', ...failing], {
        env: { ...NO_COLOUR_SETTINGS, FORCE_COLOR: '1' },
      });
      expect(refused.stderr).toMatch(/^receivables-sync: /);
      expect(refused.stderr).not.toMatch(COLOUR);
    });
  });

  describe('a reader that closes the pipe early', () => {
    it('when the reader of `failures` is gone before it writes, then it ends quietly: exit 0, no stack trace', async () => {
      const child = spawn(process.execPath, [BIN, '--config', env.configFile, 'failures'], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Our end of its stdout closed at once: every write it makes meets a closed pipe (EPIPE).
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const [code] = (await once(child, 'close')) as [number | null];
      expect(stderr).not.toMatch(STACK_TRACE);
      expect(stderr).not.toContain('EPIPE');
      expect(code, stderr).toBe(0);
    });

    it('when `failures | head -1` reads one line, then the line is there and the CLI exits 0 without a word on stderr', async () => {
      const command = `${[process.execPath, BIN, '--config', env.configFile, 'failures']
        .map((s) => `'${s}'`)
        .join(' ')} | head -1; echo "exit \${PIPESTATUS[0]}" >&2`;
      const child = spawn('bash', ['-c', command], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      await once(child, 'close');
      expect(stdout).toMatch(/^#\d+ erp-csv account C-\d+ \[validate; needs a fix first\].*\n$/);
      expect(stderr).toBe('exit 0\n');
    });
  });

  it('when the API does not answer at the start of a pass, then the terminal says it is retried, attempt by attempt, and the pass exits 1', async () => {
    const port = await closedPort();
    const { code, screen } = await onTerminal(['--config', env.configFile, 'sync', '--once'], {
      ...env.env,
      ...NO_COLOUR_SETTINGS,
      RECEIVABLES_BASE_URL: `http://127.0.0.1:${port}`,
      // No organization named: the start lists the token's, the request that is retried.
      RECEIVABLES_ORGANIZATION_ID: '',
    });
    expect(code, screen).toBe(1);
    const plain = withoutColours(screen);
    // A wait shorter than a second is shown as the next attempt under way.
    const drawn = [
      ...plain.matchAll(
        new RegExp(
          `the API at http://127\\.0\\.0\\.1:${port} is not answering \\(NETWORK_ERROR\\): attempt (\\d) of 8 (failed, next in \\d+ s|under way) \\(GET /api/public/v1/organizations\\)`,
          'g',
        ),
      ),
    ];
    const attempts = new Set(drawn.map((m) => m[1]));
    expect(attempts.size, plain).toBeGreaterThanOrEqual(4);
    expect(drawn.some((m) => m[2]!.startsWith('failed, next in'))).toBe(true);
    // The line is erased before the error: the last thing on the screen is the one line of why.
    const last = plain.trimEnd().split(/\r?\n/).at(-1)!.split('\x1b[2K').at(-1)!;
    expect(last).toMatch(/^receivables-sync: cannot reach the API at http:\/\/127\.0\.0\.1:\d+/);
  });
});
