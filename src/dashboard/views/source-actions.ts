import { html, type SafeHtml } from './html.js';

export interface SourceActionsProps {
  sourceId: string;
  csrfToken: string;
  /** Queues in this process (the worker): without them, only Pause, Resume and Cancel work. */
  actionsEnabled: boolean;
  paused: boolean;
  openFailures: number;
  /** The run in progress, which Cancel stops (none: no Cancel button). */
  runningRunId?: string | null | undefined;
  /** `source`: the forms say so (`back=source`), and the answer comes back to the source's page. */
  back?: 'source' | undefined;
}

/**
 * The buttons of a source's actions, the same on the sync page's card and on the source's page:
 * each a form posting to `/actions/sources/:id/:action` (see action-routes.ts) with the page's CSRF
 * token. Re-sync, Full re-sync and Retry failures need the queues and an active source; Cancel
 * shows while a pass runs.
 */
export function sourceActionForms(p: SourceActionsProps): SafeHtml {
  const off = !p.actionsEnabled || p.paused;
  const why = !p.actionsEnabled
    ? 'no queues: start the worker (REDIS_URL) to run actions'
    : p.paused
      ? 'paused: resume it first'
      : '';
  const action = (
    name: string,
    label: string,
    options: { disabled?: boolean; confirm?: string; primary?: boolean } = {},
  ) =>
    html`<form method="post" action="/actions/sources/${encodeURIComponent(p.sourceId)}/${name}" class="inline"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}><input type="hidden" name="_csrf" value="${p.csrfToken}">${p.back ? html`<input type="hidden" name="back" value="${p.back}">` : ''}<button type="submit" name="action" value="${name}"${options.primary ? html` class="primary"` : ''}${options.disabled ? html` disabled title="${why}"` : ''}>${label}</button></form>`;
  return html`${action('resync', 'Re-sync', { disabled: off, primary: true })}
${action('full-resync', 'Full re-sync', { disabled: off, confirm: `Full re-sync of ${p.sourceId}: forget its hashes and cursors and compare every record again (no duplicates are created). Continue?` })}
${action('retry-failures', 'Retry failures', { disabled: off || p.openFailures === 0 })}
${p.paused ? action('resume', 'Resume') : action('pause', 'Pause', { confirm: `Pause ${p.sourceId}? Schedules, file polling and actions stop until it is resumed.` })}
${p.runningRunId ? action('cancel', 'Cancel run', { confirm: `Cancel the running pass of ${p.sourceId}? It stops before its next batch; the file under way goes back to the drop folder for a later pass.` }) : ''}`;
}
