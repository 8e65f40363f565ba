import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

/** Images identified by their signature bytes only; the rest of the file does not matter. */
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(64, 1),
]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 2)]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x40, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>');
const TWO_MB = 2 * 1024 * 1024;

const imageForm = (bytes: Buffer, type: string, name: string) => {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  return form;
};

describe('organizations', () => {
  let sandbox: TestSandbox;
  let orgPath: string;
  const tokenWith = async (scopes: string[]) =>
    (await sandbox.admin('POST', '/tokens', { scopes })).accessToken as string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    orgPath = `/organizations/${sandbox.organizationId}`;
  });
  afterAll(() => sandbox.close());

  describe('GET /organizations', () => {
    it('when listed, then a page with nodes and pageInfo holds only the organizations of the user', async () => {
      await sandbox.admin('POST', '/organizations', { name: 'Not mine' });
      const r = await sandbox.call('GET', '/organizations');
      expect(r.status).toBe(200);
      expect(r.body.nodes.map((o: any) => o.id)).toEqual([sandbox.organizationId]);
      expect(r.body.pageInfo.endCursor).toEqual(expect.any(String));
    });

    it('when paged with first=1 and after, then the pages follow each other until an empty one', async () => {
      const user = sandbox.seeded.user.id;
      await sandbox.admin('POST', '/organizations', { name: 'Second', memberUserIds: [user] });
      const first = await sandbox.call('GET', '/organizations', { query: { first: 1 } });
      expect(first.body.nodes).toHaveLength(1);
      const second = await sandbox.call('GET', '/organizations', {
        query: { first: 1, after: first.body.pageInfo.endCursor },
      });
      expect(second.body.nodes[0].name).toBe('Second');
      const third = await sandbox.call('GET', '/organizations', {
        query: { first: 1, after: second.body.pageInfo.endCursor },
      });
      expect(third.body.nodes).toEqual([]);
    });

    it.each(['0', '101', 'abc'])('when first=%s, then 400', async (first) => {
      const r = await sandbox.call('GET', '/organizations', { query: { first } });
      expect(r.status).toBe(400);
    });

    it('when the cursor is garbage or from another endpoint, then 400 LIST_CURSOR_INVALID', async () => {
      const r = await sandbox.call('GET', '/organizations', { query: { after: 'not-a-cursor' } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('LIST_CURSOR_INVALID');
    });

    it('when the token has only accounts scopes, then 403', async () => {
      const token = await tokenWith(['accounts:all']);
      expect((await sandbox.call('GET', '/organizations', { token })).status).toBe(403);
    });

    it('when the token has organizations:read, then the list is served', async () => {
      const token = await tokenWith(['organizations:read']);
      expect((await sandbox.call('GET', '/organizations', { token })).status).toBe(200);
    });
  });

  describe('GET and PUT /organizations/{id}', () => {
    it('when read, then the organization has id, name, emailDomainName, logo, settings', async () => {
      const r = await sandbox.call('GET', orgPath);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: sandbox.organizationId,
        name: 'Sandbox Org',
        emailDomainName: 'sandbox.example',
        logo: null,
        displayLogo: { source: 'EmailDomain', emailDomainName: 'sandbox.example' },
        settings: { letterDetails: null },
      });
    });

    it('when the organization is unknown or not the user’s, then 404', async () => {
      const other = await sandbox.admin('POST', '/organizations', { name: 'Foreign' });
      expect((await sandbox.call('GET', `/organizations/${other.id}`)).status).toBe(404);
      const unknown = await sandbox.call('GET', '/organizations/6f1c2d3e-4b5a-4c6d-8e7f-000000000000');
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('NOT_FOUND');
    });

    it('when only the name is sent, then the name changes and the domain is kept', async () => {
      const r = await sandbox.call('PUT', orgPath, { body: { name: 'Renamed Org' } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ name: 'Renamed Org', emailDomainName: 'sandbox.example' });
    });

    it('when only emailDomainName is sent, then it changes and the name is kept', async () => {
      const r = await sandbox.call('PUT', orgPath, { body: { emailDomainName: 'Renamed.example' } });
      expect(r.body).toMatchObject({ name: 'Renamed Org', emailDomainName: 'renamed.example' });
      expect((await sandbox.call('GET', orgPath)).body.emailDomainName).toBe('renamed.example');
    });

    it.each([
      ['an empty body', {}],
      ['an unknown field', { name: 'X', colour: 'red' }],
      ['an empty name', { name: '  ' }],
      ['a non-string name', { name: 42 }],
      ['an invalid domain', { emailDomainName: 'not a domain' }],
      ['an array body', ['name']],
    ])('when the update has %s, then 400', async (_label, body) => {
      const r = await sandbox.call('PUT', orgPath, { body });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('BAD_REQUEST');
    });

    it('when the body is missing, then 400', async () => {
      expect((await sandbox.call('PUT', orgPath)).status).toBe(400);
    });

    it('when the organization is unknown, then PUT answers 404', async () => {
      const r = await sandbox.call('PUT', '/organizations/6f1c2d3e-4b5a-4c6d-8e7f-000000000000', {
        body: { name: 'X' },
      });
      expect(r.status).toBe(404);
    });

    it('when the token has organizations:read only, then PUT answers 403', async () => {
      const token = await tokenWith(['organizations:read']);
      expect((await sandbox.call('PUT', orgPath, { token, body: { name: 'No' } })).status).toBe(403);
      expect((await sandbox.call('GET', orgPath, { token })).status).toBe(200);
    });
  });

  describe('logo', () => {
    it.each([
      ['PNG', PNG, 'image/png'],
      ['JPEG', JPEG, 'image/jpeg'],
      ['WebP', WEBP, 'image/webp'],
    ])(
      'when a %s is uploaded, then 200 and the logo shows its detected type and size',
      async (_l, bytes, mime) => {
        const r = await sandbox.call('PUT', `${orgPath}/logo`, { body: imageForm(bytes, mime, 'logo') });
        expect(r.status).toBe(200);
        expect(r.body.logo).toEqual({ mimeType: mime, size: bytes.length });
        expect(r.body.displayLogo).toEqual({ source: 'Uploaded' });
      },
    );

    it('when a PNG is named .svg and declared as SVG, then it is accepted as a PNG', async () => {
      const r = await sandbox.call('PUT', `${orgPath}/logo`, {
        body: imageForm(PNG, 'image/svg+xml', 'logo.svg'),
      });
      expect(r.status).toBe(200);
      expect(r.body.logo.mimeType).toBe('image/png');
    });

    it('when an SVG is declared image/png, then 400 (the signature decides)', async () => {
      const r = await sandbox.call('PUT', `${orgPath}/logo`, { body: imageForm(SVG, 'image/png', 'x.png') });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('IMAGE_TYPE_UNSUPPORTED');
    });

    it('when the image is larger than 2 MB, then 413; exactly 2 MB is accepted', async () => {
      const big = Buffer.concat([PNG, Buffer.alloc(TWO_MB + 1 - PNG.length)]);
      const r = await sandbox.call('PUT', `${orgPath}/logo`, {
        body: imageForm(big, 'image/png', 'big.png'),
      });
      expect(r.status).toBe(413);
      const limit = Buffer.concat([PNG, Buffer.alloc(TWO_MB - PNG.length)]);
      const ok = await sandbox.call('PUT', `${orgPath}/logo`, {
        body: imageForm(limit, 'image/png', 'ok.png'),
      });
      expect(ok.status).toBe(200);
      expect(ok.body.logo.size).toBe(TWO_MB);
    });

    it('when no file is sent, then 400', async () => {
      const form = new FormData();
      form.append('note', 'no file');
      expect((await sandbox.call('PUT', `${orgPath}/logo`, { body: form })).status).toBe(400);
      expect((await sandbox.call('PUT', `${orgPath}/logo`, { body: { file: 'x' } })).status).toBe(400);
    });

    it('when the logo is deleted, then 200 with logo null and display falling back to the domain', async () => {
      await sandbox.call('PUT', `${orgPath}/logo`, { body: imageForm(PNG, 'image/png', 'l.png') });
      const r = await sandbox.call('DELETE', `${orgPath}/logo`);
      expect(r.status).toBe(200);
      expect(r.body.logo).toBeNull();
      expect(r.body.displayLogo.source).toBe('EmailDomain');
    });

    it('when there is no logo to delete, then 404', async () => {
      const r = await sandbox.call('DELETE', `${orgPath}/logo`);
      expect(r.status).toBe(404);
    });

    it('when neither logo nor domain exists, then display falls back to the name initials', async () => {
      await sandbox.call('PUT', orgPath, { body: { name: 'Acme Widgets', emailDomainName: null } });
      const r = await sandbox.call('GET', orgPath);
      expect(r.body.displayLogo).toEqual({ source: 'Initials', initials: 'AW' });
    });

    it('when the logo is uploaded then deleted, then the journal records both commands, newest first', async () => {
      await sandbox.call('PUT', `${orgPath}/logo`, { body: imageForm(JPEG, 'image/jpeg', 'l.jpg') });
      await sandbox.call('DELETE', `${orgPath}/logo`);
      const audit = await sandbox.call('GET', `${orgPath}/audit`, { query: { limit: 2 } });
      expect(audit.body.items.map((e: any) => e.action)).toEqual([
        'DeleteOrganizationLogo',
        'UploadOrganizationLogo',
      ]);
      expect(audit.body.items[1].metadata).toEqual({ mimeType: 'image/jpeg', size: JPEG.length });
    });

    it('when the token lacks organizations:all, then the upload answers 403', async () => {
      const token = await tokenWith(['organizations:read']);
      const form = imageForm(PNG, 'image/png', 'l.png');
      expect((await sandbox.call('PUT', `${orgPath}/logo`, { token, body: form })).status).toBe(403);
      expect((await sandbox.call('DELETE', `${orgPath}/logo`, { token })).status).toBe(403);
    });
  });
});
