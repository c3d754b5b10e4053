/** A replacement of `text.slice(start, end)`. */
export type Splice = { start: number; end: number; text: string }

/**
 * `text` with `edits` (sorted by `start`, not overlapping; ranges index `text`) put in place; everything outside
 * them stays byte for byte.
 *
 * @example
 * splice("a b c", [{ start: 2, end: 3, text: "B" }]) // "a B c"
 */
export function splice(text: string, edits: readonly Splice[]): string {
  let out = ""
  let at = 0
  for (const edit of edits) {
    out += text.slice(at, edit.start) + edit.text
    at = edit.end
  }
  return out + text.slice(at)
}
