import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(32, 1),
]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xdb]), Buffer.alloc(32, 2)]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>');
const PREFS = '/users/me/notification-preferences';

const imageForm = (bytes: Buffer, type: string, name: string) => {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  return form;
};

describe('user profile', () => {
  let sandbox: TestSandbox;
  const tokenWith = async (scopes: string[]) =>
    (await sandbox.admin('POST', '/tokens', { scopes })).accessToken as string;
  const setPreferences = (value: unknown) =>
    sandbox.admin('PUT', `/users/${sandbox.seeded.user.id}/notification-preferences`, value);

  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  describe('notification preferences', () => {
    it('when a user has never changed them, then GET gives Daily and newsletter true', async () => {
      const r = await sandbox.call('GET', PREFS);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ digestFrequency: 'Daily', newsletter: true });
    });

    it('when only digestFrequency is patched, then newsletter keeps its value', async () => {
      await setPreferences({ digestFrequency: 'Daily', newsletter: false });
      const r = await sandbox.call('PATCH', PREFS, { body: { digestFrequency: 'Weekly' } });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ digestFrequency: 'Weekly', newsletter: false });
    });

    it('when only newsletter is patched, then digestFrequency keeps its value', async () => {
      const r = await sandbox.call('PATCH', PREFS, { body: { newsletter: true } });
      expect(r.body).toEqual({ digestFrequency: 'Weekly', newsletter: true });
      expect((await sandbox.call('GET', PREFS)).body).toEqual(r.body);
    });

    it.each(['Daily', 'Weekly', 'Biweekly', 'Monthly', 'Never'])(
      'when digestFrequency is %s, then it is accepted',
      async (digestFrequency) => {
        const r = await sandbox.call('PATCH', PREFS, { body: { digestFrequency } });
        expect(r.body.digestFrequency).toBe(digestFrequency);
      },
    );

    it('when the body is empty, then nothing changes and 200', async () => {
      const before = (await sandbox.call('GET', PREFS)).body;
      const r = await sandbox.call('PATCH', PREFS, { body: {} });
      expect(r.status).toBe(200);
      expect(r.body).toEqual(before);
    });

    it.each([
      ['an unknown field', { digestFrequency: 'Daily', sms: true }],
      ['an invalid frequency', { digestFrequency: 'Hourly' }],
      ['a lower-case frequency', { digestFrequency: 'daily' }],
      ['a non-boolean newsletter', { newsletter: 'yes' }],
      ['a null newsletter', { newsletter: null }],
    ])('when the patch has %s, then 400 and nothing changes', async (_label, body) => {
      const before = (await sandbox.call('GET', PREFS)).body;
      const r = await sandbox.call('PATCH', PREFS, { body });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('BAD_REQUEST');
      expect((await sandbox.call('GET', PREFS)).body).toEqual(before);
    });

    it('when the preferences are missing, then PATCH (and GET) answer 404', async () => {
      await setPreferences(null);
      const r = await sandbox.call('PATCH', PREFS, { body: { newsletter: false } });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('NOT_FOUND');
      expect((await sandbox.call('GET', PREFS)).status).toBe(404);
      await setPreferences({ digestFrequency: 'Daily', newsletter: true });
    });

    it('when the token lacks the profile scope, then 403', async () => {
      const token = await tokenWith(['organizations:all', 'accounts:all']);
      expect((await sandbox.call('GET', PREFS, { token })).status).toBe(403);
      expect((await sandbox.call('PATCH', PREFS, { token, body: { newsletter: true } })).status).toBe(403);
    });

    it('when the token has only the profile scope, then it is enough', async () => {
      const token = await tokenWith(['profile']);
      expect((await sandbox.call('GET', PREFS, { token })).status).toBe(200);
    });
  });

  describe('avatar', () => {
    it('when a PNG is uploaded, then 200 with the member and its avatar type and size', async () => {
      const r = await sandbox.call('PUT', '/users/me/avatar', {
        body: imageForm(PNG, 'image/png', 'me.png'),
      });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        userId: sandbox.seeded.user.id,
        email: 'owner@sandbox.example',
        avatar: { mimeType: 'image/png', size: PNG.length },
      });
      const members = await sandbox.call('GET', `/organizations/${sandbox.organizationId}/members`);
      expect(members.body[0].avatar).toEqual({ mimeType: 'image/png', size: PNG.length });
    });

    it('when a JPEG is sent with a .svg name, then the signature decides and it is accepted', async () => {
      const r = await sandbox.call('PUT', '/users/me/avatar', {
        body: imageForm(JPEG, 'image/svg+xml', 'me.svg'),
      });
      expect(r.status).toBe(200);
      expect(r.body.avatar.mimeType).toBe('image/jpeg');
    });

    it('when an SVG is declared image/png, then 400', async () => {
      const r = await sandbox.call('PUT', '/users/me/avatar', {
        body: imageForm(SVG, 'image/png', 'me.png'),
      });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('IMAGE_TYPE_UNSUPPORTED');
    });

    it('when the image is larger than 2 MB, then 413', async () => {
      const big = Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024)]);
      const r = await sandbox.call('PUT', '/users/me/avatar', {
        body: imageForm(big, 'image/png', 'big.png'),
      });
      expect(r.status).toBe(413);
      expect(r.body.code).toBe('IMAGE_TOO_LARGE');
    });

    it('when the avatar is deleted, then 200 with avatar null; a second delete answers 404', async () => {
      const r = await sandbox.call('DELETE', '/users/me/avatar');
      expect(r.status).toBe(200);
      expect(r.body.avatar).toBeNull();
      expect((await sandbox.call('DELETE', '/users/me/avatar')).status).toBe(404);
    });

    it('when the token lacks the profile scope, then 403', async () => {
      const token = await tokenWith(['organizations:all']);
      const form = imageForm(PNG, 'image/png', 'me.png');
      expect((await sandbox.call('PUT', '/users/me/avatar', { token, body: form })).status).toBe(403);
      expect((await sandbox.call('DELETE', '/users/me/avatar', { token })).status).toBe(403);
    });
  });
});
