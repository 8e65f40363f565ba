import { Command } from 'commander';
import { createLogger } from '../logging/logger.js';
import { loadCliConfig } from './cli-config.js';
import { EXIT_CANNOT_RUN, EXIT_OK } from './errors.js';

/** After a shutdown, what still runs (a job abandoned at the limit) may not hold the process longer. */
const LINGER_MS = 3000;
/** On a second signal, how long closing the runs in progress may delay the exit. */
export const LAST_WORDS_MS = 2000;

/**
 * `worker`: the long-running daemon. Cron schedules enqueue passes, BullMQ workers run them (any
 * number of processes share the queue, the rate budget and the token refresh through Redis), and
 * the dashboard serves status and actions. SIGTERM or SIGINT stop it cleanly (exit 0); a second
 * signal ends it at once (exit 1), its runs in progress closed as `interrupted` first.
 */
export function workerCommand(): Command {
  return new Command('worker')
    .description(
      'run the daemon: source schedules, queue workers, drop-folder polling and the dashboard (needs Redis)',
    )
    .addHelpText(
      'after',
      '\nStops on SIGTERM/SIGINT: schedules stop, running jobs get queue.shutdownSeconds to finish, then exit 0' +
        ' (a job still running then is left to another worker, its run marked interrupted). A second signal exits at once (1).',
    )
    .action(async (_flags: unknown, command: Command) => {
      const loaded = loadCliConfig(command);
      // A daemon: its info lines (started, dashboard, stopped) are its output, on a terminal too.
      const logger = createLogger({
        level: loaded.config.log.level ?? 'info',
        format: loaded.config.log.format,
        color: loaded.config.log.color,
      });
      // Its configuration errors reach the terminal as one line, exit 1; an outage (Redis, the
      // state DB, the API) does not: /healthz answers at once, the rest starts once they answer.
      // Loaded here: the worker's modules (BullMQ, the dashboard's server, metrics) are for it alone.
      const { launchWorker } = await import('../app/worker.js');
      const launch = await launchWorker(loaded, { logger });
      const signals = shutdownSignals();
      const daemon = await Promise.race([launch.started, signals.first.then(() => null)]).catch(
        (error: unknown) => {
          signals.dispose();
          throw error;
        },
      );
      if (daemon)
        logger.info(
          {
            event: 'worker.started',
            pid: process.pid,
            prefix: launch.settings.prefix,
            concurrency: launch.settings.concurrency,
            scheduled: daemon.scheduled,
            reconcileScheduled: daemon.reconcileScheduled,
            dashboard: launch.dashboardUrl,
            ready: launch.readiness.ready,
          },
          'worker started',
        );

      const signal = await signals.first;
      logger.info({ event: 'worker.stopping', signal }, 'shutting down');
      void signals.second.then(async (second) => {
        logger.warn({ signal: second }, 'second signal: exiting now');
        await launch.interruptRuns(LAST_WORDS_MS);
        logger.flush();
        process.exit(EXIT_CANNOT_RUN);
      });
      const { jobsLeft } = await launch.close();
      logger.info({ event: 'worker.stopped', jobsLeft }, 'worker stopped');
      logger.flush();
      // Jobs left at the shutdown limit must not run on: end now, as a crash would (they resume elsewhere).
      if (jobsLeft) process.exit(EXIT_OK);
      process.exitCode = EXIT_OK;
      setTimeout(() => process.exit(), LINGER_MS).unref();
    });
}

/**
 * The same signal again within this long is one signal delivered twice, not a second one: a
 * terminal's Ctrl-C reaches every process of the foreground group (the `bin/` wrapper, which
 * forwards it, and this process), and systemd signals every process of a unit.
 */
export const REPEATED_SIGNAL_MS = 1000;

/** The shutdown signals of a long-running command (SIGTERM, SIGINT): the first, and a second one. */
export interface ShutdownSignals {
  first: Promise<NodeJS.Signals>;
  /** A second signal (not the first one delivered twice): the command must end at once. */
  second: Promise<NodeJS.Signals>;
  /** Stops listening: the signals end the process again (Node's default). */
  dispose(): void;
}

/** Listens to SIGTERM and SIGINT from now on (they no longer end the process by themselves). */
export function shutdownSignals(): ShutdownSignals {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  let onFirst!: (signal: NodeJS.Signals) => void;
  let onSecond!: (signal: NodeJS.Signals) => void;
  const firstSignal = new Promise<NodeJS.Signals>((resolve) => {
    onFirst = resolve;
  });
  const secondSignal = new Promise<NodeJS.Signals>((resolve) => {
    onSecond = resolve;
  });
  const on = (signal: NodeJS.Signals) => {
    if (!first) {
      first = { signal, at: Date.now() };
      onFirst(signal);
    } else if (signal !== first.signal || Date.now() - first.at >= REPEATED_SIGNAL_MS) {
      onSecond(signal);
    }
  };
  process.on('SIGTERM', on).on('SIGINT', on);
  return {
    first: firstSignal,
    second: secondSignal,
    dispose: () => {
      process.off('SIGTERM', on).off('SIGINT', on);
    },
  };
}
