import { Command } from 'commander';
import { HttpTrace } from '../api/http-trace.js';
import type { DoctorCheck } from '../app/doctor.js';
import type { LoadedConfig } from '../config/load.js';
import { messageOf } from '../domain/errors.js';
import type { Tone } from '../logging/terminal-style.js';
import { loadCliConfig, outputStyle } from './cli-config.js';
import { EXIT_CANNOT_RUN, EXIT_OK } from './errors.js';
import { writeTrace } from './sync-command.js';

/** The colour of each check's status on a terminal. */
const STATUS_TONES: Readonly<Record<DoctorCheck['status'], Tone>> = {
  ok: 'ok',
  warn: 'warning',
  fail: 'error',
};

/**
 * `doctor [--source ID] [--json]`: checks the setup end to end and prints each check as ok / warn /
 * fail with the reason and the fix; exit 0 when nothing failed, 1 otherwise. With `--json`, the
 * last stdout line is `{"ok":bool,"checks":[{"name","status","detail"}]}`. Writes nothing to the
 * service.
 */
export function doctorCommand(): Command {
  return new Command('doctor')
    .description(
      'check the setup before a first pass: config, state DB, Redis, the API, discovery, the token, the organization, the rate policy, the clock, each source',
    )
    .option('--source <id>', 'check only this source')
    .option('--json', 'print {"ok","checks":[...]} as the last stdout line')
    .option(
      '--trace-http <file>',
      'write every HTTP request and response to FILE as HAR 1.2 (credentials redacted)',
    )
    .action(async (flags: { source?: string; json?: boolean; traceHttp?: string }, command: Command) => {
      let checks: DoctorCheck[];
      let loaded: LoadedConfig | undefined;
      const trace = flags.traceHttp ? new HttpTrace() : undefined;
      try {
        loaded = loadCliConfig(command);
        const { runDoctor } = await import('../app/doctor.js');
        checks = await runDoctor(loaded, {
          sourceId: flags.source,
          ...(trace ? { fetch: trace.fetch() } : {}),
        });
      } catch (error) {
        checks = [{ name: 'config', status: 'fail', detail: messageOf(error) }];
      }
      if (trace && flags.traceHttp) await writeTrace(trace, flags.traceHttp);
      const failed = checks.some((c) => c.status === 'fail');
      const width = Math.max(...checks.map((c) => c.name.length));
      const style = outputStyle(command, process.stdout, { loaded, json: flags.json });
      const lines = checks.map(
        (c) =>
          `${style.tone(STATUS_TONES[c.status], c.status)}${' '.repeat(4 - c.status.length)}  ${c.name.padEnd(width)}  ${c.detail}`,
      );
      const verdict = failed
        ? `${style.tone('error', `${checks.filter((c) => c.status === 'fail').length} check(s) failed`)}: fix them, then run doctor again`
        : `${style.tone('ok', 'ready')}: next, \`sync --once --dry-run\``;
      const text = `${lines.join('\n')}\n\n${verdict}\n`;
      if (flags.json) {
        process.stderr.write(text);
        process.stdout.write(`${JSON.stringify({ ok: !failed, checks })}\n`);
      } else {
        process.stdout.write(text);
      }
      process.exitCode = failed ? EXIT_CANNOT_RUN : EXIT_OK;
    });
}
