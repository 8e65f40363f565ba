import { describe, expect, it } from 'vitest';
import { dashboardProfileOf, statusProfiles } from '../../../src/app/source-profiles.js';
import { type SourceConfig, sourceSchema } from '../../../src/config/schema.js';
import { settingFacts } from '../../../src/dashboard/views/setting-facts.js';

const parse = (source: Record<string, unknown>): SourceConfig => sourceSchema.parse(source);
const csv = parse({ id: 'erp-csv', type: 'csv', dropDir: '/srv/drop', mapping: { Kunde: 'fullName' } });
const sql = parse({
  id: 'billing-db',
  type: 'sql',
  urlEnv: 'BILLING_URL',
  streams: { invoices: { query: 'select 1 < 2' }, accounts: { query: 'select 1' } },
});
const module = parse({ id: 'custom', type: 'module', module: './source.mjs' });

describe('what each source type shows outside sources/', () => {
  it('when status asks, then a drop folder says it keeps no cursor and a SQL source lists its configured streams', () => {
    const profileOf = statusProfiles([csv, sql, module]);
    expect(profileOf('erp-csv')).toEqual({
      configuredStreams: [],
      noCursors: 'none (a drop folder keeps no cursor)',
    });
    expect(profileOf('billing-db')).toEqual({
      configuredStreams: ['accounts', 'invoices'],
      noCursors: 'none yet',
    });
    expect(profileOf('custom')).toEqual({ configuredStreams: [], noCursors: 'none yet' });
    expect(profileOf('unknown')).toEqual({ configuredStreams: [], noCursors: 'none yet' });
  });

  it('when the dashboard asks, then only a drop folder source has files, and its settings render with the files and format of its kinds', () => {
    const csvProfile = dashboardProfileOf(csv);
    expect(csvProfile.dropDir).toBe('/srv/drop');
    expect(csvProfile.noCursors).toBe('none (files are tracked by checksum)');
    expect(settingFacts(csvProfile.settings).value).toBe(
      '<dt>Drop folder</dt><dd><code>/srv/drop</code> <span class="muted small">(files stable for 5 s; unknown columns are a warning)</span></dd>\n' +
        '<dt>Mapping</dt><dd><code>Kunde</code> → <code>fullName</code> </dd>\n' +
        '<dt>Files</dt><dd><code>accounts</code>: <code>accounts*.csv</code> <span class="muted small">(default)</span> · ' +
        '<code>invoices</code>: <code>invoices*.csv</code> <span class="muted small">(default)</span> · ' +
        '<code>creditNotes</code>: <code>credit-notes*.csv</code> <span class="muted small">(default)</span></dd>\n' +
        '<dt>Format</dt><dd>utf-8, delimiter &quot;,&quot;, decimal &quot;.&quot;, thousands none, dates yyyy-MM-dd, header on line 1 <span class="muted small">(every kind)</span></dd>',
    );

    const sqlProfile = dashboardProfileOf(sql);
    expect(sqlProfile).toMatchObject({ dropDir: null, noCursors: 'none yet' });
    expect(settingFacts(sqlProfile.settings).value).toBe(
      '<dt>Database</dt><dd>from <code>$BILLING_URL</code></dd>\n' +
        '<dt>Streams</dt><dd>' +
        '<details><summary><code>accounts</code> by <code>updated_at, id</code></summary><pre>select 1</pre></details>' +
        '<details><summary><code>invoices</code> by <code>updated_at, id</code></summary><pre>select 1 &lt; 2</pre></details>' +
        '<span class="muted small">300 s look-back · pages of 1000 rows</span></dd>',
    );

    const moduleProfile = dashboardProfileOf(module);
    expect(moduleProfile).toMatchObject({ dropDir: null, noCursors: 'none yet' });
    expect(settingFacts(moduleProfile.settings).value).toBe(
      '<dt>Module</dt><dd><code>./source.mjs</code></dd>',
    );
  });
});
