import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceSchema } from '../../../src/config/schema.js';
import { describeSource } from '../../../src/sources/describe-source.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'singer');

/** `doctor`'s check of a Singer source, with the fixture tap as the tap. */
async function check(settings: Record<string, unknown>) {
  const config = sourceSchema.parse({
    id: 'stripe',
    type: 'singer',
    command: [process.execPath, join(FIXTURES, 'tap.mjs')],
    config: join(FIXTURES, 'stripe', 'config.json'),
    streams: { customers: { kind: 'accounts' }, invoices: { kind: 'invoices' } },
    ...settings,
  });
  return describeSource(config).check({ env: { PATH: process.env.PATH }, baseDir: FIXTURES });
}

describe("doctor's check of a Singer source", () => {
  it('when the tap discovers every configured stream, then it passes naming them', async () => {
    expect(await check({})).toEqual({
      status: 'ok',
      detail: `tap ${process.execPath}: --discover lists customers, invoices`,
    });
  });

  it("when a configured stream is not among the tap's, then it fails naming it and the tap's streams", async () => {
    const result = await check({ streams: { credit_notes: { kind: 'creditNotes' } } });
    expect(result.status).toBe('fail');
    expect(result.detail).toBe(
      '--discover: the tap has no stream "credit_notes" (its streams: invoices, customers)',
    );
  });

  it('when the program is not found or its config cannot be read, then it fails saying so', async () => {
    expect(await check({ command: ['tap-nowhere'] })).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('the tap\'s program "tap-nowhere" is not found'),
    });
    expect(await check({ config: join(FIXTURES, 'no-such.json') })).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^config .*no-such\.json cannot be read: ENOENT/),
    });
  });

  it('when the source is fed by the target, then there is nothing to run and it says how it is fed', async () => {
    const config = sourceSchema.parse({
      id: 'xero',
      type: 'singer',
      streams: { contacts: { kind: 'accounts' } },
    });
    expect(await describeSource(config).check({ env: {}, baseDir: FIXTURES })).toEqual({
      status: 'ok',
      detail: 'fed by `receivables-sync target --source xero`: no tap to run',
    });
  });
});
