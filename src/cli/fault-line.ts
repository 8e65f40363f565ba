import { AppError, errorCodeOf, messageOf } from '../domain/errors.js';

/**
 * One line for the terminal naming what stopped a pass: which part failed (the API unreachable or
 * failing, our credentials refused, the state DB or Redis down) and that nothing was lost.
 *
 * @example
 * could not run: the API at https://api.example is unreachable (NETWORK_ERROR: connect ECONNREFUSED);
 * files and records stay where they were, the next pass resumes
 */
export function faultLine(error: unknown, baseUrl: string | null | undefined): string {
  const api = baseUrl ? `the API at ${baseUrl}` : 'the API';
  const code = errorCodeOf(error);
  // The setup must change (a missing drop folder, a bad module): its own message says how.
  if (error instanceof AppError && error.kind === 'config')
    return `could not run: ${messageOf(error)} (${code}); files and records stay where they were`;
  const status = error instanceof AppError ? error.status : undefined;
  let cause: string;
  if (code === 'NETWORK_ERROR' || code === 'TIMEOUT')
    cause = `${api} is unreachable (check RECEIVABLES_BASE_URL and the network; \`doctor\` tells more)`;
  else if (code === 'LOGIN_REQUIRED' || code?.startsWith('AUTH_') || status === 401 || status === 403)
    cause = `${api} refused our credentials`;
  else if (status === 429) cause = `${api} kept answering 429 (rate limited) beyond the retry budget`;
  else if (status !== undefined && status >= 500) cause = `${api} is failing (HTTP ${status})`;
  else if (code === 'STATE_DB_UNAVAILABLE' || code === 'STATE_DB_MIGRATION_FAILED')
    cause = 'the state DB is unavailable';
  else if (code === 'REDIS_UNAVAILABLE') cause = 'Redis is unavailable';
  else if (code === 'CSV_DROP_DIR_FULL') cause = 'a disk of the drop folder is full';
  else cause = 'a part it depends on failed';
  return `could not run: ${cause} (${code ? `${code}: ` : ''}${messageOf(error)}); files and records stay where they were, the next pass resumes`;
}
