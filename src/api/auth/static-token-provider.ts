import { createHash } from 'node:crypto';
import { LoginRequiredError } from '../errors.js';
import type { TokenProvider } from './types.js';

/**
 * A non-secret, stable key for a token's rate budget: the first 16 hex digits of its SHA-256.
 * The API's budget is per access token, so a rotated token starts a new budget.
 */
export const budgetKeyOf = (token: string) =>
  `at:${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;

/**
 * `RECEIVABLES_ACCESS_TOKEN`: a ready bearer token for trials. It cannot be refreshed: when the API
 * refuses it, only a new token (or `auth login`) helps.
 */
export class StaticTokenProvider implements TokenProvider {
  readonly #token: string;

  readonly #envName: string;

  /** @param props.envName the variable it came from (default RECEIVABLES_ACCESS_TOKEN), for messages. */
  constructor(props: { accessToken: string; envName?: string | undefined }) {
    this.#envName = props.envName ?? 'RECEIVABLES_ACCESS_TOKEN';
    if (props.accessToken.trim() === '') throw new LoginRequiredError(`${this.#envName} is empty`);
    this.#token = props.accessToken.trim();
  }

  async getAccessToken(): Promise<string> {
    return this.#token;
  }

  async invalidate(_token: string): Promise<string> {
    throw new LoginRequiredError(
      `The API refused the access token given in ${this.#envName}`,
      `Fix or unset ${this.#envName}: while it is set, it is used before any stored login.`,
    );
  }

  budgetKey(token: string): string {
    return budgetKeyOf(token);
  }
}
