import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_API_COMPAT } from '../../../src/api/compat.js';
import { ConfigError, loadConfig, requireSources } from '../../../src/config/load.js';

const dir = () => mkdtempSync(join(tmpdir(), 'rs-config-'));
const write = (folder: string, text: string) => {
  const file = join(folder, 'receivables-sync.yaml');
  writeFileSync(file, text);
  return file;
};

describe('configuration', () => {
  it('when no file exists, then the built-in defaults are used', () => {
    const { config, file } = loadConfig({ env: {}, cwd: dir() });
    expect(file).toBeNull();
    expect(config.dashboard).toEqual({
      host: '127.0.0.1',
      port: 3000,
      queueAdmin: false,
      trustProxy: false,
      uploadMaxMb: 10,
    });
    // No source by default: nothing is synced by accident.
    expect(config.sources).toEqual([]);
  });

  it('when no source is configured, then requireSources says where and how to configure one', () => {
    const none = loadConfig({ env: {}, cwd: dir() });
    expect(() => requireSources(none)).toThrowError(
      /no configuration file was found.*receivables-sync demo/s,
    );
    const folder = dir();
    write(folder, 'log:\n  level: warn\n');
    const empty = loadConfig({ env: {}, cwd: folder });
    expect(() => requireSources(empty)).toThrowError(/receivables-sync\.yaml defines no source/);
    write(folder, 'sources:\n  - id: billing\n    type: csv\n    dropDir: drop\n');
    expect(requireSources(loadConfig({ env: {}, cwd: folder })).map((s) => s.id)).toEqual(['billing']);
  });

  it('when ./receivables-sync.yaml exists, then it is merged over the defaults and its paths are relative to it', () => {
    const folder = dir();
    write(
      folder,
      'state:\n  dataDir: ./state\nsources:\n  - id: billing\n    type: csv\n    dropDir: drop\n',
    );
    const { config, file } = loadConfig({ env: {}, cwd: folder });
    expect(file).toBe(join(folder, 'receivables-sync.yaml'));
    expect(config.state.dataDir).toBe(join(folder, 'state'));
    expect(config.sources).toEqual([
      expect.objectContaining({ id: 'billing', dropDir: join(folder, 'drop') }),
    ]);
    expect(config.api.timeoutSeconds).toBe(30);
  });

  it('when environment variables are set, then they override the file', () => {
    const folder = dir();
    write(folder, 'dashboard:\n  port: 4000\n');
    const { config, secrets } = loadConfig({
      cwd: folder,
      env: {
        DASHBOARD_PORT: '5000',
        DATABASE_URL: 'postgres://x@localhost/db',
        RECEIVABLES_BASE_URL: 'https://api.example.com',
        RECEIVABLES_ACCESS_TOKEN: 'tok',
      },
    });
    expect(config.dashboard.port).toBe(5000);
    expect(config.state.databaseUrl).toBe('postgres://x@localhost/db');
    expect(config.api.baseUrl).toBe('https://api.example.com');
    expect(secrets.accessToken).toBe('tok');
  });

  it('when RECEIVABLES_SYNC_CONFIG names a file, then that file is read', () => {
    const folder = dir();
    const file = join(folder, 'other.yaml');
    writeFileSync(file, 'log:\n  level: debug\n');
    expect(loadConfig({ env: { RECEIVABLES_SYNC_CONFIG: file }, cwd: dir() }).config.log.level).toBe('debug');
  });

  it('when the file has several problems, then one error lists every one with its key path', () => {
    const folder = dir();
    write(
      folder,
      'api:\n  baseUrl: ftp://nowhere\n  bogus: 1\nsources:\n  - id: a\n    type: csv\n  - id: a\n    type: csv\n    dropDir: d\n',
    );
    let error: unknown;
    try {
      loadConfig({ env: {}, cwd: folder });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('receivables-sync.yaml');
    expect(message).toContain('api.baseUrl');
    expect(message).toContain('"bogus"');
    expect(message).toContain('sources.0.dropDir');
    expect(message).toContain('duplicate source id "a"');
  });

  it("when api.compat is not set, then the contract's choices apply; a partial one keeps the other defaults", () => {
    const plain = loadConfig({ env: {}, cwd: dir() }).config.api.compat;
    // The schema's defaults are the client's (and the sandbox's): the contract's PATCH, no paid creations.
    expect(plain).toEqual(DEFAULT_API_COMPAT);
    expect([plain.documentPatch.method, plain.documentPatch.path, plain.createPaid]).toEqual([
      'PATCH',
      '/{kind}/{id}',
      false,
    ]);
    const folder = dir();
    write(folder, 'api:\n  compat:\n    documentPatch:\n      method: PUT\n');
    const partial = loadConfig({ env: {}, cwd: folder }).config.api.compat;
    expect(partial.documentPatch).toEqual({ ...plain.documentPatch, method: 'PUT' });
    expect(partial.createPaid).toBe(false);
  });

  it('when api.compat names an impossible route, then the error says which key and why', () => {
    const folder = dir();
    write(
      folder,
      'api:\n  compat:\n    documentPatch:\n      method: GET\n      path: /invoices/payment\n      paidAmountField: "paid amount"\n',
    );
    let message = '';
    try {
      loadConfig({ env: {}, cwd: folder });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('api.compat.documentPatch.method');
    expect(message).toMatch(/api\.compat\.documentPatch\.path[\s\S]*must contain \{id\}/);
    expect(message).toContain('api.compat.documentPatch.paidAmountField');
  });

  it('when a key is a typo of a known one, then the error says which one was meant, wherever it is', () => {
    const folder = dir();
    write(
      folder,
      'api:\n  timeoutSecond: 5\n  compat:\n    createPiad: true\nsources:\n  - id: a\n    type: csv\n    dropDir: d\n    schedul: "* * * * *"\n    nonsense: 1\n',
    );
    let message = '';
    try {
      loadConfig({ env: {}, cwd: folder });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('api: unknown key "timeoutSecond" (did you mean "timeoutSeconds"?)');
    expect(message).toContain('api.compat: unknown key "createPiad" (did you mean "createPaid"?)');
    // The entry is named by its id as well as by its position.
    expect(message).toMatch(
      /sources\.0: unknown keys "schedul" \(did you mean "schedule"\?\), "nonsense" \(in source "a"\)(\n|$)/,
    );
  });

  it('when the file is not YAML, then the error names the file and says so', () => {
    const folder = dir();
    write(folder, 'x: [\n');
    expect(() => loadConfig({ env: {}, cwd: folder })).toThrow(/receivables-sync\.yaml[\s\S]*not valid YAML/);
  });
});
