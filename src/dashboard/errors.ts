/**
 * An error of the dashboard, with a stable grep-able code and the HTTP status it answers with.
 *
 * @example throw new DashboardError('DASHBOARD_SOURCE_UNKNOWN', 404, 'no source "erp" in the configuration');
 */
export class DashboardError extends Error {
  /** Short values a page may show with the error (the source, the record's kind and key). */
  readonly details: Readonly<Record<string, string>>;

  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    options: { cause?: unknown; details?: Readonly<Record<string, string>> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'DashboardError';
    this.details = options.details ?? {};
  }
}

/** The dashboard cannot start as configured (credentials missing beyond loopback, half a pair...). */
export class DashboardConfigError extends Error {
  constructor(
    readonly code: 'DASHBOARD_CREDENTIALS_REQUIRED' | 'DASHBOARD_CREDENTIALS_INCOMPLETE',
    message: string,
  ) {
    super(message);
    this.name = 'DashboardConfigError';
  }
}
