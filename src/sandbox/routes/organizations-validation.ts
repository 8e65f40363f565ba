import { badRequest } from '../errors.js';

/** Request-body checks shared by the organization and user routes; every 400 names the field. */

export type JsonObject = Record<string, unknown>;

const isPlainObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value);

/**
 * The body as a JSON object whose keys are all in `allowed`. Unknown keys are refused rather than
 * ignored, so a typo never looks like a successful update.
 */
export function objectBody(body: unknown, allowed: readonly string[], what = 'body'): JsonObject {
  if (!isPlainObject(body)) throw badRequest(`The ${what} must be a JSON object`);
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw badRequest(
      `Unknown field(s) in the ${what}: ${unknown.join(', ')}; accepted: ${allowed.join(', ')}`,
    );
  }
  return body;
}

/** Like `objectBody`, and at least one accepted field must be present. */
export function nonEmptyObjectBody(body: unknown, allowed: readonly string[], what = 'body'): JsonObject {
  const object = objectBody(body, allowed, what);
  if (Object.keys(object).length === 0) {
    throw badRequest(`The ${what} must contain at least one of: ${allowed.join(', ')}`);
  }
  return object;
}

/** A trimmed, non-empty string of at most `maxLength` characters. */
export function requiredText(value: unknown, field: string, maxLength: number): string {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  const text = value.trim();
  if (text.length === 0) throw badRequest(`${field} must not be empty`);
  if (text.length > maxLength) throw badRequest(`${field} must be at most ${maxLength} characters`);
  return text;
}

/** A string (kept as sent) or null; used where null clears the value. */
export function nullableText(value: unknown, field: string, maxLength: number): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw badRequest(`${field} must be a string or null`);
  if (value.length > maxLength) throw badRequest(`${field} must be at most ${maxLength} characters`);
  return value;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An e-mail address: trimmed, one `@`, a dotted domain, at most 254 characters. */
export function emailAddress(value: unknown, field = 'email'): string {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  const email = value.trim();
  if (email.length > 254 || !EMAIL_RE.test(email)) {
    throw badRequest(`${field} is not a valid e-mail address: "${value}"`);
  }
  return email;
}

const DOMAIN_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** A DNS domain name such as `acme.example`, lower-cased. */
export function domainName(value: unknown, field: string): string {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  const domain = value.trim().toLowerCase();
  if (!DOMAIN_RE.test(domain)) throw badRequest(`${field} is not a domain name: "${value}"`);
  return domain;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID_RE.test(value);

const INTEGER_RE = /^\d+$/;

/** An integer query parameter within [min, max], or `fallback` when absent. */
export function integerParam(
  raw: unknown,
  field: string,
  bounds: { min: number; max: number; fallback: number },
): number {
  if (raw === undefined) return bounds.fallback;
  const value = typeof raw === 'string' && INTEGER_RE.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < bounds.min || value > bounds.max) {
    const range = Number.isFinite(bounds.max) ? `from ${bounds.min} to ${bounds.max}` : `>= ${bounds.min}`;
    throw badRequest(`${field} must be an integer ${range}, got "${String(raw)}"`);
  }
  return value;
}
