import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { BIN, REPO_ROOT } from './cli.js';

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Runs the CLI on a pseudo-terminal (`script` from util-linux), 200 columns wide, as a person at a
 * terminal would (TERM set, no CI); `stdoutFile` sends its stdout to a file instead (a pipe), stderr staying on the
 * terminal. Resolves with what the terminal showed. An `env` value `undefined` removes the variable.
 */
export async function onTerminal(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { stdoutFile?: string } = {},
): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  const redirect = options.stdoutFile ? ` > ${quote(options.stdoutFile)}` : '';
  const child = spawn('script', ['-qfec', `stty cols 200; exec ${command}${redirect}`, '/dev/null'], {
    cwd: REPO_ROOT,
    // A person's terminal: TERM names one, and no `CI` (Node shows no colour under a CI it does not
    // know, as `.ci/run`'s `CI=true` is); the caller's env may set either back.
    env: { ...process.env, TERM: 'xterm-256color', CI: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (chunk) => (screen += chunk));
  child.stderr.on('data', (chunk) => (screen += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, screen };
}

const ESC = '\u001b';

/** A colour (SGR) escape sequence: `\x1b[31m`, `\x1b[39m` (built from a string: it matches ESC). */
export const COLOUR = new RegExp(`${ESC}\\[\\d+(;\\d+)*m`);

/** `text` without its colours. */
export const withoutColours = (text: string) => text.replace(new RegExp(COLOUR.source, 'g'), '');
