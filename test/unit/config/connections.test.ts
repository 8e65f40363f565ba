import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialsPathOf } from '../../../src/api/auth/token-provider-factory.js';
import {
  apiConnections,
  connectionIdOf,
  connectionsUsedBy,
  connectionView,
  DEFAULT_CONNECTION,
} from '../../../src/config/connections.js';
import { ConfigError, loadConfig } from '../../../src/config/load.js';

const load = (yaml: string, env: Record<string, string> = {}) => {
  const folder = mkdtempSync(join(tmpdir(), 'rs-connections-'));
  const file = join(folder, 'receivables-sync.yaml');
  writeFileSync(file, yaml);
  return loadConfig({ file, env });
};

const ORG = '6f1c2a4e-0000-4000-8000-000000000001';
const OTHER_ORG = '6f1c2a4e-0000-4000-8000-000000000002';

describe('connections: configuration', () => {
  it('when a file has no connections, then its api: and auth: keys are the one default connection, with the RECEIVABLES_* credentials', () => {
    const loaded = load(`sources:\n  - { id: erp, type: csv, dropDir: drop }\n`, {
      RECEIVABLES_BASE_URL: 'https://api.example.com',
      RECEIVABLES_ORGANIZATION_ID: ORG,
      RECEIVABLES_REFRESH_TOKEN: 'rt-default',
    });
    const connections = apiConnections(loaded);
    expect([...connections.keys()]).toEqual([DEFAULT_CONNECTION]);
    const only = connections.get(DEFAULT_CONNECTION)!;
    expect(only.api.baseUrl).toBe('https://api.example.com');
    expect(only.api.organizationId).toBe(ORG);
    expect(only.api.retryAttempts).toBe(8);
    expect(only.secrets.refreshToken).toBe('rt-default');
    expect(connectionIdOf(loaded.config.sources[0]!)).toBe(DEFAULT_CONNECTION);
    // Where the credentials of the default connection always were.
    expect(credentialsPathOf(loaded.config)).toMatch(/credentials\.enc$/);
  });

  it('when a connection names its credential variables, then they are read from the environment, and what it leaves out comes from api: and auth:', () => {
    const loaded = load(
      [
        'api: { timeoutSeconds: 12, retryAttempts: 4, concurrency: 3 }',
        'auth: { clientId: shared-client }',
        'connections:',
        `  - { id: acme, baseUrl: https://acme.example.com, refreshTokenEnv: ACME_RT, organizationId: ${ORG} }`,
        '  - { id: beta, baseUrl: https://beta.example.com, accessTokenEnv: BETA_AT, clientIdEnv: BETA_CLIENT, concurrency: 5, retryAttempts: 2 }',
        'sources:',
        '  - { id: a, type: csv, dropDir: a, connection: acme }',
        `  - { id: b, type: csv, dropDir: b, connection: beta, organizationId: ${OTHER_ORG}, weight: 3 }`,
        '  - { id: c, type: csv, dropDir: c }',
      ].join('\n'),
      {
        ACME_RT: 'rt-acme',
        BETA_AT: 'at-beta',
        BETA_CLIENT: 'beta-client',
        RECEIVABLES_REFRESH_TOKEN: 'rt-default',
      },
    );
    const connections = apiConnections(loaded);
    const acme = connections.get('acme')!;
    expect(acme.api).toMatchObject({
      baseUrl: 'https://acme.example.com',
      organizationId: ORG,
      timeoutSeconds: 12,
      retryAttempts: 4,
      concurrency: 3,
    });
    expect(acme.auth.clientId).toBe('shared-client');
    expect(acme.secrets).toMatchObject({ refreshToken: 'rt-acme', accessToken: undefined });
    const beta = connections.get('beta')!;
    expect(beta.api).toMatchObject({ concurrency: 5, retryAttempts: 2 });
    expect(beta.auth.clientId).toBe('beta-client');
    expect(beta.secrets).toMatchObject({ accessToken: 'at-beta', refreshToken: undefined });
    // The default connection's secrets never leak into another connection's view.
    const view = connectionView(loaded, beta);
    expect(view.secrets.refreshToken).toBeUndefined();
    expect(view.config.api.baseUrl).toBe('https://beta.example.com');
    expect(connectionsUsedBy(loaded, loaded.config.sources).map((c) => c.id)).toEqual([
      'acme',
      'beta',
      'default',
    ]);
    expect(loaded.config.sources[1]).toMatchObject({ organizationId: OTHER_ORG, weight: 3 });
    expect(credentialsPathOf(loaded.config, 'acme')).toMatch(/credentials\.acme\.enc$/);
  });

  it('when a source names an unknown connection, or connections repeat an id or take "default", then the file is refused with each problem', () => {
    const problems = (yaml: string) => {
      try {
        load(yaml);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      throw new Error('the configuration was accepted');
    };
    expect(
      problems(
        'connections:\n  - { id: acme, baseUrl: https://a.example.com }\nsources:\n  - { id: a, type: csv, dropDir: a, connection: acmee }\n',
      ),
    ).toEqual(['sources.0.connection: unknown connection "acmee" (known: default, acme)']);
    expect(
      problems(
        'connections:\n  - { id: acme, baseUrl: https://a.example.com }\n  - { id: acme, baseUrl: https://b.example.com }\n',
      ),
    ).toEqual(['connections: duplicate connection id']);
    expect(problems('connections:\n  - { id: default, baseUrl: https://a.example.com }\n')[0]).toMatch(
      /connections\.0\.id: "default" is the connection of the api: and auth: keys/,
    );
    expect(
      problems(
        'connections:\n  - { id: acme, baseUrl: https://a.example.com, refreshTokenEnv: "not a name" }\n',
      )[0],
    ).toMatch(/connections\.0\.refreshTokenEnv: an environment variable name/);
    expect(problems('sources:\n  - { id: a, type: csv, dropDir: a, weight: 0 }\n')[0]).toMatch(
      /sources\.0\.weight/,
    );
  });
});
