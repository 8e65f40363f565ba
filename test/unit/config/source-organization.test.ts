import { describe, expect, it } from 'vitest';
import { namedOrganization, settleOrganization } from '../../../src/config/source-organization.js';

const ORG_1 = '11111111-1111-4111-8111-111111111111';
const ORG_2 = '22222222-2222-4222-8222-222222222222';
const ORG_3 = '33333333-3333-4333-8333-333333333333';

const defaultConnection = (organizationId: string | null = null) => ({
  id: 'default',
  api: { organizationId },
});

describe('settleOrganization', () => {
  it("when the source names an organization, then it wins over its connection's and over the token's", () => {
    expect(settleOrganization({ organizationId: ORG_1 }, defaultConnection(ORG_2), [ORG_3])).toEqual({
      organizationId: ORG_1,
      from: 'source',
    });
  });

  it("when only the connection names one, then the source syncs into the connection's, listed or not", () => {
    expect(settleOrganization({}, defaultConnection(ORG_2), undefined)).toEqual({
      organizationId: ORG_2,
      from: 'connection',
    });
    expect(namedOrganization(undefined, defaultConnection(ORG_2))).toEqual({ id: ORG_2, from: 'connection' });
  });

  it('when nothing names one and the token sees exactly one, then it is that one', () => {
    expect(settleOrganization({}, defaultConnection(), [ORG_3])).toEqual({
      organizationId: ORG_3,
      from: 'token',
    });
    expect(namedOrganization({}, defaultConnection())).toBeNull();
  });

  it('when nothing names one and the token sees none or several, then ORGANIZATION_UNKNOWN says what to set for that connection', () => {
    const several = settleOrganization({}, defaultConnection(), [ORG_1, ORG_2]);
    expect(several.organizationId).toBeNull();
    expect(several.organizationId === null && several.error).toMatchObject({
      code: 'ORGANIZATION_UNKNOWN',
      kind: 'config',
      message: expect.stringContaining('RECEIVABLES_ORGANIZATION_ID (or api.organizationId)'),
    });
    const none = settleOrganization({}, { id: 'acme', api: {} }, []);
    expect(none.organizationId === null && none.error.message).toBe(
      'the token of connection "acme" sees no organization',
    );
    const several2 = settleOrganization(undefined, { id: 'acme', api: {} }, [ORG_1, ORG_2]);
    expect(several2.organizationId === null && several2.error.message).toContain(
      'connections.acme.organizationId',
    );
    const unlisted = settleOrganization({}, { id: 'acme', api: {} }, undefined);
    expect(unlisted).toMatchObject({ organizationId: null, from: 'unresolved' });
  });
});
