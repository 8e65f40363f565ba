/**
 * The upload page's own style and script, served from `/assets/upload.css` and `/assets/upload.js`
 * (strings, as `assets.ts`: no front-end build). The page works without the script: the file input
 * is a plain form field. The script adds the drag and drop: a file dropped on the zone is given to
 * that input and the form is sent, as if it had been chosen.
 */

export const UPLOAD_CSS = `
.dropzone { display: grid; place-items: center; gap: .6rem; min-height: 8rem; padding: 1.2rem; border: 2px dashed #c8cdd6;
  border-radius: 8px; background: #fafbfc; color: var(--fg); font-size: 14px; text-align: center; cursor: pointer; }
.dropzone.over { border-color: var(--accent); background: #eef3ff; }
.dropzone-text { font-weight: 600; }
.upload-actions { border-top: 0; padding-top: 0; margin: .6rem 0 0; align-items: center; }
#preview-counts { margin-bottom: .8rem; }
h1[data-upload] code { font-size: 1.2rem; }
`;

export const UPLOAD_JS = `
'use strict';
(() => {
  const zone = document.querySelector('[data-dropzone]');
  if (!zone) return;
  const input = zone.querySelector('input[type="file"]');
  const text = zone.querySelector('.dropzone-text');
  const form = zone.closest('form');
  const show = () => { if (input.files && input.files[0] && text) text.textContent = input.files[0].name; };
  input.addEventListener('change', show);
  for (const type of ['dragenter', 'dragover']) zone.addEventListener(type, (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  for (const type of ['dragleave', 'drop']) zone.addEventListener(type, () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    const files = event.dataTransfer && event.dataTransfer.files;
    if (!files || files.length === 0) return;
    input.files = files;
    show();
    form.requestSubmit();
  });
})();
`;
