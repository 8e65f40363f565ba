/**
 * A child process holding the embedded state DB of a data folder, for the lock tests.
 *
 * Run: `node --import tsx test/support/embedded-holder.ts <dataDir>`. It prints `open` once the DB
 * is open and keeps it open until killed; when it cannot open it, it prints one JSON line
 * `{"code":...,"message":...}` and exits 1.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { errorCodeOf, messageOf } from '../../src/domain/errors.js';
import { openStateDatabase } from '../../src/state/database.js';

const script = fileURLToPath(import.meta.url);

/** Starts a holder of `dataDir`'s embedded DB; resolves with its first line (`open`, or the error JSON). */
export async function startEmbeddedHolder(
  dataDir: string,
): Promise<{ child: ChildProcessWithoutNullStreams; firstLine: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, dataDir], { stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`holder exited ${code} before printing: ${stderr}`)));
  });
  return { child, firstLine };
}

if (process.argv[1] === script) {
  const dataDir = process.argv[2] ?? '';
  try {
    await openStateDatabase({ databaseUrl: null, dataDir });
    process.stdout.write('open\n');
    setInterval(() => undefined, 60_000); // held until killed
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ code: errorCodeOf(error), message: messageOf(error) })}\n`);
    process.exitCode = 1;
  }
}
