import type { FaultConfig } from './options.js';

/** Decisions drawn from the fault configuration, one per request. */
export class FaultInjector {
  constructor(
    public config: FaultConfig,
    private readonly random: () => number,
  ) {}

  /** A status to answer instead of running the request, or undefined. */
  injectedError(): number | undefined {
    const { errorRate, errorStatuses } = this.config;
    if (errorRate <= 0 || errorStatuses.length === 0 || this.random() >= errorRate) return undefined;
    return errorStatuses[Math.floor(this.random() * errorStatuses.length)] ?? errorStatuses[0];
  }

  /** Seconds of a forced 429, consuming one of the configured ones, or undefined. */
  forced429(): number | undefined {
    if (this.config.force429 <= 0) return undefined;
    this.config.force429--;
    return this.config.force429RetryAfter;
  }

  dropAfterCommit(): boolean {
    return this.config.dropAfterCommitRate > 0 && this.random() < this.config.dropAfterCommitRate;
  }

  update(patch: Partial<FaultConfig>): FaultConfig {
    this.config = { ...this.config, ...patch };
    return this.config;
  }
}
