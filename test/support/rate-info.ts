import type { RateInfo } from '../../src/api/rate-limit/types.js';

/**
 * A response telling the policy and the server's count: by default nothing counted yet (`r = q`),
 * which ends a limiter's slow start; `extra` overrides any field (`remaining: undefined` for an
 * answer without a count).
 */
export const rateInfo = (quota: number, windowSeconds: number, extra: Partial<RateInfo> = {}): RateInfo => ({
  status: 200,
  policy: { name: 'public-api', quota, windowSeconds },
  remaining: quota,
  resetSeconds: 0,
  ...extra,
});
