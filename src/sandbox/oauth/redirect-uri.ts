/** Hosts a native app's loopback redirect may use (RFC 8252 §7.3; `localhost` is tolerated). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Whether `value` is an acceptable redirect URI: plain `http` on a loopback host, any port
 * (RFC 8252 §7.3: the port is chosen at run time), any path and query, no fragment and no
 * user info (RFC 6749 §3.1.2). Only loopback is accepted because the sandbox serves local
 * command-line clients and has no client registration.
 */
export function isLoopbackRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return false;
  if (url.username || url.password || value.includes('#')) return false;
  return true;
}

/** `redirectUri` plus the given parameters, keeping the query the client registered. */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
