/** Gives the API client a valid access token, whatever the way it was obtained. */
export interface TokenProvider {
  /** A usable access token, refreshed ahead of expiry when the provider can refresh. */
  getAccessToken(): Promise<string>;
  /**
   * The server refused `token` with a 401: refresh once (single-flight across processes) and return
   * a new token, or throw `LoginRequiredError` when that is impossible.
   */
  invalidate(token: string): Promise<string>;
  /** A stable, non-secret key for the token's rate budget (e.g. a hash). */
  budgetKey(token: string): string;
}
