/**
 * The scenario of `bench:fleet` (bench/fleet.ts): 20 CSV sources over 4 tokens, their drop files and
 * the worker configuration. Pure: no I/O but the file writes of {@link dropAccounts}.
 *
 * Token 1 (the default connection): one large backlog and 4 small sources. Tokens 2-4 (entries of
 * `connections:`): two equally weighted busy sources and 3 small sources each. Every row's sourceId
 * starts with its source id and file (`t2-busy-a.f0.17`), so the sandbox can tell which source and
 * which file a request is for (an account create's body, a lookup's filter).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type FleetRole = 'backlog' | 'busy' | 'small';

export interface FleetSource {
  id: string;
  /** 1 to 4; token 1 is the default connection, the others `tok2`..`tok4`. */
  token: number;
  role: FleetRole;
  /** Syncs into the second organization (the same token sees both). */
  secondOrganization: boolean;
}

export const TOKENS = [1, 2, 3, 4] as const;

/** The 20 sources: token 1 a backlog + 4 small; tokens 2-4 two busy + 3 small each. */
export function fleetSources(): FleetSource[] {
  const sources: FleetSource[] = [{ id: 't1-backlog', token: 1, role: 'backlog', secondOrganization: false }];
  for (let n = 1; n <= 4; n++)
    sources.push({ id: `t1-small-${n}`, token: 1, role: 'small', secondOrganization: false });
  for (const token of [2, 3, 4]) {
    for (const letter of ['a', 'b']) {
      // Token 4's busy-b and small-3 sync into the second organization: one token's budget, two organizations.
      const second = token === 4 && letter === 'b';
      sources.push({ id: `t${token}-busy-${letter}`, token, role: 'busy', secondOrganization: second });
    }
    for (let n = 1; n <= 3; n++)
      sources.push({
        id: `t${token}-small-${n}`,
        token,
        role: 'small',
        secondOrganization: token === 4 && n === 3,
      });
  }
  return sources;
}

/** The connection id of a token's sources (`default` for token 1). */
export const connectionOf = (token: number) => (token === 1 ? 'default' : `tok${token}`);

/** The environment variable holding a token (`accessTokenEnv`); token 1 is RECEIVABLES_ACCESS_TOKEN. */
export const tokenEnvOf = (token: number) =>
  token === 1 ? 'RECEIVABLES_ACCESS_TOKEN' : `FLEET_TOKEN_${token}`;

/** `<source>.f<file>.<row>`: matched in request bodies and URLs; groups: source id, file number. */
export const ROW_ID = /\b(t\d-(?:backlog|busy-[ab]|small-\d+))\.f(\d+)\.\d+/;

const ACCOUNT_HEADER =
  'sourceId,fullName,currencyCode,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,tags,updatedAt';

/**
 * Writes file number `file` of a source (`rows` accounts) into its drop folder: written beside it,
 * then renamed in, since the sources take files at once (`stableSeconds: 0`).
 */
export function dropAccounts(
  dropDir: string,
  spoolDir: string,
  source: string,
  file: number,
  rows: number,
): void {
  const lines = [ACCOUNT_HEADER];
  for (let i = 1; i <= rows; i++)
    lines.push(`${source}.f${file}.${i},Customer ${source} ${file}-${i},EUR,${i} quai,Nantes,44000,FR,,`);
  const name = `accounts-${source}-f${file}.csv`;
  const spooled = join(spoolDir, name);
  writeFileSync(spooled, `${lines.join('\n')}\n`);
  renameSync(spooled, join(dropDir, name));
}

export interface FleetConfigProps {
  dataDir: string;
  dropDirOf: (source: string) => string;
  baseUrl: string;
  organizationId: string;
  secondOrganizationId: string;
  prefix: string;
  schedule: string;
  /** `queue.concurrency`: jobs per worker process. */
  jobConcurrency: number;
  /** `api.concurrency`: requests in flight per pass. */
  apiConcurrency: number;
}

/** The worker's YAML: the default connection (env), 3 `connections:` entries, the 20 sources. */
export function fleetConfigYaml(sources: readonly FleetSource[], props: FleetConfigProps): string {
  const lines = [
    'state:',
    `  dataDir: ${JSON.stringify(props.dataDir)}`,
    'api:',
    `  concurrency: ${props.apiConcurrency}`,
    'queue:',
    `  prefix: ${JSON.stringify(props.prefix)}`,
    `  concurrency: ${props.jobConcurrency}`,
    // A busy pass never ends within the run: the workers leave it at SIGTERM after this long.
    '  shutdownSeconds: 3',
    'connections:',
  ];
  for (const token of TOKENS.slice(1)) {
    lines.push(
      `  - id: ${connectionOf(token)}`,
      `    baseUrl: ${JSON.stringify(props.baseUrl)}`,
      `    accessTokenEnv: ${tokenEnvOf(token)}`,
      `    organizationId: ${props.organizationId}`,
    );
  }
  lines.push('sources:');
  for (const source of sources) {
    lines.push(
      `  - id: ${source.id}`,
      '    type: csv',
      `    dropDir: ${JSON.stringify(props.dropDirOf(source.id))}`,
      '    stableSeconds: 0',
      `    schedule: ${JSON.stringify(props.schedule)}`,
    );
    if (source.token !== 1) lines.push(`    connection: ${connectionOf(source.token)}`);
    if (source.secondOrganization) lines.push(`    organizationId: ${props.secondOrganizationId}`);
  }
  return `${lines.join('\n')}\n`;
}
