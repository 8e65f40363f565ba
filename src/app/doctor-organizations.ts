import { DEFAULT_CONNECTION } from '../config/connections.js';
import { settleOrganization } from '../config/source-organization.js';
import { type DoctorCheck, fail, ok } from './doctor.js';

/** The organizations of a `GET /organizations` body (none when it is not the API's list). */
export function organizationsIn(text: string): Array<{ id: string; name?: string }> {
  try {
    const body = JSON.parse(text) as { nodes?: Array<{ id: string; name?: string }> } | null;
    return body?.nodes ?? [];
  } catch {
    return [];
  }
}

/**
 * The organizations the sources name are among those the token sees, and the sources naming none
 * have one to sync into (`settleOrganization`: the token's only one); with the organization whose
 * accounts the token check reads.
 */
export function organizationChecks(
  connectionId: string,
  wanted: readonly string[],
  unnamed: readonly string[],
  seen: ReadonlyArray<{ id: string }>,
): { checks: DoctorCheck[]; organizationId: string | undefined } {
  const listed = seen.map((o) => o.id).join(', ') || 'none';
  // What a source naming none syncs into: nothing names one for it (neither it nor its connection).
  const sole = settleOrganization(
    undefined,
    { id: connectionId, api: {} },
    seen.map((o) => o.id),
  );
  if (wanted.length === 0) {
    return sole.organizationId !== null
      ? {
          organizationId: sole.organizationId,
          checks: [ok('organization', `${sole.organizationId}, the only one the token sees`)],
        }
      : {
          organizationId: undefined,
          checks: [
            fail(
              'organization',
              `the token sees ${seen.length} organizations (${listed}): set ${connectionId === DEFAULT_CONNECTION ? 'RECEIVABLES_ORGANIZATION_ID' : `connections.${connectionId}.organizationId`} or each source's organizationId`,
            ),
          ],
        };
  }
  const missing = wanted.filter((id) => !seen.some((o) => o.id === id));
  const checks = [
    missing.length === 0
      ? ok(
          'organization',
          `${wanted.join(', ')} ${wanted.length === 1 ? 'is' : 'are'} among the ${seen.length} the token sees`,
        )
      : fail(
          'organization',
          `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not among those the token sees (${listed}); fix ${connectionId === DEFAULT_CONNECTION ? 'RECEIVABLES_ORGANIZATION_ID or ' : ''}the sources' organizationId`,
        ),
  ];
  if (unnamed.length > 0 && sole.organizationId === null)
    checks.push(
      fail(
        'organization',
        `${unnamed.length === 1 ? 'source' : 'sources'} ${unnamed.join(', ')} ${unnamed.length === 1 ? 'names' : 'name'} no organization and the token sees ${seen.length} (${listed}): set ${unnamed.length === 1 ? 'its' : 'their'} organizationId`,
      ),
    );
  return { checks, organizationId: wanted.find((id) => !missing.includes(id)) };
}
