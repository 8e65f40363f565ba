#!/usr/bin/env node
// `target-receivables`: `receivables-sync target` under the name Singer tools give loaders, so a
// Meltano project can add it as a custom loader (docs/sources-singer.md). Meltano runs a loader as
// `target-receivables --config <settings.json>`, the JSON holding the loader's settings; those of
// this one are `config_file` (the receivables-sync configuration) and `source` (the source id):
// they become `--config <config_file> --source <source>`. Any other argument is passed as it is.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const at = args.indexOf('--config');
const file = at === -1 ? undefined : args[at + 1];
if (file?.toLowerCase().endsWith('.json')) {
  let settings;
  try {
    settings = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    settings = undefined;
  }
  if (settings && typeof settings === 'object' && !('sources' in settings)) {
    const replaced = [];
    if (typeof settings.config_file === 'string') replaced.push('--config', settings.config_file);
    if (typeof settings.source === 'string' && !args.includes('--source'))
      replaced.push('--source', settings.source);
    args.splice(at, 2, ...replaced);
  }
}
process.argv = [process.argv[0], process.argv[1], 'target', ...args];
await import('./receivables-sync.js');
