import type { RunView } from '../status.js';
import { html, type SafeHtml } from './html.js';

/**
 * The files a run could not read, in a runs table's error cell: `could not read invoices.csv: <why>`,
 * one per line (the run reads `partial`).
 */
export function rejectedFilesNote(run: Pick<RunView, 'rejectedFiles' | 'error'>): SafeHtml | '' {
  if (run.rejectedFiles.length === 0) return '';
  return html`${run.error ? html`<br>` : ''}${run.rejectedFiles.map(
    (f, i) =>
      html`${i > 0 ? html`<br>` : ''}<span class="bad" data-rejected-file="${f.file}">could not read <code>${f.file}</code>: ${f.reason}</span>`,
  )}`;
}

/**
 * The run page's list of the files the run could not read: each with its reason, where it waits and
 * what fixes it. Nothing when it read every file it took.
 */
export function rejectedFilesSection(run: Pick<RunView, 'rejectedFiles'>): SafeHtml | '' {
  if (run.rejectedFiles.length === 0) return '';
  return html`<section id="run-rejected-files" class="card">
  <h2>Files it could not read <span class="count">${run.rejectedFiles.length}</span></h2>
  <p class="muted small">No row of these was synced. Each was set aside in the drop folder's <code>rejected/</code> with <code>&lt;name&gt;.reason.txt</code>: fix the file, or the source's <code>files</code>, <code>format</code> or <code>columns</code>, and drop it again; its failure is resolved once it is read.</p>
  <table class="failures" id="run-rejected-files-table"><thead><tr><th>file</th><th>why it could not be read</th></tr></thead>
  <tbody>${run.rejectedFiles.map(
    (f) =>
      html`<tr data-rejected-file="${f.file}"><td><code>${f.file}</code></td><td class="message bad">${f.reason}</td></tr>`,
  )}</tbody></table>
</section>`;
}
