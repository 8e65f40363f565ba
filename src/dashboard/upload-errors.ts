import type { FastifyError } from 'fastify';
import { errorCodeOf, messageOf } from '../domain/errors.js';
import { DashboardError } from './errors.js';

/** The status each error of a staged file answers with (codes of `sources/csv/errors.ts`). */
const STATUS_OF: Readonly<Record<string, number>> = {
  CSV_UPLOAD_NAME_REFUSED: 400,
  CSV_UPLOAD_TOO_LARGE: 413,
  CSV_UPLOAD_UNKNOWN: 404,
  CSV_UPLOAD_NAME_TAKEN: 409,
  CSV_DROP_DIR_MISSING: 409,
  CSV_DROP_DIR_UNSAFE: 409,
  CSV_DROP_DIR_FULL: 507,
};

/** The error as the dashboard answers it: its own, a staged file's (by code), multipart's, or a 500. */
export function asDashboardError(error: unknown): DashboardError {
  if (error instanceof DashboardError) return error;
  const code = errorCodeOf(error);
  const status = code === undefined ? undefined : STATUS_OF[code];
  if (code !== undefined && status !== undefined)
    return new DashboardError(code, status, messageOf(error), { cause: error });
  const statusCode = (error as FastifyError).statusCode;
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500)
    return new DashboardError(
      (error as FastifyError).code ?? 'DASHBOARD_BAD_REQUEST',
      statusCode,
      messageOf(error),
      {
        cause: error,
      },
    );
  return new DashboardError('DASHBOARD_INTERNAL', 500, 'internal error (see the logs)', { cause: error });
}
