import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';
import { collect } from '../../../src/api/pagination.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { clientFor } from './client-support.js';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c6300010000050001',
  'hex',
);
const png = { bytes: PNG, filename: 'logo.png', contentType: 'image/png' };

describe('typed client: status, organizations and the user profile', () => {
  let sandbox: TestSandbox;
  let harness: ReturnType<typeof clientFor>;
  let orgId: string;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    harness = clientFor(sandbox);
    orgId = sandbox.organizationId;
  });
  afterAll(() => sandbox.close());

  it('when the status is read, then no token is sent', async () => {
    const status = await harness.client.status.get();
    expect(status.status).toBe('ok');
    const sent = harness.sent.at(-1)!;
    expect(sent.url.pathname).toBe('/api/public/v1/status');
    expect(sent.headers.get('authorization')).toBeNull();
  });

  it('when organizations are listed, then the seeded one is found and fetched by id', async () => {
    const all = await collect(harness.client.organizations.list());
    expect(all.map((o) => o.id)).toContain(orgId);
    const page = await harness.client.organizations.listPage({ first: 1 });
    expect(page.nodes).toHaveLength(1);
    const org = await harness.client.organizations.get(orgId);
    expect(org.name).toBe('Sandbox Org');
  });

  it('when the organization, its settings and its logo change, then each answer is the organization', async () => {
    const renamed = await harness.client.organizations.update(orgId, { name: 'Renamed Org' });
    expect(renamed.name).toBe('Renamed Org');
    const letterDetails = { senderName: 'ACME', senderAddress: null, signature: null, footer: 'Thanks' };
    const withSettings = await harness.client.organizations.updateSettings(orgId, { letterDetails });
    expect(withSettings.settings?.letterDetails).toEqual(letterDetails);
    const withLogo = await harness.client.organizations.uploadLogo(orgId, png);
    expect(withLogo.logo).toMatchObject({ mimeType: 'image/png' });
    const withoutLogo = await harness.client.organizations.deleteLogo(orgId);
    expect(withoutLogo.logo).toBeNull();
  });

  it('when an SVG is uploaded as a logo, then the API refusal keeps its status and code', async () => {
    const svg = {
      bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
      filename: 'x.png',
      contentType: 'image/png',
    };
    const error = await harness.client.organizations.uploadLogo(orgId, svg).catch((e) => e);
    expect(error).toBeInstanceOf(ApiResponseError);
    expect(error).toMatchObject({ status: 400, retryable: false, method: 'PUT' });
    expect(error.resolution).toEqual(expect.any(String));
  });

  it('when members are invited and removed, then members, invitations and the audit follow', async () => {
    const pending = await harness.client.organizations.invite(orgId, { email: 'new+person@example.com' });
    expect(pending).toMatchObject({ status: 'Pending' });
    await harness.client.organizations.cancelInvitation(orgId, 'new+person@example.com');
    const joined = await harness.client.organizations.invite(orgId, { email: 'colleague@sandbox.example' });
    expect(joined).toMatchObject({ status: 'Accepted' });
    const members = await harness.client.organizations.members(orgId);
    expect(members.map((m) => m.email)).toContain('colleague@sandbox.example');
    await harness.client.organizations.removeMember(orgId, sandbox.seeded.otherUser.id);
    expect((await harness.client.organizations.members(orgId)).map((m) => m.email)).not.toContain(
      'colleague@sandbox.example',
    );
    const audit = await harness.client.organizations.audit(orgId, {
      actorTypes: ['USER'],
      limit: 5,
      search: 'colleague',
    });
    expect(audit.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: 'RemoveMember' })]),
    );
  });

  it('when a tag is created, then it is listed with the predefined ones', async () => {
    const tag = await harness.client.organizations.createTag(orgId, { name: 'Key account' });
    const tags = await harness.client.organizations.tags(orgId);
    expect(tags.map((t) => t.id)).toEqual(expect.arrayContaining([tag.id]));
    expect(tags.some((t) => t.kind === 'Predefined')).toBe(true);
  });

  it('when notification preferences are patched, then omitted fields keep their value', async () => {
    const before = await harness.client.users.notificationPreferences();
    const after = await harness.client.users.updateNotificationPreferences({ digestFrequency: 'Weekly' });
    expect(after).toEqual({ digestFrequency: 'Weekly', newsletter: before.newsletter });
  });

  it('when the avatar is uploaded and deleted, then the member is returned each time', async () => {
    const uploaded = await harness.client.users.uploadAvatar(png);
    expect(uploaded.avatar).toMatchObject({ mimeType: 'image/png' });
    const removed = await harness.client.users.deleteAvatar();
    expect(removed.avatar).toBeNull();
  });

  it('when writes are sent, then each carries its own Idempotency-Key and reads carry none', () => {
    const writes = harness.sent.filter((s) => s.method !== 'GET');
    const keys = writes.map((s) => s.headers.get('idempotency-key'));
    expect(keys.every((k) => typeof k === 'string' && k.length > 0)).toBe(true);
    expect(new Set(keys).size).toBe(writes.length);
    for (const read of harness.sent.filter((s) => s.method === 'GET')) {
      expect(read.headers.get('idempotency-key')).toBeNull();
    }
  });
});
