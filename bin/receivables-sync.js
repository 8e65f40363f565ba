#!/usr/bin/env node
// Entry point. The project targets Node 24; when started by an older system Node (say 20), re-run
// this same command under the Node 24 that the `node@24` devDependency installs, if it is present.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  const result = spawnSync(node24, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  process.exit(result.status ?? 1);
}
const main = join(root, 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(
    'receivables-sync is not built: run `npm run build` (or `npm ci`) in the repository.\n',
  );
  process.exit(1);
}
await import(new URL(`file://${main}`).href);
