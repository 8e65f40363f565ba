import { badRequest } from '../errors.js';
import type { LetterDetails, Organization } from '../model.js';
import { nonEmptyObjectBody, nullableText, objectBody } from './organizations-validation.js';

/**
 * Organization settings. The spec shows only `letterDetails` (four fields, replaced whole); the
 * other fields are the sandbox's choice. Every field is nullable: null means "cleared".
 */
export interface SettingsView {
  /** ISO 4217 code such as `EUR`. */
  defaultCurrency: string | null;
  /** IANA time zone such as `Europe/Paris`. */
  timezone: string | null;
  dunningEnabled: boolean | null;
  letterDetails: LetterDetails | null;
}

export const SETTINGS_FIELDS = ['defaultCurrency', 'timezone', 'dunningEnabled', 'letterDetails'] as const;
export const LETTER_DETAILS_FIELDS = ['senderName', 'senderAddress', 'signature', 'footer'] as const;

type Settings = Organization['settings'];

const stringOrNull = (value: unknown) => (typeof value === 'string' ? value : null);

export function settingsView(settings: Settings): SettingsView {
  return {
    defaultCurrency: stringOrNull(settings.defaultCurrency),
    timezone: stringOrNull(settings.timezone),
    dunningEnabled: typeof settings.dunningEnabled === 'boolean' ? settings.dunningEnabled : null,
    letterDetails: settings.letterDetails,
  };
}

function currencyCode(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !/^[A-Z]{3}$/.test(value)) {
    throw badRequest('defaultCurrency must be a three-letter upper-case currency code (e.g. EUR) or null');
  }
  return value;
}

function timeZone(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.length === 0) {
    throw badRequest('timezone must be an IANA time zone name (e.g. Europe/Paris) or null');
  }
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
  } catch {
    throw badRequest(`timezone is not a known IANA time zone: "${value}"`);
  }
  return value;
}

function nullableBoolean(value: unknown, field: string): boolean | null {
  if (value !== null && typeof value !== 'boolean') throw badRequest(`${field} must be a boolean or null`);
  return value;
}

/** A whole `letterDetails` object: a field omitted inside it is cleared (null), never kept. */
function letterDetails(value: unknown): LetterDetails | null {
  if (value === null) return null;
  const body = objectBody(value, LETTER_DETAILS_FIELDS, 'letterDetails object');
  const field = (name: (typeof LETTER_DETAILS_FIELDS)[number]) =>
    body[name] === undefined ? null : nullableText(body[name], `letterDetails.${name}`, 2000);
  return {
    senderName: field('senderName'),
    senderAddress: field('senderAddress'),
    signature: field('signature'),
    footer: field('footer'),
  };
}

/**
 * The settings update a body asks for: only the fields present, each validated. Nothing is
 * applied until the whole body is valid.
 */
export function parseSettingsUpdate(body: unknown): Partial<SettingsView> {
  const input = nonEmptyObjectBody(body, SETTINGS_FIELDS, 'settings body');
  const update: Partial<SettingsView> = {};
  if ('defaultCurrency' in input) update.defaultCurrency = currencyCode(input.defaultCurrency);
  if ('timezone' in input) update.timezone = timeZone(input.timezone);
  if ('dunningEnabled' in input)
    update.dunningEnabled = nullableBoolean(input.dunningEnabled, 'dunningEnabled');
  if ('letterDetails' in input) update.letterDetails = letterDetails(input.letterDetails);
  return update;
}

/** Applies a parsed update: present fields replace (null clears), absent fields are kept. */
export function applySettings(org: Organization, update: Partial<SettingsView>): void {
  org.settings = { ...org.settings, ...update };
}
