/**
 * Validation of request input for the account and document routes. Every failure is a 400 whose
 * message names the field, so a client can fix its request without guessing.
 */

import { isDecimal, normalizeDecimal, parseDecimal } from '../../domain/decimal.js';
import { badRequest } from '../errors.js';
import { isCalendarDate } from '../lists/index.js';
import type { Address, DateParts } from '../model.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CURRENCY_RE = /^[A-Z]{3}$/;
const COUNTRY_RE = /^[A-Z]{2}$/;
const INTEGER_RE = /^-?\d+$/;
const ISO_DATETIME_RE =
  /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Longest accepted names, numbers and ids: a filter value may hold 200 characters at most. */
export const MAX_TEXT_LENGTH = 200;

export type Fields = Record<string, unknown>;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);

/** The `organizationId` query parameter of a list: required, a uuid. */
export function organizationIdParam(query: unknown): string {
  const value = (query as Fields | undefined)?.organizationId;
  if (value === undefined || value === '') throw badRequest('organizationId is required');
  if (!isUuid(value)) throw badRequest(`organizationId must be a uuid, got "${String(value)}"`);
  return value;
}

/** The body as a plain object (JSON or multipart fields); anything else is a 400. */
export function objectBody(body: unknown, what = 'request body'): Fields {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw badRequest(`${what} must be a JSON object`);
  }
  return body as Fields;
}

/** Refuses fields the endpoint does not know, rather than ignoring them silently. */
export function rejectUnknownFields(body: Fields, allowed: readonly string[], where = ''): void {
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw badRequest(
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${where}${k}"`).join(', ')}; accepted: ${allowed.join(', ')}`,
    );
  }
}

/** A required, non-blank string of at most `max` characters, trimmed. */
export function requiredText(value: unknown, field: string, max = MAX_TEXT_LENGTH): string {
  if (value === undefined || value === null) throw badRequest(`${field} is required`);
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  const text = value.trim();
  if (text === '') throw badRequest(`${field} must not be empty`);
  if ([...text].length > max) throw badRequest(`${field} must be at most ${max} characters`);
  return text;
}

/** An optional string; absent, null or blank give null. */
export function optionalText(value: unknown, field: string, max = MAX_TEXT_LENGTH): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badRequest(`${field} must be a string or null`);
  const text = value.trim();
  if ([...text].length > max) throw badRequest(`${field} must be at most ${max} characters`);
  return text === '' ? null : text;
}

/** An ISO 4217 code: three uppercase letters. */
export function currencyCodeInput(value: unknown, field = 'currencyCode'): string {
  const code = requiredText(value, field, 3);
  if (!CURRENCY_RE.test(code))
    throw badRequest(`${field} must be an ISO 4217 code of three uppercase letters`);
  return code;
}

/** A country as an ISO 3166 alpha-2 code, or null. */
export function countryInput(value: unknown, field: string): string | null {
  const code = optionalText(value, field, 2);
  if (code !== null && !COUNTRY_RE.test(code)) {
    throw badRequest(`${field} must be a two-letter country code (ISO 3166 alpha-2), got "${code}"`);
  }
  return code;
}

export const EMPTY_ADDRESS: Address = { street: null, city: null, postalCode: null, country: null };
const ADDRESS_FIELDS = ['street', 'city', 'postalCode', 'country'] as const;

/** A JSON billing address; absent or null give the empty address. */
export function addressInput(value: unknown, field = 'billingAddress'): Address {
  if (value === undefined || value === null) return { ...EMPTY_ADDRESS };
  const body = objectBody(value, field);
  rejectUnknownFields(body, ADDRESS_FIELDS, `${field}.`);
  return {
    street: optionalText(body.street, `${field}.street`),
    city: optionalText(body.city, `${field}.city`),
    postalCode: optionalText(body.postalCode, `${field}.postalCode`, 20),
    country: countryInput(body.country, `${field}.country`),
  };
}

/** An ISO 8601 datetime with a zone, normalized to UTC; absent gives `fallback`. */
export function datetimeInput(value: unknown, field: string, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  const match = typeof value === 'string' ? ISO_DATETIME_RE.exec(value) : null;
  // Date.parse rolls 2026-02-30 over to March: the calendar day is checked on its own.
  if (typeof value !== 'string' || !match || !isCalendarDate(match[1]!) || Number.isNaN(Date.parse(value))) {
    throw badRequest(`${field} must be an ISO 8601 datetime with a zone, e.g. 2026-01-31T09:30:00Z`);
  }
  return new Date(value).toISOString();
}

/** A decimal amount written as a string (never a JSON number: floats are not money), ≥ 0. */
export function amountInput(value: unknown, field: string): string {
  if (value === undefined || value === null || value === '') throw badRequest(`${field} is required`);
  if (typeof value !== 'string' || !isDecimal(value.trim())) {
    throw badRequest(`${field} must be a decimal amount written as a string, e.g. "120.50"`);
  }
  if (parseDecimal(value) < 0n) throw badRequest(`${field} must not be negative`);
  return normalizeDecimal(value.trim());
}

/** One integer part of a date, sent as a number (JSON) or a string (multipart). */
function datePart(value: unknown, field: string): number {
  if (value === undefined || value === null || value === '') throw badRequest(`${field} is required`);
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !INTEGER_RE.test(text.trim()))
    throw badRequest(`${field} must be an integer`);
  return Number(text);
}

/** A calendar date from its three parts; month 13 or February 30 are refused, naming the part. */
export function datePartsInput(
  parts: { year: unknown; month: unknown; day: unknown },
  field: string,
): DateParts {
  const year = datePart(parts.year, `${field}.year`);
  const month = datePart(parts.month, `${field}.month`);
  const day = datePart(parts.day, `${field}.day`);
  if (year < 1900 || year > 9999) throw badRequest(`${field}.year must be from 1900 to 9999, got ${year}`);
  if (month < 1 || month > 12) throw badRequest(`${field}.month must be from 1 to 12, got ${month}`);
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > lastDay) {
    throw badRequest(
      `${field}.day must be from 1 to ${lastDay} for ${year}-${String(month).padStart(2, '0')}, got ${day}`,
    );
  }
  return { year, month, day };
}

/** A JSON date object `{year, month, day}`. */
export function dateObjectInput(value: unknown, field: string): DateParts {
  const body = objectBody(value, field);
  rejectUnknownFields(body, ['year', 'month', 'day'], `${field}.`);
  return datePartsInput({ year: body.year, month: body.month, day: body.day }, field);
}
