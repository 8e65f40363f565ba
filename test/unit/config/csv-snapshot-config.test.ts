import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csvSnapshotSettings } from '../../../src/config/csv-source-schema.js';
import { ConfigError, loadConfig } from '../../../src/config/load.js';

/** Loads a config of one CSV source whose `streams` is `streams` (YAML, indented under the source). */
function load(streams: string) {
  const folder = mkdtempSync(join(tmpdir(), 'rs-snapshot-config-'));
  const file = join(folder, 'receivables-sync.yaml');
  writeFileSync(
    file,
    `sources:\n  - id: crm\n    type: csv\n    dropDir: drop\n    streams:\n${streams
      .split('\n')
      .map((line) => `      ${line}`)
      .join('\n')}\n`,
  );
  return loadConfig({ env: {}, cwd: folder });
}

/** The problems a config error lists, or [] when it loads. */
function problemsOf(streams: string): string[] {
  try {
    load(streams);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('CSV snapshot settings', () => {
  it('when a kind is in snapshot mode, then its settings get the defaults of the SQL source and a 10 % guard', () => {
    const source = load('accounts:\n  mode: snapshot\ninvoices:\n  mode: snapshot').config.sources[0]!;
    if (source.type !== 'csv') throw new Error('a csv source');
    expect(csvSnapshotSettings(source.streams, 'accounts')).toEqual({
      onDelete: 'unlink',
      deletedTag: 'deleted-in-source',
      maxDeleteRatio: 0.1,
    });
    expect(csvSnapshotSettings(source.streams, 'invoices')).toMatchObject({ onDelete: 'skip' });
    expect(csvSnapshotSettings(source.streams, 'creditNotes')).toBeNull();
  });

  it('when no streams are given, then every kind stays incremental (the behaviour before snapshots)', () => {
    const folder = mkdtempSync(join(tmpdir(), 'rs-snapshot-config-'));
    writeFileSync(
      join(folder, 'receivables-sync.yaml'),
      'sources:\n  - id: crm\n    type: csv\n    dropDir: drop\n',
    );
    const source = loadConfig({ env: {}, cwd: folder }).config.sources[0]!;
    if (source.type !== 'csv') throw new Error('a csv source');
    for (const stream of ['accounts', 'invoices', 'creditNotes'] as const)
      expect(csvSnapshotSettings(source.streams, stream)).toBeNull();
  });

  it('when tag settings are given, then they are kept', () => {
    const source = load(
      'accounts:\n  mode: snapshot\n  onDelete: tag\n  deletedTag: closed\n  maxDeleteRatio: 0.25',
    ).config.sources[0]!;
    if (source.type !== 'csv') throw new Error('a csv source');
    expect(csvSnapshotSettings(source.streams, 'accounts')).toEqual({
      onDelete: 'tag',
      deletedTag: 'closed',
      maxDeleteRatio: 0.25,
    });
  });

  it('when a setting does not fit, then the error names the key and the reason', () => {
    expect(problemsOf('accounts:\n  onDelete: unlink')).toEqual([
      'sources.0.streams.accounts.onDelete: applies to "mode: snapshot" only (an incremental file never deletes) (in source "crm")',
    ]);
    expect(problemsOf('accounts:\n  mode: snapshot\n  maxDeleteRatio: 1.5')).toEqual([
      'sources.0.streams.accounts.maxDeleteRatio: between 0 and 1 (in source "crm")',
    ]);
    expect(problemsOf('accounts:\n  mode: snapshot\n  deletedTag: closed')).toEqual([
      'sources.0.streams.accounts.deletedTag: is the tag of "onDelete: tag" only (in source "crm")',
    ]);
    expect(problemsOf('invoices:\n  mode: snapshot\n  onDelete: unlink')).toEqual([
      'sources.0.streams.invoices.onDelete: not for this kind: documents are never deleted through the API: in snapshot mode the absent ones are only reported (in source "crm")',
    ]);
    expect(problemsOf('accounts:\n  mode: full')[0]).toMatch(
      /^sources\.0\.streams\.accounts\.mode: .*"incremental"/,
    );
    expect(problemsOf('accounts:\n  mod: snapshot')).toEqual([
      'sources.0.streams.accounts: unknown key "mod" (did you mean "mode"?) (in source "crm")',
    ]);
    expect(problemsOf('customers:\n  mode: snapshot')[0]).toMatch(
      /^sources\.0\.streams: unknown key "customers"/,
    );
  });
});
