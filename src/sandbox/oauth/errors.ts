/** OAuth error codes this server answers with (RFC 6749 §4.1.2.1 and §5.2). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'access_denied';

/**
 * An error in OAuth's own shape `{error, error_description}`, not the Public API's error body:
 * OAuth clients parse the token endpoint's errors with their OAuth library.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** RFC 6749 §5.2: 400, except invalid_client which is 401. */
    readonly status = error === 'invalid_client' ? 401 : 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  toJSON() {
    return { error: this.error, error_description: this.description };
  }
}

/**
 * One parameter of an OAuth request. Parameters must not be repeated (RFC 6749 §3.1), so a
 * repeated one (an array after parsing) is an invalid request; a blank one counts as absent.
 */
export function oauthParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string')
    throw new OAuthError('invalid_request', `${name} must be sent once, as a string`);
  return value;
}

export function requiredParam(params: Record<string, unknown>, name: string): string {
  const value = oauthParam(params, name);
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}
