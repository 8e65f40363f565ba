/** Rules every write on accounts and documents obeys: managed records are read-only, writes are audited. */

import type { FastifyRequest } from 'fastify';
import { actorOf, type SandboxDeps } from '../context.js';
import { ApiError } from '../errors.js';
import type { Account } from '../model.js';

export const MANAGED_ACTION_FORBIDDEN = 'app-invoicing.document.managed-action-forbidden';

/** The error of a write on a record a connector manages (status 400 per the contract). */
export const managedActionForbidden = (what: string, reason: string) =>
  new ApiError(
    400,
    MANAGED_ACTION_FORBIDDEN,
    `${what} is managed by ${reason} (readOnlyReason); change it in ${reason} or in the connection settings`,
  );

/** Refuses a write on a record whose `readOnlyReason` is set. */
export function assertWritable(record: { readOnlyReason: string | null }, what: string): void {
  if (record.readOnlyReason !== null) throw managedActionForbidden(what, record.readOnlyReason);
}

/**
 * Appends the audit entry of a successful command touching `account`. The account's name goes
 * into the metadata so that it survives the account's deletion.
 */
export function auditAccountCommand(
  deps: SandboxDeps,
  request: FastifyRequest,
  account: Account,
  action: string,
  metadata: Record<string, unknown> = {},
): void {
  deps.store.audit(account.organizationId, actorOf(request, deps), action, {
    accountIds: [account.id],
    metadata: { accountId: account.id, accountName: account.fullName, ...metadata },
  });
}
