import { styleText } from 'node:util';

/** What a word of the output says: something failed (red), a warning (yellow), all is well (green). */
export type Tone = 'error' | 'warning' | 'ok';

const COLOURS: Readonly<Record<Tone, 'red' | 'yellow' | 'green'>> = {
  error: 'red',
  warning: 'yellow',
  ok: 'green',
};

/** Colours the few words of the human output that matter, or leaves them as they are. */
export interface TerminalStyle {
  /** `text` in the colour of `tone` when the stream shows colours, else `text` itself. */
  tone(tone: Tone, text: string): string;
}

/** No colour at all: `--json` output, `--no-color`, tests. */
export const PLAIN: TerminalStyle = { tone: (_tone, text) => text };

/**
 * The style of the text written to `stream`. Colours only where they can be seen: Node's
 * `util.styleText` checks that the stream is a terminal and honours `NO_COLOR`,
 * `NODE_DISABLE_COLORS`, `TERM=dumb` and `FORCE_COLOR`; `enabled: false` (`--no-color`,
 * `log.color: false`) turns them off whatever the environment says. Colour a text after
 * `printable()`: the escape sequences are then ours, never the data's.
 *
 * @example
 * const style = terminalStyle(process.stdout, flags.color);
 * process.stdout.write(`${style.tone('ok', 'ok')}    state DB  migrated\n`);
 */
export function terminalStyle(stream: NodeJS.WritableStream, enabled = true): TerminalStyle {
  if (!enabled) return PLAIN;
  return {
    tone: (tone, text) =>
      text === '' ? text : styleText(COLOURS[tone], text, { stream, validateStream: true }),
  };
}
