import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const LETTER = {
  senderName: 'Sandbox Org Collections',
  senderAddress: '1 rue de la Paix, 75002 Paris',
  signature: 'The collections team',
  footer: 'SAS au capital de 1 000 €',
};

describe('PUT /organizations/{id}/settings', () => {
  let sandbox: TestSandbox;
  let path: string;
  const put = (body: unknown, token?: string) => sandbox.call('PUT', path, { body, token });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    path = `/organizations/${sandbox.organizationId}/settings`;
  });
  afterAll(() => sandbox.close());

  it('when fields are sent, then 200 with the organization and its updated settings', async () => {
    const r = await put({ defaultCurrency: 'EUR', timezone: 'Europe/Paris', dunningEnabled: true });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(sandbox.organizationId);
    expect(r.body.settings).toEqual({
      defaultCurrency: 'EUR',
      timezone: 'Europe/Paris',
      dunningEnabled: true,
      letterDetails: null,
    });
  });

  it('when only one field is present, then only that field is applied and the others are kept', async () => {
    const r = await put({ defaultCurrency: 'USD' });
    expect(r.body.settings).toMatchObject({
      defaultCurrency: 'USD',
      timezone: 'Europe/Paris',
      dunningEnabled: true,
    });
  });

  it('when a field is sent as explicit null, then it is cleared and the others are kept', async () => {
    const r = await put({ timezone: null });
    expect(r.body.settings).toMatchObject({ defaultCurrency: 'USD', timezone: null, dunningEnabled: true });
    const read = await sandbox.call('GET', `/organizations/${sandbox.organizationId}`);
    expect(read.body.settings.timezone).toBeNull();
  });

  it('when letterDetails is sent with all four fields, then it is stored as sent', async () => {
    const r = await put({ letterDetails: LETTER });
    expect(r.body.settings.letterDetails).toEqual(LETTER);
  });

  it('when letterDetails omits fields, then the omitted fields are cleared (whole replacement)', async () => {
    await put({ letterDetails: LETTER });
    const r = await put({ letterDetails: { senderName: 'Only the name' } });
    expect(r.body.settings.letterDetails).toEqual({
      senderName: 'Only the name',
      senderAddress: null,
      signature: null,
      footer: null,
    });
  });

  it('when letterDetails is absent from the body, then it is kept', async () => {
    await put({ letterDetails: LETTER });
    const r = await put({ dunningEnabled: false });
    expect(r.body.settings.letterDetails).toEqual(LETTER);
    expect(r.body.settings.dunningEnabled).toBe(false);
  });

  it('when letterDetails is null, then it is cleared', async () => {
    const r = await put({ letterDetails: null });
    expect(r.body.settings.letterDetails).toBeNull();
  });

  it.each([
    ['an unknown settings field', { colourScheme: 'dark' }],
    ['an empty body', {}],
    ['an unknown letterDetails field', { letterDetails: { senderName: 'A', phone: '1' } }],
    ['a non-object letterDetails', { letterDetails: 'signed' }],
    ['a non-string letterDetails field', { letterDetails: { footer: 3 } }],
    ['an invalid currency', { defaultCurrency: 'euro' }],
    ['an unknown time zone', { timezone: 'Mars/Olympus' }],
    ['a non-boolean dunningEnabled', { dunningEnabled: 'yes' }],
  ])('when the body has %s, then 400 and nothing is applied', async (_label, body) => {
    const before = (await sandbox.call('GET', `/organizations/${sandbox.organizationId}`)).body.settings;
    const r = await put({ ...body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('BAD_REQUEST');
    const after = (await sandbox.call('GET', `/organizations/${sandbox.organizationId}`)).body.settings;
    expect(after).toEqual(before);
  });

  it('when one field of a mixed body is invalid, then no field of it is applied', async () => {
    await put({ defaultCurrency: 'EUR' });
    const r = await put({ defaultCurrency: 'GBP', dunningEnabled: 'maybe' });
    expect(r.status).toBe(400);
    const read = await sandbox.call('GET', `/organizations/${sandbox.organizationId}`);
    expect(read.body.settings.defaultCurrency).toBe('EUR');
  });

  it('when settings are updated, then the journal records one UpdateOrganizationSettings entry', async () => {
    await put({ timezone: 'UTC', letterDetails: null });
    const audit = await sandbox.call('GET', `/organizations/${sandbox.organizationId}/audit`);
    expect(audit.body.items[0]).toMatchObject({
      action: 'UpdateOrganizationSettings',
      actor: { type: 'USER' },
      metadata: { fields: ['timezone', 'letterDetails'] },
    });
  });

  it('when the organization is unknown, then 404', async () => {
    const r = await sandbox.call('PUT', '/organizations/6f1c2d3e-4b5a-4c6d-8e7f-000000000000/settings', {
      body: { dunningEnabled: true },
    });
    expect(r.status).toBe(404);
  });

  it('when the token has organizations:read only, then 403', async () => {
    const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: ['organizations:read'] });
    expect((await put({ dunningEnabled: true }, accessToken)).status).toBe(403);
  });
});
