import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load.js';
import { sourceSchema } from '../../../src/config/schema.js';
import { targetSourceOf } from '../../../src/config/target-source.js';

const messages = (settings: Record<string, unknown>) => {
  const result = sourceSchema.safeParse({ id: 'stripe', type: 'singer', ...settings });
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

/** The first ```yaml block after `heading` in a markdown file. */
function yamlAfter(file: string, heading: string): unknown {
  const text = readFileSync(file, 'utf8');
  const from = text.indexOf(heading);
  const block = /```yaml\n([\s\S]*?)```/.exec(text.slice(from));
  if (from < 0 || !block) throw new Error(`no yaml block after "${heading}" in ${file}`);
  return parse(block[1]!);
}

describe('the configuration of a Singer source', () => {
  it('when the README and docs/sources-singer.md show a source, then it is valid as written', () => {
    for (const [file, heading] of [
      ['README.md', '### Singer taps'],
      ['docs/sources-singer.md', '## Configuration'],
      ['docs/sources-singer.md', '## Airbyte sources'],
    ] as const) {
      const { sources } = yamlAfter(file, heading) as { sources: unknown[] };
      const result = sourceSchema.safeParse(sources[0]);
      expect(result.error?.issues ?? [], file).toEqual([]);
    }
  });

  it('when a stream names a column its kind does not have or a kind that is none, then it says which and lists the known', () => {
    expect(messages({ streams: { customers: { kind: 'accounts', columns: { dueDate: 'due' } } } })).toEqual([
      expect.stringMatching(
        /^streams\.customers\.columns\.dueDate: not a column of accounts \(known: sourceId, fullName/,
      ),
    ]);
    expect(messages({ streams: { customers: { kind: 'customers' } } })).toEqual([
      'streams.customers.kind: one of accounts, invoices, creditNotes',
    ]);
    expect(messages({ streams: {} })).toEqual([
      'streams: name at least one tap stream (customers: { kind: accounts, ... })',
    ]);
  });

  it('when command is one string, then it is split on spaces; paths are relative to the configuration file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rs-singer-config-'));
    try {
      const file = join(dir, 'receivables-sync.yaml');
      writeFileSync(
        file,
        'sources:\n  - { id: xero, type: singer, command: "tap-xero --log-level info", config: ./tap.json, streams: { contacts: { kind: accounts } } }\n',
      );
      const [source] = loadConfig({ file, env: {} }).config.sources;
      expect(source).toMatchObject({
        command: ['tap-xero', '--log-level', 'info'],
        config: join(dir, 'tap.json'),
        cwd: dir,
        timeoutSeconds: 600,
        batchSize: 500,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when target is given no --source, then it takes the only Singer source without command, else says what to name', () => {
    const parse = (s: Record<string, unknown>) =>
      sourceSchema.parse({ streams: { c: { kind: 'accounts' } }, ...s });
    const fed = parse({ id: 'fed', type: 'singer' });
    const runs = parse({ id: 'runs', type: 'singer', command: ['tap-stripe'] });
    const csv = sourceSchema.parse({ id: 'erp', type: 'csv', dropDir: './drop' });
    expect(targetSourceOf([csv, runs, fed], undefined).id).toBe('fed');
    expect(() => targetSourceOf([csv, runs], undefined)).toThrow(/no `type: singer` source without command/);
    expect(() => targetSourceOf([fed, { ...fed, id: 'fed2' }], undefined)).toThrow(
      'several Singer sources can be fed (fed, fed2): name one with --source',
    );
    expect(() => targetSourceOf([runs], 'runs')).toThrow(/runs its own tap \(command\)/);
    expect(() => targetSourceOf([csv], 'erp')).toThrow(/is of type csv/);
  });
});
