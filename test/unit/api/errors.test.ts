import { describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';

const answer = (status: number, apiCode?: string, retryAfterSeconds?: number) =>
  new ApiResponseError({
    status,
    method: 'PUT',
    path: '/accounts/a1',
    apiCode,
    message: 'refused',
    retryAfterSeconds,
  });

describe('ApiResponseError', () => {
  it.each([400, 403, 409, 422])(
    'when a write is refused as managed by a connector with status %i, then it is the record’s refusal, never retried',
    (status) => {
      const error = answer(status, 'app-invoicing.document.managed-action-forbidden');
      expect(error).toMatchObject({ kind: 'data', retryable: false, status });
    },
  );

  it('when other codes come with those statuses, then the status decides as before', () => {
    expect(answer(403)).toMatchObject({ kind: 'infrastructure', retryable: false });
    expect(answer(409, 'idempotency-key-in-use')).toMatchObject({ kind: 'infrastructure', retryable: true });
    expect(answer(409, 'IDEMPOTENCY_REQUEST_IN_PROGRESS', 1)).toMatchObject({ retryable: true });
    expect(answer(409, 'ANYTHING', 1)).toMatchObject({ retryable: true }); // Retry-After: the idempotency 409
    expect(answer(409)).toMatchObject({ retryable: true }); // no code: the spec's meaning
    expect(answer(422, 'validation')).toMatchObject({ kind: 'data', retryable: false });
    expect(answer(503)).toMatchObject({ kind: 'infrastructure', retryable: true });
  });
});

describe('a 409 that is a conflict with what the service holds', () => {
  it.each([
    'app-invoicing.invoice.duplicate-source-id',
    'app-invoicing.account.source-already-linked',
    'CONFLICT',
  ])('when a 409 says %s without Retry-After, then it is the record’s problem, not retried', (code) => {
    expect(answer(409, code)).toMatchObject({ kind: 'data', retryable: false, status: 409 });
  });
});
