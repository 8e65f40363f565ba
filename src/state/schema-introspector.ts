import { type DatabaseIntrospector, type SchemaMetadata, sql, type TableMetadata } from 'kysely';
import type { StateDb } from './database.js';

/**
 * The state DB as kysely's Migrator should see it: its introspection limited to our one schema.
 * The Migrator looks for its tables by listing every table of every schema in the database, and
 * Postgres's listing (`pg_get_serial_sequence` by name) fails with "schema … does not exist" when
 * another schema is dropped under it: another install sharing the database, a test file's schema.
 * Everything else is the state DB itself, bound to it (kysely's private fields need `this`).
 */
export function scopedToSchema(db: StateDb, schema: string): StateDb {
  const introspection = new SchemaIntrospector(db, schema);
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The schemas by name, and the tables and views of one schema (without their columns). */
class SchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: StateDb,
    private readonly schema: string,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(
      this.db,
    );
    return rows.map((row) => ({ name: row.name }));
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; isView: boolean }>`
      select table_name as name, table_type = 'VIEW' as "isView"
      from information_schema.tables where table_schema = ${this.schema}`.execute(this.db);
    return rows.map((row) => ({
      name: row.name,
      schema: this.schema,
      isView: row.isView,
      isForeign: false,
      columns: [],
    }));
  }
}
