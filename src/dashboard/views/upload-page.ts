import type { SourceConfig } from '../../config/schema.js';
import { STREAM_ORDER, streamNoun } from '../../domain/records.js';
import type { UploadPreview, UploadView } from '../drop-uploads.js';
import { KIND_LABEL, when } from './format.js';
import { html, type SafeHtml } from './html.js';

/** The pages of the uploads to a CSV source's drop folder (see upload-routes.ts). */

export const uploadPagePath = (sourceId: string): string => `/sources/${encodeURIComponent(sourceId)}/upload`;
export const uploadPath = (sourceId: string, id: string): string =>
  `/sources/${encodeURIComponent(sourceId)}/uploads/${id}`;

const STREAM_LABEL: Readonly<Record<string, string>> = Object.fromEntries(
  STREAM_ORDER.map((stream) => [stream, streamNoun(stream)]),
);

/** `2.4 MB`, `812 KB`, `96 bytes`. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

export interface UploadPageProps {
  config: SourceConfig;
  csrfToken: string;
  now: Date;
  /** Null when this process takes no uploads (no worker): why, instead of the form. */
  unavailable: string | null;
  maxBytes: number;
  /** The names the source takes (`accounts*.csv, invoices*.csv, credit-notes*.csv`). */
  namesTaken: string;
  waiting: readonly UploadView[];
}

/** `/sources/:id/upload`: the form (a drop zone around a file input) and the uploads waiting. */
export function uploadPage(p: UploadPageProps): SafeHtml {
  const id = p.config.id;
  return html`<p class="crumbs"><a href="/">Sync</a> › <a href="/sources/${encodeURIComponent(id)}">${id}</a> › upload</p>
<h1 data-upload-page="${id}">Upload a file to ${id} <span class="tag">${p.config.type}</span></h1>
<link rel="stylesheet" href="/assets/upload.css">
<script src="/assets/upload.js" defer></script>
${
  p.unavailable
    ? html`<p class="banner banner-warn">${p.unavailable}</p>`
    : html`<section class="card" id="upload">
  <p>The file waits here until you choose: first a preview shows how its rows read, which would fail and what would be sent; then <b>Sync now</b> puts it in the drop folder and queues a pass, or <b>Discard</b> deletes it.</p>
  <form method="post" action="/sources/${encodeURIComponent(id)}/uploads" enctype="multipart/form-data" class="stack" id="upload-form">
    <input type="hidden" name="_csrf" value="${p.csrfToken}">
    <label class="dropzone" data-dropzone>
      <span class="dropzone-text">Drop a CSV file here, or choose one</span>
      <input type="file" name="file" accept=".csv,text/csv" required data-field="file">
    </label>
    <p class="muted small">Names taken: <code>${p.namesTaken}</code> · at most ${sizeText(p.maxBytes)} · the same checks as a file dropped in the folder.</p>
    <div><button type="submit" class="primary">Upload and preview</button></div>
  </form>
</section>`
}
<section id="uploads-waiting">
  <h2>Waiting for a decision <span class="count">${p.waiting.length}</span></h2>
  ${
    p.waiting.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<table><thead><tr><th>file</th><th>kind</th><th class="num">size</th><th>uploaded</th><th></th></tr></thead>
<tbody>${p.waiting.map(
          (u) =>
            html`<tr data-upload="${u.id}"><td><code>${u.name}</code></td><td>${STREAM_LABEL[u.kind]}</td><td class="num">${sizeText(u.size)}</td><td>${when(u.stagedAt.toISOString(), p.now)}</td><td><a href="${uploadPath(id, u.id)}">Preview</a></td></tr>`,
        )}</tbody></table>`
  }
</section>`;
}

export interface PreviewPageProps {
  config: SourceConfig;
  csrfToken: string;
  now: Date;
  preview: UploadPreview;
  /** Null when "Sync now" can queue a pass; else why not (paused, no queues). */
  whyNot: string | null;
}

/** `/sources/:id/uploads/:upload`: how the file reads, what would fail, the plan; Sync now, Discard. */
export function previewPage(p: PreviewPageProps): SafeHtml {
  const id = p.config.id;
  const { preview } = p;
  const { upload } = preview;
  const action = (what: string) => `${uploadPath(id, upload.id)}/${what}`;
  return html`<p class="crumbs"><a href="/">Sync</a> › <a href="/sources/${encodeURIComponent(id)}">${id}</a> › <a href="${uploadPagePath(id)}">upload</a> › preview</p>
