import type { SettingFact, SettingPiece } from '../source-profile.js';
import { html, type SafeHtml } from './html.js';

/** A source's own settings as `<dt>`/`<dd>` pairs of a facts list, one per line. */
export function settingFacts(facts: readonly SettingFact[]): SafeHtml {
  return html`${facts.map((fact, i) => html`${i > 0 ? '\n' : ''}<dt>${fact.label}</dt><dd>${fact.value.map(piece)}</dd>`)}`;
}

function piece(p: SettingPiece): SafeHtml | string {
  if ('text' in p) return p.text;
  if ('code' in p) return html`<code>${p.code}</code>`;
  if ('note' in p) return html`<span class="muted small">${p.note}</span>`;
  return html`<details><summary>${p.fold.summary.map(piece)}</summary><pre>${p.fold.body}</pre></details>`;
}
