import { Command } from 'commander';
import { startWorker } from '../app/worker.js';
import { loadConfig } from '../config/load.js';
import { createLogger } from '../logging/logger.js';
import { EXIT_CANNOT_RUN, EXIT_OK } from './errors.js';

/** After a shutdown, what still runs (a job abandoned at the limit) may not hold the process longer. */
const LINGER_MS = 3000;

/**
 * `worker`: the long-running daemon. Cron schedules enqueue passes, BullMQ workers run them (any
 * number of processes share the queue, the rate budget and the token refresh through Redis), and
 * the dashboard serves status and actions. SIGTERM or SIGINT stop it cleanly (exit 0); a second
 * signal ends it at once (exit 1).
 */
export function workerCommand(): Command {
  return new Command('worker')
    .description(
      'run the daemon: source schedules, queue workers, drop-folder polling and the dashboard (needs Redis)',
    )
    .addHelpText(
      'after',
      '\nStops on SIGTERM/SIGINT: schedules stop, running jobs get queue.shutdownSeconds to finish, then exit 0.',
    )
    .action(async (_flags: unknown, command: Command) => {
      const loaded = loadConfig({ file: command.optsWithGlobals().config });
      const logger = createLogger({ level: loaded.config.log.level });
      // Its errors (no Redis, a schedule, credentials, the API, the state DB) reach the terminal as one line, exit 1.
      const daemon = await startWorker(loaded, { logger });
      const { settings } = daemon;
      logger.info(
        {
          event: 'worker.started',
          pid: process.pid,
          prefix: settings.prefix,
          concurrency: settings.concurrency,
          scheduled: daemon.scheduled,
          dashboard: daemon.dashboard?.url ?? null,
        },
        'worker started',
      );

      const signal = await nextSignal();
      logger.info({ event: 'worker.stopping', signal }, 'shutting down');
      const again = (second: NodeJS.Signals) => {
        logger.warn({ signal: second }, 'second signal: exiting now');
        logger.flush();
        process.exit(EXIT_CANNOT_RUN);
      };
      process.once('SIGTERM', again).once('SIGINT', again);
      const { jobsLeft } = await daemon.close();
      logger.info({ event: 'worker.stopped', jobsLeft }, 'worker stopped');
      logger.flush();
      // Jobs left at the shutdown limit must not run on: end now, as a crash would (they resume elsewhere).
      if (jobsLeft) process.exit(EXIT_OK);
      process.exitCode = EXIT_OK;
      setTimeout(() => process.exit(), LINGER_MS).unref();
    });
}

/** The first SIGTERM or SIGINT. */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on).off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on).on('SIGINT', on);
  });
}
