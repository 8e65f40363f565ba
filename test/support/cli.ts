import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(REPO_ROOT, 'bin', 'receivables-sync.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node bin/receivables-sync.js ...`) to completion; `input` is its stdin. */
export async function runCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; bin?: string } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [options.bin ?? BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
  });
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.input ?? '');
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** Starts a long-running CLI command and resolves with its first stdout line. */
export async function startCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ child: ChildProcessWithoutNullStreams; firstLine: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const lines = createInterface({ input: child.stdout });
  const firstLine = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing: ${stderr}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    return code;
  };
  return { child, firstLine, stop };
}
