import pino, { type DestinationStream, type Logger } from 'pino';

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

export interface LoggerOptions {
  level?: string;
  /** Where lines go; stderr by default so stdout stays free for `--json` and the sandbox's first line. */
  destination?: DestinationStream;
  /**
   * More places every line goes to, as JSON (redacted like the rest), whatever `destination` does
   * with them: for example the run log kept in the state DB.
   */
  also?: readonly DestinationStream[];
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const main = options.destination ?? pino.destination(2);
  const destination =
    options.also && options.also.length > 0
      ? pino.multistream([
          { stream: main, level: level as pino.Level },
          ...options.also.map((stream) => ({ stream, level: 'trace' as const })),
        ])
      : main;
  return pino(
    {
      level,
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
      base: { app: 'receivables-sync' },
    },
    destination,
  );
}
