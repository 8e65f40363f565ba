import type { ErrorCode } from '../domain/error-codes.js';
import { AppError } from '../domain/errors.js';

/** The codes of the dashboard's setup (`DashboardConfigError`). */
type DashboardConfigErrorCode = 'DASHBOARD_CREDENTIALS_REQUIRED' | 'DASHBOARD_CREDENTIALS_INCOMPLETE';

/**
 * The codes the dashboard's routes answer with: the catalogue's `DASHBOARD_*` but its setup's. A
 * refused request is about what was asked (`data`); a 5xx, about a part that failed us.
 */
export type DashboardErrorCode = Exclude<Extract<ErrorCode, `DASHBOARD_${string}`>, DashboardConfigErrorCode>;

/**
 * An error of the dashboard, with a stable grep-able code and the HTTP status it answers with.
 *
 * @example throw new DashboardError('DASHBOARD_SOURCE_UNKNOWN', 404, 'no source "erp" in the configuration');
 */
export class DashboardError extends AppError {
  /** Short values a page may show with the error (the source, the record's kind and key). */
  readonly details: Readonly<Record<string, string>>;
  declare readonly code: DashboardErrorCode;
  declare readonly status: number;

  constructor(
    code: DashboardErrorCode,
    status: number,
    message: string,
    options: { cause?: unknown; details?: Readonly<Record<string, string>> } = {},
  ) {
    super(code, message, { cause: options.cause, status });
    this.details = options.details ?? {};
  }
}

/** The dashboard cannot start as configured (credentials missing beyond loopback, half a pair...). */
export class DashboardConfigError extends AppError {
  declare readonly code: DashboardConfigErrorCode;
  constructor(code: DashboardConfigErrorCode, message: string) {
    super(code, message);
  }
}
