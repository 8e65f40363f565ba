import pino, { type DestinationStream, type Logger } from 'pino';
import { PrettyLogStream } from './pretty-stream.js';
import { terminalStyle } from './terminal-style.js';

/**
 * Paths pino replaces with "[redacted]". One constant list, never built from input: request and
 * response headers, and every field that can hold a token, a code, a verifier or a secret.
 */
export const REDACT_PATHS: readonly string[] = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'req.headers.cookie',
  'accessToken',
  'refreshToken',
  'access_token',
  'refresh_token',
  'idToken',
  'id_token',
  'authorizationCode',
  'codeVerifier',
  'code_verifier',
  'clientSecret',
  'client_secret',
  'password',
  'secret',
  'tokenKey',
  'token',
  '*.accessToken',
  '*.refreshToken',
  '*.access_token',
  '*.refresh_token',
  '*.codeVerifier',
  '*.code_verifier',
  '*.clientSecret',
  '*.client_secret',
  '*.password',
  '*.secret',
  '*.token',
  '*.authorization',
  '*.authorizationCode',
  '*.headers.authorization',
];

export type { Logger };

/**
 * How the main destination shows lines: `json` (one JSON object a line, for machines and log
 * collectors), `pretty` (one short readable line, see `prettyLine`), or `auto`: pretty when the
 * destination is a terminal, JSON otherwise.
 */
export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerOptions {
  /**
   * The level. Unset: `info`, except on a pretty destination, where only warnings and errors are
   * shown (the extra `also` streams still get `info`).
   */
  level?: string | undefined;
  /** Default `auto`. Only the main destination is formatted; `also` streams always get JSON. */
  format?: LogFormat | undefined;
  /**
   * Readable lines colour the level of warnings (yellow) and errors (red) on a terminal that shows
   * colours (not under `NO_COLOR`); false: never (`--no-color`, `log.color: false`). Default true.
   */
  color?: boolean | undefined;
  /** Where lines go; stderr by default so stdout stays free for `--json` and the sandbox's first line. */
  destination?: DestinationStream;
  /**
   * More places every line goes to, as JSON (redacted like the rest), whatever `destination` does
   * with them: for example the run log kept in the state DB.
   */
  also?: readonly DestinationStream[];
}

const isTerminal = (stream: unknown): boolean =>
  typeof stream === 'object' && stream !== null && (stream as { isTTY?: unknown }).isTTY === true;

/**
 * The logger of a command or daemon: pino, secrets redacted (`REDACT_PATHS`), lines on stderr as
 * JSON or, at a terminal, as short readable lines (`format`); the `also` streams get JSON whatever.
 *
 * @example
 * const logger = createLogger({ level: config.log.level, format: config.log.format, also: [runLog] });
 * logger.warn({ kind: 'invoice', sourceKey: 'INV-7', reason, apiCode }, 'record failed');
 * // at a terminal: 12:03:04 WARN  record failed  invoice INV-7: <reason> [<apiCode>]
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  // The default destination is fd 2: whether it is a terminal is process.stderr's to say.
  const shown = options.destination ?? process.stderr;
  const terminal = isTerminal(shown);
  const format = options.format ?? 'auto';
  const pretty = format === 'pretty' || (format === 'auto' && terminal);
  const level = options.level ?? 'info';
  const mainLevel = options.level ?? (pretty ? 'warn' : 'info');
  const sink = options.destination ?? pino.destination(2);
  const style = terminalStyle(shown as NodeJS.WritableStream, options.color ?? true);
  const main: DestinationStream = pretty ? new PrettyLogStream({ sink, terminal, style }) : sink;
  const also = options.also ?? [];
  const destination =
    also.length > 0
      ? pino.multistream([
          { stream: main, level: mainLevel as pino.Level },
          ...also.map((stream) => ({ stream, level: 'trace' as const })),
        ])
      : main;
  return pino(
    {
      level: also.length > 0 ? level : mainLevel,
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
      base: { app: 'receivables-sync' },
    },
    destination,
  );
}
