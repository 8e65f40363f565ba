import type { RunView } from '../status.js';
import { html, type SafeHtml } from './html.js';

/**
 * The drop files a run left because they were still being written, in a runs table's error cell or
 * under a last run's counts: `2 files still being written, left for a later pass: a.csv, b.csv`.
 */
export function waitingFilesNote(run: Pick<RunView, 'waitingFiles'>): SafeHtml | '' {
  const w = run.waitingFiles;
  if (!w) return '';
  const n = w.files.length;
  return html`<br><span class="muted" data-field="waiting-files">${n} file${n === 1 ? '' : 's'} still being written (taken once unchanged for ${w.stableSeconds} s), left for a later pass: ${w.files.map((f, i) => html`${i > 0 ? ', ' : ''}<code>${f}</code>`)}</span>`;
}
