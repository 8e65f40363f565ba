import { Ajv, type ValidateFunction } from 'ajv';
import type { JsonObject } from './singer-messages.js';

/**
 * Checks RECORDs against their stream's SCHEMA (JSON Schema, as Singer taps write it: mostly draft 4
 * without `$schema`, `"type": ["null", "string"]`, `format: date-time`). Formats are not asserted
 * (the contract's own checks read the dates); keywords Ajv does not know are ignored. A SCHEMA Ajv
 * cannot compile (a draft-4 boolean `exclusiveMaximum`) is not held against the tap: its records
 * are then checked by the contract's checks alone, and the source logs that once.
 */
export class SchemaCheck {
  readonly #ajv = new Ajv({
    strict: false,
    validateFormats: false,
    allErrors: false,
    multipleOfPrecision: 8,
  });
  readonly #validators = new Map<string, ValidateFunction | null>();
  /** The streams whose SCHEMA could not be compiled, with why. */
  readonly uncompiled = new Map<string, string>();

  /** A stream's SCHEMA message (a later one replaces it). */
  setSchema(stream: string, schema: JsonObject): void {
    try {
      const { $schema: _ignored, ...rest } = schema;
      this.#validators.set(stream, this.#ajv.compile(checkable(rest) as JsonObject));
      this.uncompiled.delete(stream);
    } catch (error) {
      this.#validators.set(stream, null);
      this.uncompiled.set(stream, (error as Error).message);
    }
  }

  hasSchema(stream: string): boolean {
    return this.#validators.has(stream);
  }

  /** Why the record does not match its stream's SCHEMA, or null when it does (or cannot be checked). */
  problem(stream: string, record: JsonObject): string | null {
    const validate = this.#validators.get(stream);
    if (!validate || validate(record)) return null;
    const first = validate.errors?.[0];
    if (!first) return 'does not match its SCHEMA';
    const where = first.instancePath === '' ? 'the record' : first.instancePath.slice(1).replaceAll('/', '.');
    return `does not match its stream's SCHEMA: ${where} ${first.message ?? 'is invalid'}`;
  }
}

/**
 * A tap's schema as Ajv should check it: draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum`
 * (tap-xero's schemas) in the later drafts' form (`{ minimum: 0, exclusiveMinimum: true }` ->
 * `{ exclusiveMinimum: 0 }`), and without `multipleOf`: tap-xero's `multipleOf: 1e-05` on floats
 * fails for 4.35 or 1234567.89 once they are JS numbers (4.35 / 1e-05 is not an integer in binary
 * floating point). The amounts the contract takes are checked exactly, from their text, instead.
 */
function checkable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(checkable);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) if (key !== 'multipleOf') out[key] = checkable(value);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] !== 'boolean') continue;
    if (out[flag] === true && typeof out[bound] === 'number') {
      out[flag] = out[bound];
      delete out[bound];
    } else delete out[flag];
  }
  return out;
}
