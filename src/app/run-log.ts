import pino, { type DestinationStream } from 'pino';
import type { LoadedConfig } from '../config/load.js';
import { messageOf } from '../domain/errors.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { RunLogSink } from '../state/run-log-sink.js';

/** How often a failing run log may say so in the log. */
const WARN_EVERY_MS = 60_000;

/**
 * The logger of a runtime and the run log it feeds: every line carrying a `runId` (a pass's lines)
 * also goes, as JSON, to a `RunLogSink` that keeps them in the state DB (`attach` it once the DB is
 * open; `close` it before the DB).
 *
 * Without `given`, the logger is made here, from `log.level` and `log.format`. With `given` (the
 * `worker` command and tests bring their own), the lines still go where the given logger sends
 * them, formatted by its own destination: a logger over that destination (pino's `streamSym`) and
 * the sink (the given destination keeps its level; the sink takes `info` and up). A given logger's
 * child bindings are not carried over.
 */
export function runLogging(loaded: LoadedConfig, given?: Logger): { logger: Logger; runLog: RunLogSink } {
  let warnedAt = 0;
  let warn: (error: unknown) => void = () => undefined;
  const runLog = new RunLogSink({ onError: (error) => warn(error) });
  const logger = given
    ? withAlso(given, runLog)
    : createLogger({
        level: loaded.config.log.level,
        format: loaded.config.log.format,
        color: loaded.config.log.color,
        also: [runLog],
      });
  warn = (error) => {
    if (Date.now() - warnedAt < WARN_EVERY_MS) return;
    warnedAt = Date.now();
    // No runId on this line: the sink does not take it.
    logger.warn(
      { event: 'run-log.write-failed', err: messageOf(error), ...runLog.stats },
      'run log: lines could not be kept in the state DB (the passes go on)',
    );
  };
  return { logger, runLog };
}

function withAlso(given: Logger, also: DestinationStream): Logger {
  const destination = (given as unknown as Record<symbol, DestinationStream | undefined>)[
    pino.symbols.streamSym
  ];
  if (!destination) return given;
  // The given destination formats lines itself (JSON or pretty) and keeps its level; the run log
  // gets the lines of a pass from `info` up, whatever that level is.
  const givenLevel = given.levelVal;
  const streams: pino.StreamEntry[] = [{ stream: also, level: 'trace' }];
  if (given.level !== 'silent') streams.unshift({ stream: destination, level: given.level as pino.Level });
  return createLogger({
    level: givenLevel < pino.levels.values.info! ? given.level : 'info',
    format: 'json',
    destination: pino.multistream(streams),
  });
}
