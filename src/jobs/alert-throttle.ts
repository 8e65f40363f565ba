import type { Redis } from 'ioredis';
import type { AlertThrottle } from '../alerts/ports.js';

/**
 * Holds back repeated alerts across every process sharing the Redis: a key per throttled alert,
 * `<prefix>:alerts:throttle:<key>`, set if absent with the window as its time to live.
 */
export class RedisAlertThrottle implements AlertThrottle {
  constructor(private readonly props: { redis: Redis; prefix: string }) {}

  async claim(key: string, windowMs: number): Promise<boolean> {
    const set = await this.props.redis.set(
      `${this.props.prefix}:alerts:throttle:${key}`,
      String(Date.now()),
      'PX',
      Math.max(1, Math.round(windowMs)),
      'NX',
    );
    return set === 'OK';
  }
}
