import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { CredentialStoreError, TokenEndpointError } from '../../../src/api/auth/auth-errors.js';
import {
  ApiResponseError,
  FilterError,
  LoginRequiredError,
  NetworkError,
  TimeoutError,
} from '../../../src/api/errors.js';
import { CliError, EXIT_CANNOT_RUN, exitCodeOf } from '../../../src/cli/errors.js';
import { ConfigError } from '../../../src/config/load.js';
import { DashboardConfigError, DashboardError } from '../../../src/dashboard/errors.js';
import { AppError, errorKindOf, isRetryable } from '../../../src/domain/errors.js';
import { RedisUnavailableError } from '../../../src/domain/redis-unavailable.js';
import { isPermanentFailure, toJobError } from '../../../src/jobs/job-errors.js';
import { CsvParseFailure } from '../../../src/sources/csv/csv-rows.js';
import { CsvSourceError } from '../../../src/sources/csv/errors.js';
import { ModuleSourceError } from '../../../src/sources/module/errors.js';
import { SqlSourceError } from '../../../src/sources/sql/errors.js';
import { MigrationError } from '../../../src/state/database.js';
import { fail, reasonOf } from '../../../src/sync/outcome.js';

const answer = (status: number, apiCode?: string) =>
  new ApiResponseError({ status, method: 'POST', path: '/accounts', apiCode, message: 'refused' });

describe('the error base', () => {
  it('when any module throws its error, then it is an AppError with a code, a kind and retryable', () => {
    const errors: AppError[] = [
      answer(400),
      new NetworkError('connect ECONNREFUSED'),
      new LoginRequiredError('the refresh token was revoked'),
      new CredentialStoreError('wrong key'),
      new ConfigError(null, ['api.baseUrl: not a URL']),
      new RedisUnavailableError('no answer'),
      new SqlSourceError('SQL_QUERY_FAILED', 'syntax error'),
      new ModuleSourceError('MODULE_SOURCE_INVALID', 'no factory'),
      new CsvSourceError('CSV_DROP_DIR_MISSING', 'no folder'),
      new CsvParseFailure(3, 'CSV_QUOTE_NOT_CLOSED', 'quote not closed'),
      new MigrationError('migration 002 failed'),
      new DashboardError('DASHBOARD_SOURCE_UNKNOWN', 404, 'no source'),
      new DashboardConfigError('DASHBOARD_CREDENTIALS_REQUIRED', 'credentials required'),
      new CliError('--source needs a value'),
      fail('update', 'frozen fields'),
    ];
    for (const error of errors) {
      expect(error).toBeInstanceOf(AppError);
      expect(error.code).toMatch(/^[A-Za-z][\w.-]+$/);
      expect(['data', 'infrastructure', 'config']).toContain(error.kind);
      expect(typeof error.retryable).toBe('boolean');
      expect(error.name).toBe(error.constructor.name);
    }
  });

  it('when the API answers, then the status decides the kind: credentials and faults are infrastructure, a refused record is data', () => {
    expect([401, 403, 408, 409, 429, 500, 503].map((s) => answer(s).kind)).toEqual(
      Array(7).fill('infrastructure'),
    );
    expect([400, 404, 413, 422].map((s) => answer(s).kind)).toEqual(Array(4).fill('data'));
    expect(answer(403, 'app-invoicing.document.managed-action-forbidden').kind).toBe('data');
    expect(answer(400, 'app-invoicing.invoice.duplicate-source-id').code).toBe(
      'app-invoicing.invoice.duplicate-source-id',
    );
    expect(answer(502).status).toBe(502);
  });

  it('when the network, a timeout or the token endpoint fails, then it is an infrastructure fault that may pass', () => {
    for (const error of [
      new NetworkError('reset'),
      new TimeoutError('30 s'),
      new TokenEndpointError('503'),
    ]) {
      expect(error.kind).toBe('infrastructure');
      expect(error.retryable).toBe(true);
    }
    expect(new FilterError('51 values').kind).toBe('data');
  });

  it('when a source fails, then a configuration problem is config and a passing fault is infrastructure', () => {
    expect(new SqlSourceError('SQL_CONNECT_FAILED', 'refused')).toMatchObject({
      kind: 'infrastructure',
      retryable: true,
    });
    expect(new SqlSourceError('SQL_COLUMNS_MISSING', 'no id')).toMatchObject({
      kind: 'config',
      retryable: false,
    });
    expect(new ModuleSourceError('MODULE_UNIT_INVALID', 'bad batch').kind).toBe('data');
    expect(new CsvSourceError('CSV_MAPPING_INVALID', 'bad target').kind).toBe('config');
  });

  it('when an error is not ours (a driver socket error, a bug), then it blames no data and may pass', () => {
    const socket = Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
    expect(errorKindOf(socket)).toBe('infrastructure');
    expect(isRetryable(socket)).toBe(true);
    expect(errorKindOf('a string')).toBe('infrastructure');
  });
});

describe('decisions made from the kind', () => {
  it('when a job fails on configuration or a final refusal, then it is not retried; a passing fault is', () => {
    expect(isPermanentFailure(new ConfigError(null, ['x']))).toBe(true);
    expect(isPermanentFailure(new LoginRequiredError('revoked'))).toBe(true);
    expect(isPermanentFailure(new CsvSourceError('CSV_DROP_DIR_MISSING', 'no folder'))).toBe(true);
    expect(isPermanentFailure(new NetworkError('reset'))).toBe(false);
    expect(isPermanentFailure(new RedisUnavailableError('down'))).toBe(false);
    expect(isPermanentFailure(new Error('Connection terminated'))).toBe(false);
    const job = toJobError(new CsvSourceError('CSV_DROP_DIR_MISSING', 'no folder'));
    expect(job).toBeInstanceOf(UnrecoverableError);
    expect(job.message).toBe('CSV_DROP_DIR_MISSING: no folder');
    expect(toJobError(new NetworkError('reset'))).toBeInstanceOf(NetworkError);
  });

  it('when an error ends a command, then the exit code is 1 ("could not run") unless the command chose one', () => {
    expect(exitCodeOf(new ConfigError(null, ['x']))).toBe(EXIT_CANNOT_RUN);
    expect(exitCodeOf(new NetworkError('reset'))).toBe(EXIT_CANNOT_RUN);
    expect(exitCodeOf(new Error('bug'))).toBe(EXIT_CANNOT_RUN);
    expect(exitCodeOf(new CliError('2 open failures', 2))).toBe(2);
    const restated = CliError.restating(new LoginRequiredError('revoked'));
    expect(restated).toMatchObject({ code: 'LOGIN_REQUIRED', kind: 'infrastructure', exitCode: 1 });
  });

  it('when a write fails, then the stored reason keeps the API status, its code and whether a retry may help', () => {
    expect(reasonOf(answer(400, 'app-invoicing.invoice.duplicate-source-id'), 'document')).toEqual({
      stage: 'document',
      message: 'POST /accounts answered 400 app-invoicing.invoice.duplicate-source-id: refused',
      status: 400,
      apiCode: 'app-invoicing.invoice.duplicate-source-id',
      retryable: false,
    });
    expect(reasonOf(new NetworkError('reset'), 'account')).toMatchObject({
      status: null,
      apiCode: 'NETWORK_ERROR',
      retryable: true,
    });
    expect(reasonOf(fail('account', 'account "A" failed', true, 'accountSourceId'), 'document')).toEqual({
      stage: 'account',
      message: 'account "A" failed',
      status: null,
      apiCode: null,
      retryable: true,
      column: 'accountSourceId',
    });
  });
});
