#!/usr/bin/env node
// Entry point. The project targets Node 24; when started by an older system Node (say 20), re-run
// this same command under the Node 24 that the `node@24` devDependency installs, if it is present.
// That child is this process's stand-in: SIGINT, SIGTERM and SIGHUP sent to this process are passed
// on to it, and this process ends as it ended (its exit code, or the same signal).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const node24 = join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(node24)) {
    process.stderr.write(
      `receivables-sync needs Node.js >= 22 (found ${process.version}); run \`npm ci\` to get Node 24.\n`,
    );
    process.exit(1);
  }
  const child = spawn(node24, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = (signal) => {
    // A terminal's Ctrl-C reaches the child too (same process group): it takes the same signal
    // twice within a moment as one.
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of forwarded) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`receivables-sync: cannot start ${node24}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const each of forwarded) process.off(each, forward);
    if (signal) {
      // Die of the same signal, so whoever started this process sees what the child saw (128+n).
      process.kill(process.pid, signal);
      // Still here (a signal whose default action does not end a process): exit as a shell would say.
      setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
      return;
    }
    process.exit(code ?? 1);
  });
} else {
  await runHere();
}

async function runHere() {
  const main = join(root, 'dist', 'src', 'cli', 'main.js');
  if (!existsSync(main)) {
    process.stderr.write(
      'receivables-sync is not built: run `npm run build` (or `npm ci`) in the repository.\n',
    );
    process.exit(1);
  }
  await import(new URL(`file://${main}`).href);
}
