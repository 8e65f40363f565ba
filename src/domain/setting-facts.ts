/**
 * A source's settings as a person is shown them (the dashboard's source page): each a label and
 * its value in pieces a page can render. Declared here, the floor both the sources (which describe
 * themselves) and the dashboard (which renders, and imports no source code) stand on.
 */
export interface SettingFact {
  label: string;
  value: readonly SettingPiece[];
}

/**
 * A piece of a setting's value: words, a literal (a path, a name), a side note, or a block folded
 * under a summary (a query). Pieces carry their own spacing; they are shown one after the other.
 */
export type SettingPiece =
  | { text: string }
  | { code: string }
  | { note: string }
  | { fold: { summary: readonly SettingPiece[]; body: string } };
