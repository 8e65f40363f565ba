import { AppError } from '../domain/errors.js';

/**
 * An error of the dashboard, with a stable grep-able code and the HTTP status it answers with.
 *
 * @example throw new DashboardError('DASHBOARD_SOURCE_UNKNOWN', 404, 'no source "erp" in the configuration');
 */
export class DashboardError extends AppError {
  /** Short values a page may show with the error (the source, the record's kind and key). */
  readonly details: Readonly<Record<string, string>>;
  declare readonly status: number;

  constructor(
    code: string,
    status: number,
    message: string,
    options: { cause?: unknown; details?: Readonly<Record<string, string>> } = {},
  ) {
    // A refused request is about what was asked (`data`); a 5xx, about a part that failed us.
    super(code, message, { cause: options.cause, status, kind: status >= 500 ? 'infrastructure' : 'data' });
    this.details = options.details ?? {};
  }
}

/** The dashboard cannot start as configured (credentials missing beyond loopback, half a pair...). */
export class DashboardConfigError extends AppError {
  declare readonly code: 'DASHBOARD_CREDENTIALS_REQUIRED' | 'DASHBOARD_CREDENTIALS_INCOMPLETE';
  constructor(code: 'DASHBOARD_CREDENTIALS_REQUIRED' | 'DASHBOARD_CREDENTIALS_INCOMPLETE', message: string) {
    super(code, message, { kind: 'config' });
  }
}
