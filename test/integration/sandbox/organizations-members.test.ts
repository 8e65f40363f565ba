import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const DAY_MS = 24 * 3600 * 1000;
const UNKNOWN_ORG = '6f1c2d3e-4b5a-4c6d-8e7f-000000000000';

describe('members and invitations', () => {
  let sandbox: TestSandbox;
  let orgPath: string;
  const clock = new ManualClock('2026-02-01T08:00:00.000Z');
  const invite = (body: unknown, token?: string) =>
    sandbox.call('POST', `${orgPath}/invitations`, { body, token });
  const cancel = (email: string) =>
    sandbox.call('DELETE', `${orgPath}/invitations/${encodeURIComponent(email)}`);
  const lastAction = async () =>
    (await sandbox.call('GET', `${orgPath}/audit`, { query: { limit: 1 } })).body.items[0];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
    orgPath = `/organizations/${sandbox.organizationId}`;
  });
  afterAll(() => sandbox.close());

  describe('POST /organizations/{id}/invitations', () => {
    it('when the invitee is an existing active user, then 201 Accepted and a member at once', async () => {
      const r = await invite({ email: 'Colleague@Sandbox.Example' });
      expect(r.status).toBe(201);
      expect(r.body.status).toBe('Accepted');
      expect(r.body.member).toMatchObject({
        userId: sandbox.seeded.otherUser.id,
        email: 'colleague@sandbox.example',
        role: 'Member',
      });
      const members = await sandbox.call('GET', `${orgPath}/members`);
      expect(members.body.map((m: any) => m.userId)).toContain(sandbox.seeded.otherUser.id);
      expect(await lastAction()).toMatchObject({ action: 'InviteMember', metadata: { status: 'Accepted' } });
    });

    it('when the invitee is already a member, then 400', async () => {
      const r = await invite({ email: 'colleague@sandbox.example' });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('MEMBER_ALREADY_EXISTS');
    });

    it('when the invitee is unknown, then 201 Pending, expiring seven days later, and no member', async () => {
      const r = await invite({ email: 'newcomer@client.example', role: 'Admin' });
      expect(r.status).toBe(201);
      expect(r.body.status).toBe('Pending');
      expect(r.body.member).toBeNull();
      expect(r.body.invitation).toMatchObject({
        email: 'newcomer@client.example',
        role: 'Admin',
        status: 'Pending',
        createdAt: clock.now().toISOString(),
        expiresAt: new Date(clock.now().getTime() + 7 * DAY_MS).toISOString(),
      });
      const members = await sandbox.call('GET', `${orgPath}/members`);
      expect(members.body.map((m: any) => m.email)).not.toContain('newcomer@client.example');
    });

    it('when the invitee exists but is inactive, then the invitation is pending', async () => {
      await sandbox.admin('POST', '/users', { email: 'sleeping@client.example', active: false });
      const r = await invite({ email: 'sleeping@client.example' });
      expect(r.status).toBe(201);
      expect(r.body.status).toBe('Pending');
    });

    it.each([
      ['an invalid e-mail', { email: 'not-an-email' }],
      ['no e-mail', { role: 'Member' }],
      ['a non-string e-mail', { email: 12 }],
      ['an unknown role', { email: 'x@client.example', role: 'Owner' }],
      ['an unknown field', { email: 'x@client.example', message: 'hi' }],
    ])('when the body has %s, then 400', async (_label, body) => {
      expect((await invite(body)).status).toBe(400);
    });

    it('when the token has organizations:read only, then 403', async () => {
      const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: ['organizations:read'] });
      expect((await invite({ email: 'x@client.example' }, accessToken)).status).toBe(403);
    });

    it('when the organization is not visible, then 404', async () => {
      const r = await sandbox.call('POST', `/organizations/${UNKNOWN_ORG}/invitations`, {
        body: { email: 'x@client.example' },
      });
      expect(r.status).toBe(404);
    });
  });

  describe('DELETE /organizations/{id}/invitations/{email}', () => {
    it('when a pending invitation is cancelled by its URL-encoded address, then 204 and it is gone', async () => {
      await invite({ email: 'first+tag@client.example' });
      const r = await cancel('first+tag@client.example');
      expect(r.status).toBe(204);
      expect(await lastAction()).toMatchObject({
        action: 'CancelInvitation',
        metadata: { email: 'first+tag@client.example' },
      });
      expect((await cancel('first+tag@client.example')).status).toBe(404);
    });

    it('when no invitation exists for the address, then 404', async () => {
      const r = await cancel('nobody@client.example');
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('NOT_FOUND');
    });

    it('when the invitation was accepted at once, then there is nothing pending to cancel: 404', async () => {
      const user = await sandbox.admin('POST', '/users', { email: 'joiner@client.example' });
      await invite({ email: user.email });
      expect((await cancel(user.email)).status).toBe(404);
    });
  });

  describe('invitation expiry (seven days)', () => {
    it('when less than seven days have passed, then the invitation is still pending', async () => {
      await invite({ email: 'almost@client.example' });
      clock.advance(7 * DAY_MS - 1);
      expect((await cancel('almost@client.example')).status).toBe(204);
    });

    it('when seven days have passed, then it has expired and can no longer be cancelled', async () => {
      await invite({ email: 'late@client.example' });
      clock.advance(7 * DAY_MS);
      expect((await cancel('late@client.example')).status).toBe(404);
    });

    it('when an expired address is invited again, then a fresh pending invitation starts', async () => {
      await invite({ email: 'again@client.example' });
      clock.advance(8 * DAY_MS);
      const r = await invite({ email: 'again@client.example' });
      expect(r.body.invitation.status).toBe('Pending');
      expect(r.body.invitation.createdAt).toBe(clock.now().toISOString());
      expect((await cancel('again@client.example')).status).toBe(204);
    });

    it('when a pending address is invited again, then its expiry is renewed', async () => {
      await invite({ email: 'renew@client.example' });
      clock.advance(6 * DAY_MS);
      await invite({ email: 'renew@client.example' });
      clock.advance(6 * DAY_MS);
      expect((await cancel('renew@client.example')).status).toBe(204);
    });
  });

  describe('members', () => {
    it('when listed, then a plain JSON array of members with user and role fields', async () => {
      const r = await sandbox.call('GET', `${orgPath}/members`);
      expect(r.status).toBe(200);
      expect(Array.isArray(r.body)).toBe(true);
      expect(r.body[0]).toMatchObject({
        userId: sandbox.seeded.user.id,
        email: 'owner@sandbox.example',
        fullName: 'Sandbox Owner',
        role: 'Admin',
        organizationId: sandbox.organizationId,
        avatar: null,
      });
      expect(r.body[0].joinedAt).toEqual(expect.any(String));
    });

    it('when the token has organizations:read, then members are listed; with accounts scopes, 403', async () => {
      const read = await sandbox.admin('POST', '/tokens', { scopes: ['organizations:read'] });
      expect((await sandbox.call('GET', `${orgPath}/members`, { token: read.accessToken })).status).toBe(200);
      const other = await sandbox.admin('POST', '/tokens', { scopes: ['accounts:all'] });
      expect((await sandbox.call('GET', `${orgPath}/members`, { token: other.accessToken })).status).toBe(
        403,
      );
    });

    it('when a member is removed, then 204, the list no longer has them, and the journal records it', async () => {
      const userId = sandbox.seeded.otherUser.id;
      const r = await sandbox.call('DELETE', `${orgPath}/members/${userId}`);
      expect(r.status).toBe(204);
      const members = await sandbox.call('GET', `${orgPath}/members`);
      expect(members.body.map((m: any) => m.userId)).not.toContain(userId);
      expect(await lastAction()).toMatchObject({ action: 'RemoveMember', metadata: { userId } });
    });

    it('when the user is not a member, then DELETE answers 404', async () => {
      const userId = sandbox.seeded.otherUser.id;
      expect((await sandbox.call('DELETE', `${orgPath}/members/${userId}`)).status).toBe(404);
      expect((await sandbox.call('DELETE', `${orgPath}/members/not-a-uuid`)).status).toBe(404);
    });

    it('when the organization is unknown, then the member list answers 404', async () => {
      expect((await sandbox.call('GET', `/organizations/${UNKNOWN_ORG}/members`)).status).toBe(404);
    });

    it('when the token has organizations:read only, then removing a member answers 403', async () => {
      const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: ['organizations:read'] });
      const path = `${orgPath}/members/${sandbox.seeded.user.id}`;
      expect((await sandbox.call('DELETE', path, { token: accessToken })).status).toBe(403);
    });
  });
});
