import { randomUUID } from 'node:crypto';
import type { ReceivablesClient } from '../api/client.js';
import {
  type ApiCompat,
  type DocumentPathKind,
  type DocumentWriteMethod,
  describeDocumentRoute,
  documentPatchPath,
  isUnknownRouteAnswer,
} from '../api/compat.js';
import { messageOf } from '../domain/errors.js';
import type { DoctorCheck } from './doctor.js';

/** What an answer to a probe showed: status, the error body's code and message, the `Allow` header. */
interface Answer {
  status: number;
  code: string | undefined;
  message: string | undefined;
  allow: string | null;
}

/**
 * What the probe needs of the API client: one attempt answered whatever its status, through the
 * shared rate limiter and counted against the token's quota (`ReceivablesClient.probe`).
 */
export type DocumentProber = Pick<ReceivablesClient, 'probe'>;

const NAME = 'document write';

/**
 * Confirms, without writing anything, that the document write of `api.compat.documentPatch`
 * exists: the configured method and path with a random id (no document can match, so nothing
 * changes) must answer 404 for the document, not for the route, and not 405. A request to a path
 * no server serves gives the server's own "unknown route" answer to compare with. `createPaid`
 * cannot be confirmed without creating a document: it is reported as assumed.
 */
export async function documentWriteCheck(client: DocumentProber, compat: ApiCompat): Promise<DoctorCheck> {
  const route = compat.documentPatch;
  const described = describeDocumentRoute(route);
  const paid = compat.createPaid
    ? `; createPaid: true (assumed: doctor creates nothing; when a create's answer shows no paid amount, the document write follows, so nothing is lost)`
    : '';
  try {
    const control = await probe(client, route.method, `/receivables-sync-doctor/${randomUUID()}`, {});
    const results: string[] = [];
    for (const kind of ['invoices', 'credit-notes'] as const satisfies DocumentPathKind[]) {
      const path = documentPatchPath(route, kind, randomUUID());
      const answer = await probe(client, route.method, path, { [route.paidAmountField]: '0' });
      const verdict = judge(answer, control, route.method, path);
      if (verdict.status !== 'ok') return { name: NAME, status: verdict.status, detail: verdict.detail };
      results.push(verdict.detail);
    }
    return { name: NAME, status: 'ok', detail: `${described}: ${results.join('; ')}${paid}` };
  } catch (error) {
    return {
      name: NAME,
      status: 'warn',
      detail: `${described} could not be checked: ${messageOf(error)}${paid}`,
    };
  }
}

function judge(
  answer: Answer,
  control: Answer,
  method: string,
  path: string,
): { status: DoctorCheck['status']; detail: string } {
  const what = `${method} ${path}`;
  const fix =
    'set api.compat.documentPatch (method, path) to the route of your service (docs/compatibility.md)';
  const said = answer.message ? ` "${answer.message}"` : '';
  if (answer.status === 405) {
    return {
      status: 'fail',
      detail: `${what} answered 405 (method not allowed${answer.allow ? `; allowed: ${answer.allow}` : ''}): ${fix}`,
    };
  }
  if (answer.status === 404) {
    if (looksLikeUnknownRoute(answer, control)) {
      return { status: 'fail', detail: `${what}: the server has no such route (404${said}): ${fix}` };
    }
    return { status: 'ok', detail: `a random id answers 404 for the document${said}, so the route exists` };
  }
  if (answer.status === 400 || answer.status === 422) {
    return {
      status: 'warn',
      detail: `${what} exists but refused the body before looking the document up (${answer.status}${said}): check api.compat.documentPatch.paidAmountField and dueDateField`,
    };
  }
  if (answer.status === 401 || answer.status === 403) {
    return {
      status: 'warn',
      detail: `${what} answered ${answer.status}${said}: the route could not be confirmed (writes need accounts:all)`,
    };
  }
  return {
    status: 'warn',
    detail: `${what} answered ${answer.status}${said} to a random id: the route could not be confirmed`,
  };
}

/**
 * A 404 for the route rather than for a document: the words frameworks use ("Route PATCH:/x not
 * found", "Cannot PATCH /x"), or the very answer of a path no server serves.
 */
function looksLikeUnknownRoute(answer: Answer, control: Answer): boolean {
  if (isUnknownRouteAnswer(answer.status, answer.message)) return true;
  if (control.status !== 404) return false;
  const shape = (text: string | undefined) => (text ?? '').replace(/\/\S*/g, '<path>');
  return answer.code === control.code && shape(answer.message) === shape(control.message);
}

async function probe(
  client: DocumentProber,
  method: DocumentWriteMethod,
  path: string,
  body: object,
): Promise<Answer> {
  // A write on a random id: nothing can match, and a refused write releases its Idempotency-Key.
  const answer = await client.probe({ method, path, body: { json: body } });
  let parsed: { code?: unknown; message?: unknown } = {};
  try {
    parsed = JSON.parse(answer.text) as typeof parsed;
  } catch {
    parsed = { message: answer.text.slice(0, 200) };
  }
  return {
    status: answer.status,
    code: typeof parsed.code === 'string' ? parsed.code : undefined,
    message: typeof parsed.message === 'string' ? parsed.message : undefined,
    allow: answer.headers.get('allow'),
  };
}
