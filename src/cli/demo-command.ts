import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Command } from 'commander';
import { openSyncRuntime, syncServiceOf } from '../app/runtime.js';
import { CONFIG_FILE_NAME, loadConfig } from '../config/load.js';
import { packageRoot } from '../config/paths.js';
import { type GlobalFlags, withGlobalFlags } from './cli-config.js';
import { EXIT_OK, EXIT_ROWS_FAILED } from './errors.js';
import { invocation } from './invocation.js';
import { hasFailures, jsonSummary, textSummary } from './sync-summary.js';

/** The demo's source and state, relative to its folder (its sandbox's address and token are not kept). */
const DEMO_CONFIG = `# Written by \`receivables-sync demo\`: its source and state DB, for \`status\` and \`failures\`.
sources:
  - id: erp-csv
    type: csv
    dropDir: ./drop
    stableSeconds: 0 # take a file at once (by default it must stay unchanged 5 s: still being written)
state:
  dataDir: ./state
`;

/** The demo's working folder unless `--dir` names another, relative to the working folder. */
export const DEMO_DIR = './data/demo';

/**
 * `demo`: the main job end to end on embedded defaults. Starts the sandbox API in this process,
 * copies the sample drop folder to `<dir>/drop`, syncs it into an embedded state DB, then syncs again
 * to show that unchanged data costs no API call. `<dir>/receivables-sync.yaml` names its source and
 * state, so `status` and `failures` can read what it recorded (the sandbox is gone by then).
 */
export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'sync the sample drop folder (examples/drop) into a local sandbox API, twice, and show what happened',
    )
    .option('--dir <dir>', 'working folder (drop folder copy, archive, state DB); emptied first', DEMO_DIR)
    .action(async (flags: { dir: string }, command: Command) => {
      const dir = resolve(flags.dir);
      const sample = join(packageRoot(), 'examples', 'drop');
      if (!existsSync(sample)) throw new Error(`the sample drop folder is missing: ${sample}`);
      rmSync(dir, { recursive: true, force: true });
      const dropDir = join(dir, 'drop');
      cpSync(sample, dropDir, { recursive: true });
      const { startSandbox } = await import('../sandbox/server.js');
      const sandbox = await startSandbox({ port: 0 });
      const out = process.stdout;
      out.write(`Sandbox API at ${sandbox.baseUrl} (organization ${sandbox.organizationId})\n`);
      out.write(
        `Drop folder ${relative(process.cwd(), dropDir) || dropDir}: ${readdirSync(dropDir)
          .filter((f) => f.endsWith('.csv'))
          .join(', ')}\n`,
      );
      // Read from the demo's folder (cwd), as `status --config <dir>/receivables-sync.yaml` reads it.
      const configFile = join(dir, CONFIG_FILE_NAME);
      writeFileSync(configFile, DEMO_CONFIG);
      const loaded = withGlobalFlags(
        loadConfig({
          env: {
            RECEIVABLES_BASE_URL: sandbox.baseUrl,
            RECEIVABLES_ACCESS_TOKEN: sandbox.accessToken,
            LOG_LEVEL: 'warn',
          },
          cwd: dir,
        }),
        command.optsWithGlobals<GlobalFlags>(),
      );
      const runtime = await openSyncRuntime(loaded);
      let failed = false;
      try {
        const service = syncServiceOf(runtime, loaded.config.sources);
        for (const [pass, title] of [
          [1, 'First pass: everything is new'],
          [2, 'Second pass: the same data dropped again'],
        ] as const) {
          if (pass === 2) cpSync(sample, dropDir, { recursive: true });
          const before = runtime.targets.stats().requests;
          const started = Date.now();
          const summaries = await service.syncSource('erp-csv', { trigger: 'demo' });
          const after = runtime.targets.stats().requests;
          const json = jsonSummary(
            summaries,
            {
              requests: after.requests - before.requests,
              rateLimited: after.rateLimited - before.rateLimited,
            },
            Date.now() - started,
          );
          out.write(`\n== ${title}\n${textSummary(summaries, json, false)}`);
          failed ||= hasFailures(summaries);
        }
        const stats = (await (
          await fetch(`${sandbox.baseUrl}/__sandbox/stats`, {
            headers: { authorization: `Bearer ${sandbox.adminToken}` },
          })
        ).json()) as { accounts: number; invoices: number; creditNotes: number };
        out.write(
          `\nThe sandbox now holds ${stats.accounts} accounts, ${stats.invoices} invoices and ${stats.creditNotes} credit notes.\n`,
        );
        out.write(
          `Archived files and error reports: ${join(relative(process.cwd(), dropDir) || dropDir, 'archive')}\n`,
        );
        out.write(
          `What it recorded (its runs, cursors, failures): ${invocation()} --config ${relative(process.cwd(), configFile) || configFile} status\n` +
            `(each demo starts again from an empty ${relative(process.cwd(), dir) || dir})\n`,
        );
      } finally {
        await runtime.close();
        await sandbox.close();
      }
      process.exitCode = failed ? EXIT_ROWS_FAILED : EXIT_OK;
    });
}
