/**
 * Text shown on a user's terminal that may hold what an agent or a tool made (stored tool output, a learning, a
 * heartbeat's folder), and shell words built from such text.
 *
 * - `shown`: every control character but line feed, tab and a carriage return ending a line — C0, DEL, C1 (ESC, CSI, OSC: title, clipboard write,
 *   cursor moves, line erasing) — and the bidirectional overrides and isolates (text that reads other than it runs)
 *   written visibly as `\uXXXX`. That spelling is also JSON's escape of the same character, and in JSON text these
 *   characters can only stand inside strings, so JSON passed through `shown` parses to the same value.
 * - `line`: the same for a one-line field; line feed and tab are escaped too (a name cannot fake a line of its own).
 * - `shellWord`: one word for a POSIX shell (single quotes, `'\''`); undefined for a word holding a control character,
 *   which no line the user pastes should carry.
 *
 * @example
 * Terminal.shown("ok\x1b]52;c;aGk=\x07\n") // "ok\\u001b]52;c;aGk=\\u0007\n"
 * Terminal.shellWord("/p/$(sh .x)") // "'/p/$(sh .x)'"
 */
export namespace Terminal {
  // A carriage return before a line feed ends a line (CRLF output); alone it moves back over the line to rewrite it.
  const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g
  const LINE_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g
  const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

  /** `text` with every control character except `\n`, `\t` and the `\r` of a `\r\n` written as `\uXXXX`. */
  export function shown(text: string): string {
    return text.replace(CONTROLS, escape)
  }

  /** `text` for one line: every control character, `\n` and `\t` included, written as `\uXXXX`. */
  export function line(text: string): string {
    return text.replace(LINE_CONTROLS, escape)
  }

  /** Whether `text` holds a character `line` would escape. */
  export function hasControls(text: string): boolean {
    return new RegExp(LINE_CONTROLS.source).test(text)
  }

  const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/

  /**
   * `word` quoted for a POSIX shell, so that pasting it runs nothing (`$(…)`, backquotes, `\` and `$` stay text);
   * undefined when it holds a control character or line break.
   */
  export function shellWord(word: string): string | undefined {
    if (hasControls(word)) return undefined
    if (PLAIN.test(word)) return word
    return `'${word.replaceAll("'", `'\\''`)}'`
  }
}
