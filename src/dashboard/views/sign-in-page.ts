import { html, type SafeHtml } from './html.js';
import { banner, layout } from './layout.js';

export interface SignInPageProps {
  /** Where to go after signing in (a path of this dashboard). */
  next: string;
  error: string | null;
}

/** The sign-in form (also the body of a 401 answered to a browser). */
export function signInPage(props: SignInPageProps): SafeHtml {
  return layout({
    title: 'Sign in',
    user: null,
    signedIn: false,
    csrfToken: null,
    hasQueues: false,
    banners: props.error ? [banner('error', props.error)] : [],
    body: html`<section class="card narrow">
  <h1>Sign in</h1>
  <p class="muted">The credentials are <code>DASHBOARD_USER</code> and <code>DASHBOARD_PASSWORD</code> of the process serving this dashboard.</p>
  <form method="post" action="/login" class="stack">
    <input type="hidden" name="next" value="${props.next}">
    <label>User <input name="user" autocomplete="username" required autofocus></label>
    <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
    <button type="submit" class="primary">Sign in</button>
  </form>
</section>`,
  });
}

/** A refusal page (403 and similar) for browsers. */
export function refusalPage(title: string, message: string): SafeHtml {
  return layout({
    title,
    user: null,
    signedIn: false,
    csrfToken: null,
    hasQueues: false,
    banners: [banner('error', message)],
    body: html`<p><a href="/">Back to the dashboard</a></p>`,
  });
}
