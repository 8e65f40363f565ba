import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

describe('organization tags', () => {
  let sandbox: TestSandbox;
  let path: string;
  const tokenWith = async (scopes: string[]) =>
    (await sandbox.admin('POST', '/tokens', { scopes })).accessToken as string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    path = `/organizations/${sandbox.organizationId}/tags`;
  });
  afterAll(() => sandbox.close());

  it('when listed, then a plain array holds the predefined tags', async () => {
    const r = await sandbox.call('GET', path);
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    expect(r.body.every((t: any) => t.kind === 'Predefined')).toBe(true);
    expect(r.body[0]).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      kind: 'Predefined',
      color: null,
    });
  });

  it('when a custom tag is created, then 201 with its id, and the list holds custom and predefined tags', async () => {
    const r = await sandbox.call('POST', path, { body: { name: 'Key account', color: '#1a2b3c' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(String), name: 'Key account', kind: 'Custom', color: '#1A2B3C' });
    const list = await sandbox.call('GET', path);
    expect(list.body.map((t: any) => t.kind)).toContain('Predefined');
    expect(list.body.find((t: any) => t.id === r.body.id)?.name).toBe('Key account');
    const audit = await sandbox.call('GET', `/organizations/${sandbox.organizationId}/audit`);
    expect(audit.body.items[0]).toMatchObject({ action: 'CreateTag', metadata: { name: 'Key account' } });
  });

  it('when created without a colour, then its colour is null', async () => {
    const r = await sandbox.call('POST', path, { body: { name: 'Slow payer' } });
    expect(r.body.color).toBeNull();
  });

  it('when another organization creates a tag, then it does not appear here', async () => {
    const other = await sandbox.admin('POST', '/organizations', {
      name: 'Elsewhere',
      memberUserIds: [sandbox.seeded.user.id],
    });
    await sandbox.call('POST', `/organizations/${other.id}/tags`, { body: { name: 'Elsewhere only' } });
    const list = await sandbox.call('GET', path);
    expect(list.body.map((t: any) => t.name)).not.toContain('Elsewhere only');
  });

  it.each([
    ['a duplicate name (any case)', { name: 'KEY ACCOUNT' }, 'TAG_DUPLICATE_NAME'],
    ['the name of a predefined tag', { name: 'vip' }, 'TAG_DUPLICATE_NAME'],
    ['an empty name', { name: '   ' }, 'BAD_REQUEST'],
    ['no name', { color: '#000000' }, 'BAD_REQUEST'],
    ['a name over 50 characters', { name: 'x'.repeat(51) }, 'BAD_REQUEST'],
    ['an invalid colour', { name: 'Red', color: 'red' }, 'BAD_REQUEST'],
    ['an unknown field', { name: 'Blue', icon: 'star' }, 'BAD_REQUEST'],
  ])('when the tag has %s, then 400', async (_label, body, code) => {
    const r = await sandbox.call('POST', path, { body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(code);
  });

  it('when the organization is not visible, then 404', async () => {
    const foreign = await sandbox.admin('POST', '/organizations', { name: 'Foreign' });
    expect((await sandbox.call('GET', `/organizations/${foreign.id}/tags`)).status).toBe(404);
  });

  it('when the token has accounts:read, then the list is served but creation answers 403', async () => {
    const token = await tokenWith(['accounts:read']);
    expect((await sandbox.call('GET', path, { token })).status).toBe(200);
    expect((await sandbox.call('POST', path, { token, body: { name: 'Nope' } })).status).toBe(403);
  });

  it('when the token has only organizations scopes, then tags answer 403 (they need accounts scopes)', async () => {
    const token = await tokenWith(['organizations:all']);
    expect((await sandbox.call('GET', path, { token })).status).toBe(403);
  });
});
