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

  constructor(props: { accessToken: string }) {
    if (props.accessToken.trim() === '') throw new LoginRequiredError('RECEIVABLES_ACCESS_TOKEN is empty');
    this.#token = props.accessToken.trim();
  }

  async getAccessToken(): Promise<string> {
    return this.#token;
  }

  async invalidate(_token: string): Promise<string> {
    throw new LoginRequiredError(
      'The API refused the access token given in RECEIVABLES_ACCESS_TOKEN',
      'Fix or unset RECEIVABLES_ACCESS_TOKEN: while it is set, it is used before any stored login.',
    );
  }

  budgetKey(token: string): string {
    return budgetKeyOf(token);
  }
}
