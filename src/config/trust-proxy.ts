import { isIP } from 'node:net';
import { z } from 'zod';

/** The names `proxy-addr` (Fastify's `trustProxy`) knows for address ranges. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR (`10.0.0.0/8`, `fd00::/8`) or one of the named ranges above. */
export function isProxyAddress(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

const addressList = z
  .array(
    z
      .string()
      .trim()
      .refine(isProxyAddress, 'not an address, a CIDR, nor loopback / linklocal / uniquelocal'),
  )
  .min(1, 'list at least one address, or write true / false');

/**
 * `dashboard.trustProxy` (`DASHBOARD_TRUST_PROXY`): whom to believe about `X-Forwarded-For`,
 * `-Proto` and `-Host`. `false` (default): nobody, the headers are ignored. `true`: whoever
 * connects (only when the dashboard is reachable through the proxy alone). A list (or one
 * comma-separated string) of addresses, CIDRs or `loopback` / `linklocal` / `uniquelocal`: the
 * proxies' own addresses. The strings `"true"` and `"false"` are the booleans (an environment
 * variable has no other way to say them). No hop count: Fastify 5 cannot tell the proxy from the
 * client with one, and ignores the headers then.
 */
export const trustProxySchema = z
  .union(
    [
      z.boolean(),
      // One string, as DASHBOARD_TRUST_PROXY gives it: "true", "false", or "10.0.0.1, loopback".
      z
        .string()
        .transform((text) => {
          const word = text.trim().toLowerCase();
          return word === 'true' || word === 'false'
            ? word === 'true'
            : text.split(',').map((part) => part.trim());
        })
        .pipe(z.union([z.boolean(), addressList])),
      addressList,
    ],
    { error: "true, false, or the proxies' addresses: a list, or one comma-separated string" },
  )
  .default(false);

export type TrustProxy = z.infer<typeof trustProxySchema>;
