import { API_PREFIX } from '../requests.js';

export interface AccessTokenCheckProps {
  /** `{base_url}` of the API. */
  baseUrl: string;
  accessToken: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** Whether the API takes the token, in words (`detail`) a terminal can show. */
export interface AccessTokenCheck {
  /** The API accepted the token (an answer other than 401). */
  works: boolean;
  detail: string;
}

/**
 * Checks a ready access token (`RECEIVABLES_ACCESS_TOKEN`) with one authenticated read,
 * `GET /organizations`, the cheapest read every token may make: `works` once the API accepts it
 * (a 403, a scope missing for that read, is still a token the API knows). Never throws; the token
 * is never part of `detail`.
 *
 * @example
 * const { works, detail } = await checkAccessToken({ baseUrl, accessToken });
 */
export async function checkAccessToken(props: AccessTokenCheckProps): Promise<AccessTokenCheck> {
  const url = `${props.baseUrl.replace(/\/+$/, '')}${API_PREFIX}/organizations`;
  let response: Response;
  try {
    response = await (props.fetch ?? fetch)(url, {
      headers: { accept: 'application/json', authorization: `Bearer ${props.accessToken}` },
      signal: AbortSignal.timeout(props.timeoutMs ?? 30_000),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return {
      works: false,
      detail: `not checked: the API at ${props.baseUrl} did not answer (${(error as Error).message}${cause})`,
    };
  }
  await response.body?.cancel();
  if (response.status === 401)
    return { works: false, detail: `the API at ${props.baseUrl} refused it (401)` };
  if (response.status === 403)
    return {
      works: true,
      detail: `the API at ${props.baseUrl} accepts it, but it may not list organizations (403: the organizations:read scope)`,
    };
  if (!response.ok)
    return {
      works: false,
      detail: `not checked: GET ${API_PREFIX}/organizations at ${props.baseUrl} answered ${response.status}`,
    };
  return { works: true, detail: `the API at ${props.baseUrl} accepts it` };
}
