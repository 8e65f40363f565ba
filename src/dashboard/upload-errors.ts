import type { FastifyError } from 'fastify';
import type { ErrorCode } from '../domain/error-codes.js';
import { errorCodeOf, messageOf } from '../domain/errors.js';
import { DashboardError } from './errors.js';

/** The status each error of a staged file answers with (codes of `sources/csv/errors.ts`). */
const STATUS_OF: Readonly<Partial<Record<ErrorCode, number>>> = {
  CSV_UPLOAD_NAME_REFUSED: 400,
  CSV_UPLOAD_TOO_LARGE: 413,
  CSV_UPLOAD_UNKNOWN: 404,
  CSV_UPLOAD_NAME_TAKEN: 409,
  CSV_DROP_DIR_MISSING: 409,
  CSV_DROP_DIR_UNSAFE: 409,
  CSV_DROP_DIR_FULL: 507,
};

/** What an upload route answers for an error: `{code, message}` with its status. */
export interface UploadRefusal {
  /** The error's own code (a staged file's `CSV_*`, multipart's `FST_*`), or the dashboard's. */
  code: string;
  status: number;
  message: string;
}

/**
 * The answer to an error of an upload route: the dashboard's own, a staged file's (its code, with
 * the status of `STATUS_OF`), multipart's 4xx (Fastify's code), or a 500. Each error keeps its own
 * code and class: a staged file's code stays its `CsvSourceError`'s, never a `DashboardError`'s.
 */
export function uploadRefusalOf(error: unknown): UploadRefusal {
  if (error instanceof DashboardError) return error;
  const code = errorCodeOf(error);
  const status = code === undefined ? undefined : STATUS_OF[code as ErrorCode];
  if (code !== undefined && status !== undefined) return { code, status, message: messageOf(error) };
  const statusCode = (error as FastifyError).statusCode;
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500)
    return {
      code: (error as FastifyError).code ?? ('DASHBOARD_BAD_REQUEST' satisfies ErrorCode),
      status: statusCode,
      message: messageOf(error),
    };
  return {
    code: 'DASHBOARD_INTERNAL' satisfies ErrorCode,
    status: 500,
    message: 'internal error (see the logs)',
  };
}
