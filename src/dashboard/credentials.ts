import { createHash, timingSafeEqual } from 'node:crypto';
import { DashboardConfigError } from './errors.js';

/** What the dashboard requires: `DASHBOARD_USER` and `DASHBOARD_PASSWORD`. */
export interface DashboardCredentials {
  user: string;
  password: string;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Compares in constant time (both sides hashed first, so lengths leak nothing either). */
export function credentialsMatch(expected: DashboardCredentials, user: string, password: string): boolean {
  const userOk = timingSafeEqual(digest(expected.user), digest(user));
  const passwordOk = timingSafeEqual(digest(expected.password), digest(password));
  return userOk && passwordOk;
}

/** `Authorization: Basic base64(user:password)` → the pair, or null. */
export function parseBasicAuthorization(
  header: string | undefined,
): { user: string; password: string } | null {
  if (!header) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** `127.0.0.1` (and all of 127/8), `::1`, `localhost`: reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return (
    bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare) || bare === '::ffff:127.0.0.1'
  );
}

/**
 * The credentials of the environment, checked once at start: both or none; none is allowed on a
 * loopback address only.
 *
 * @throws DashboardConfigError `DASHBOARD_CREDENTIALS_INCOMPLETE`, `DASHBOARD_CREDENTIALS_REQUIRED`
 */
export function resolveCredentials(input: {
  user: string | undefined;
  password: string | undefined;
  host: string;
}): DashboardCredentials | undefined {
  const { user, password, host } = input;
  if (Boolean(user) !== Boolean(password)) {
    throw new DashboardConfigError(
      'DASHBOARD_CREDENTIALS_INCOMPLETE',
      `set both DASHBOARD_USER and DASHBOARD_PASSWORD (only ${user ? 'DASHBOARD_USER' : 'DASHBOARD_PASSWORD'} is set)`,
    );
  }
  if (user && password) return { user, password };
  assertServable(host, undefined);
  return undefined;
}

/** @throws DashboardConfigError `DASHBOARD_CREDENTIALS_REQUIRED` beyond loopback without credentials. */
export function assertServable(host: string, credentials: DashboardCredentials | undefined): void {
  if (credentials || isLoopbackHost(host)) return;
  throw new DashboardConfigError(
    'DASHBOARD_CREDENTIALS_REQUIRED',
    `the dashboard would listen on ${host}, beyond this machine, without credentials: set DASHBOARD_USER and DASHBOARD_PASSWORD, or DASHBOARD_HOST=127.0.0.1`,
  );
}
