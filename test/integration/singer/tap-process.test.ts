import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapProcess } from '../../../src/sources/singer/tap-process.js';

const logger = pino({ level: 'silent' });

/** Whether a process runs (a zombie waiting for a reaper that is not ours has ended). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** Real child processes standing in for taps: one that fails, one that hangs, one that floods. */
describe('a tap as a child process', () => {
  let dir: string;
  const script = (name: string, code: string) => {
    const file = join(dir, name);
    writeFileSync(file, code);
    return file;
  };
  const tap = (file: string, timeoutSeconds = 5) =>
    new TapProcess({ argv: [process.execPath, file], cwd: dir, timeoutSeconds, logger });
  const drain = async (process: TapProcess) => {
    const lines: string[] = [];
    for await (const line of process.lines()) lines.push(line);
    return lines;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rs-tap-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives its lines, CRLF or not, and a last line without a newline', async () => {
    const t = tap(script('lines.mjs', `process.stdout.write('{"a":1}\\r\\n{"b":2}\\n{"c":3}');`));
    expect(await drain(t)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    await t.finished();
  });

  it('fails with its exit code and its last stderr lines', async () => {
    const t = tap(
      script(
        'fails.mjs',
        `for (let i = 0; i < 30; i++) console.error('INFO line ' + i);
         console.error('CRITICAL 401 Unauthorized: invalid api key');
         process.stdout.write('{"type":"STATE","value":{}}\\n');
         process.exit(1);`,
      ),
    );
    expect(await drain(t)).toHaveLength(1);
    const error = await t.finished().catch((e: Error & { code: string }) => e);
    expect(error).toMatchObject({ code: 'SINGER_TAP_FAILED' });
    expect((error as Error).message).toContain('exited with code 1');
    expect((error as Error).message).toContain('CRITICAL 401 Unauthorized: invalid api key');
    // Only the last lines: the first INFO lines are not repeated.
    expect((error as Error).message).not.toContain('INFO line 0\n');
  });

  it('is stopped when it writes nothing for timeoutSeconds, its children with it', async () => {
    const pidFile = join(dir, 'child.pid');
    const t = tap(
      script(
        'hangs.mjs',
        `import { spawn } from 'node:child_process';
         import { writeFileSync } from 'node:fs';
         const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
         writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));
         process.stdout.write('{"type":"STATE","value":{}}\\n');
         setInterval(() => {}, 1000);`,
      ),
      1,
    );
    expect(await drain(t)).toHaveLength(1);
    await expect(t.finished()).rejects.toMatchObject({ code: 'SINGER_TAP_TIMEOUT' });
    const grandchild = Number(execFileSync('cat', [pidFile]).toString());
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(grandchild)).toBe(false);
  });

  it('is not taken for hung while the source is slow to ask for its lines (backpressure)', async () => {
    const t = tap(
      script(
        'floods.mjs',
        `const line = JSON.stringify({ type: 'RECORD', pad: 'x'.repeat(1000) }) + '\\n'; let n = 0;
         const write = () => { while (n < 2000) { n++; if (!process.stdout.write(line)) return process.stdout.once('drain', write); } };
         write();`,
      ),
      1,
    );
    let count = 0;
    for await (const _line of t.lines()) {
      count++;
      // The source waits on the API far longer than the tap may stay silent.
      if (count === 10) await new Promise((r) => setTimeout(r, 1500));
    }
    expect(count).toBe(2000);
    await t.finished();
  });

  it('says when its program cannot be started', async () => {
    const t = new TapProcess({ argv: [join(dir, 'no-such-tap')], cwd: dir, timeoutSeconds: 5, logger });
    expect(await drain(t)).toEqual([]);
    await expect(t.finished()).rejects.toMatchObject({ code: 'SINGER_TAP_START_FAILED' });
  });
});
