import type { ServiceStatus } from '../types.js';
import type { EndpointContext, ReadOptions } from './shared.js';

/** `GET /status`: answers without authentication (no token is sent, no rate budget is used). */
export class StatusEndpoint {
  readonly #ctx: EndpointContext;

  constructor(ctx: EndpointContext) {
    this.#ctx = ctx;
  }

  async get(options: ReadOptions = {}): Promise<ServiceStatus> {
    const result = await this.#ctx.http.send<ServiceStatus>({
      method: 'GET',
      path: '/status',
      authenticated: false,
      signal: options.signal,
    });
    return result.data;
  }
}
