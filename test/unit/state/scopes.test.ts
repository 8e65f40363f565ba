import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { StateSchema } from '../../../src/state/schema.js';
import {
  type StateScope,
  scopeColumns,
  sourceInScope,
  stateScopes,
  UNSTAMPED_SCOPE,
  UNSTAMPED_SCOPES,
} from '../../../src/state/scopes.js';

const ORG: StateScope = { connectionId: 'eu', organizationId: '5b0c8a52-94c3-4a4e-9d0b-6f1f3a2b7c11' };

/** Compiles queries only: no database behind it. */
const db = new Kysely<StateSchema>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

describe('state scopes', () => {
  it('when a source is known, then its scope is the one given; any other source is not stamped yet', () => {
    const map = new Map([['erp-csv', ORG]]);
    const scopes = stateScopes(map);
    map.set('erp-sql', ORG);
    expect(scopes.of('erp-csv')).toEqual(ORG);
    expect(scopes.of('erp-sql')).toBe(UNSTAMPED_SCOPE);
    expect(UNSTAMPED_SCOPES.of('erp-csv')).toEqual({ connectionId: 'default', organizationId: '' });
  });

  it("when a source's rows are written or looked up, then its connection and organization go with its id", () => {
    const scopes = stateScopes(new Map([['erp-csv', ORG]]));
    expect(scopeColumns(scopes, 'erp-csv')).toEqual({
      source_id: 'erp-csv',
      connection_id: 'eu',
      organization_id: ORG.organizationId,
    });
    const query = db
      .selectFrom('record_map as m')
      .select('m.api_id')
      .where(sourceInScope(scopes, 'erp-csv', 'm'))
      .where('m.kind', '=', 'invoice')
      .compile();
    expect(query.sql).toBe(
      'select "m"."api_id" from "record_map" as "m" where ("m"."source_id" = $1 and "m"."connection_id" = $2 and "m"."organization_id" = $3) and "m"."kind" = $4',
    );
    expect(query.parameters).toEqual(['erp-csv', 'eu', ORG.organizationId, 'invoice']);
  });
});
