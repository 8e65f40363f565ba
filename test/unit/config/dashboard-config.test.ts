import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load.js';

/** The configuration of a file holding `yaml`, and the error it raises if any. */
function load(yaml: string) {
  const folder = mkdtempSync(join(tmpdir(), 'rs-config-dash-'));
  writeFileSync(join(folder, 'receivables-sync.yaml'), yaml);
  try {
    return { dashboard: loadConfig({ env: {}, cwd: folder }).config.dashboard, error: undefined };
  } catch (error) {
    return { dashboard: undefined, error: error as ConfigError };
  }
}

describe('dashboard.trustProxy', () => {
  it('when it is not set, then no proxy is trusted', () => {
    expect(load('log:\n  level: warn\n').dashboard?.trustProxy).toBe(false);
  });

  it('when it is true, a list, or one comma-separated string of addresses, CIDRs and named ranges, then it is taken as written', () => {
    expect(load('dashboard:\n  trustProxy: true\n').dashboard?.trustProxy).toBe(true);
    expect(
      load('dashboard:\n  trustProxy: [loopback, 10.0.0.0/8, "fd00::/8", 192.168.1.4]\n').dashboard
        ?.trustProxy,
    ).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.168.1.4']);
    expect(load('dashboard:\n  trustProxy: "127.0.0.1, 172.16.0.0/12"\n').dashboard?.trustProxy).toEqual([
      '127.0.0.1',
      '172.16.0.0/12',
    ]);
  });

  it('when DASHBOARD_TRUST_PROXY is set, then it overrides the file: true, false, or addresses separated by commas', () => {
    const folder = mkdtempSync(join(tmpdir(), 'rs-config-dash-'));
    writeFileSync(join(folder, 'receivables-sync.yaml'), 'dashboard:\n  trustProxy: [10.0.0.1]\n');
    const withEnv = (value: string) =>
      loadConfig({ env: { DASHBOARD_TRUST_PROXY: value }, cwd: folder }).config.dashboard.trustProxy;
    expect(withEnv('true')).toBe(true);
    expect(withEnv('FALSE')).toBe(false);
    expect(withEnv('loopback,172.18.0.0/16')).toEqual(['loopback', '172.18.0.0/16']);
    expect(() => withEnv('proxy')).toThrow(/dashboard\.trustProxy/);
  });

  it('when it names something that is no address (a host name, a bad CIDR, a hop count, nothing), then loading fails naming the key', () => {
    for (const value of [
      '[proxy.example.com]',
      '[10.0.0.0/33]',
      '["10.0.0.1/8/2"]',
      '1',
      '[]',
      'yes please',
    ]) {
      const { error } = load(`dashboard:\n  trustProxy: ${value}\n`);
      expect(error, value).toBeInstanceOf(ConfigError);
      expect(error?.message, value).toContain('dashboard.trustProxy');
    }
  });
});
