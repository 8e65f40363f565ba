import type { FastifyRequest } from 'fastify';
import type { DashboardAuth } from './auth.js';
import { renderNotice } from './notices.js';
import { type HtmlValue, html, type SafeHtml } from './views/html.js';
import { layout } from './views/layout.js';

/** What every page of a signed-in user is framed with. */
export interface SignedInPageProps {
  auth: DashboardAuth;
  /** The configured sources: a notice (`?notice=…&source=…`) names only one of them. */
  sourceIds: ReadonlySet<string>;
  hasQueues: boolean;
}

/**
 * The page of a signed-in user: the layout with their name and form token, the notice the query
 * carries (a redirect after an action) first, then the page's own banners.
 */
export function signedInPage(props: SignedInPageProps) {
  return (
    request: FastifyRequest,
    title: string,
    body: HtmlValue,
    banners: readonly HtmlValue[] = [],
  ): string => {
    const notice = renderNotice(request.query as Record<string, unknown>, props.sourceIds);
    const own: SafeHtml[] = banners.map((b) => html`${b}`);
    return layout({
      title,
      user: props.auth.principal(request).user,
      signedIn: true,
      csrfToken: props.auth.csrfToken(request),
      hasQueues: props.hasQueues,
      banners: notice ? [notice, ...own] : own,
      body,
    }).value;
  };
}