<link rel="stylesheet" href="/assets/upload.css">
<h1 data-upload="${upload.id}"><code>${upload.name}</code> <span class="tag">${STREAM_LABEL[upload.kind]}</span></h1>
<p class="muted">${sizeText(upload.size)} · uploaded ${when(upload.stagedAt.toISOString(), p.now)} · nothing is sent or moved until you press Sync now.</p>
${preview.error ? html`<p class="banner banner-error" data-field="preview-error">The preview could not be made: ${preview.error}</p>` : ''}
${preview.refused ? html`<p class="banner banner-error" data-field="refused">The file would be set aside in <code>rejected/</code>, no row read: ${preview.refused}</p>` : ''}
${preview.duplicateOf ? html`<p class="banner banner-warn" data-field="duplicate">Same content as <code>${preview.duplicateOf.name}</code>, synced ${when(preview.duplicateOf.syncedAt.toISOString(), p.now)}: the pass would skip it.</p>` : ''}
${preview.warnings.map((w) => html`<p class="banner banner-warn" data-field="warning">${w}</p>`)}
<div class="actions upload-actions">
  <form method="post" action="${action('sync')}" class="inline"><input type="hidden" name="_csrf" value="${p.csrfToken}"><button type="submit" class="primary"${p.whyNot ? html` disabled title="${p.whyNot}"` : ''}>Sync now</button></form>
  <form method="post" action="${action('discard')}" class="inline"><input type="hidden" name="_csrf" value="${p.csrfToken}"><button type="submit">Discard</button></form>
  ${p.whyNot ? html`<span class="muted small">${p.whyNot}</span>` : ''}
</div>
<section id="preview-rows">
  <h2>How its first rows read</h2>
  ${
    preview.rows.length === 0
      ? html`<p class="muted">No row to show.</p>`
      : html`<table class="compact-rows"><thead><tr><th class="num">line</th><th>reads as</th></tr></thead>
<tbody>${preview.rows.map(
          (r) =>
            html`<tr data-line="${r.line ?? ''}"><td class="num">${r.line ?? ''}</td><td${r.text.startsWith('refused') ? html` class="error"` : ''}>${r.text}</td></tr>`,
        )}</tbody></table>`
  }
</section>
<section id="preview-failures">
  <h2>Rows that would fail <span class="count" data-field="failed-total">${preview.failedTotal}</span></h2>
  ${
    preview.failures.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<table class="failures"><thead><tr><th class="num">line</th><th>column</th><th>source id</th><th>why</th></tr></thead>
<tbody>${preview.failures.map(
          (f) =>
            html`<tr data-failure-line="${f.line ?? ''}" data-key="${f.key}"><td class="num">${f.line ?? ''}</td><td>${f.column ?? ''}</td><td><code>${f.key}</code></td><td class="message">${f.reason}</td></tr>`,
        )}</tbody></table>${preview.failedTotal > preview.failures.length ? html`<p class="muted small">… and ${preview.failedTotal - preview.failures.length} more.</p>` : ''}`
  }
</section>
<section id="preview-plan">
  <h2>Plan</h2>
  ${countsTable(preview)}
  ${
    preview.plan.length === 0
      ? html`<p class="muted">No write would be sent.</p>`
      : html`<table class="plan"><thead><tr><th>operation</th><th>kind</th><th>source id</th><th>detail</th></tr></thead>
<tbody>${preview.plan.map(
          (op) =>
            html`<tr data-operation="${op.operation}" data-key="${op.key}"><td>${op.operation}</td><td>${KIND_LABEL[op.kind] ?? op.kind}</td><td><code>${op.key}</code></td><td class="muted">${op.detail ?? ''}</td></tr>`,
        )}</tbody></table>${preview.planTotal > preview.plan.length ? html`<p class="muted small">… and ${preview.planTotal - preview.plan.length} more.</p>` : ''}`
  }
</section>`;
}

function countsTable(preview: UploadPreview): SafeHtml {
  const keys = ['accounts', 'invoices', 'creditNotes'] as const;
  return html`<table class="counts" id="preview-counts"><thead><tr><th>kind</th><th class="num">would be created</th><th class="num">would be updated</th><th class="num">unchanged</th><th class="num">would fail</th></tr></thead>
<tbody>${keys.map((k) => {
    const c = preview.counts[k];
    return html`<tr data-kind="${k}"><td>${STREAM_LABEL[k]}</td><td class="num" data-field="created">${c.created}</td><td class="num" data-field="updated">${c.updated}</td><td class="num" data-field="unchanged">${c.unchanged}</td><td class="num${c.failed > 0 ? ' bad' : ''}" data-field="failed">${c.failed}</td></tr>`;
  })}</tbody></table>`;
}
