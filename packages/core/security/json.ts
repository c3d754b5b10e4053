/**
 * Strict JSON parsing that says where a document is broken (line and column), which the runtime's `JSON.parse` does
 * not. Used for policy files so that a truncated or mistyped policy gets an error a person can act on.
 *
 * @example
 * SecurityJson.parse('{"a": 1,}') // { error: "line 1, column 9: expected a string key, found '}'" }
 */
export namespace SecurityJson {
  export type Result = { value: unknown } | { error: string; offset: number }

  export function parse(text: string): Result {
    try {
      return { value: JSON.parse(text) }
    } catch {
      const found = locate(text)
      return { error: `${position(text, found.offset)}: ${found.message}`, offset: found.offset }
    }
  }

  /** "line L, column C" of an offset (both 1-based). */
  export function position(text: string, offset: number): string {
    let line = 1
    let column = 1
    for (let i = 0; i < offset && i < text.length; i++) {
      if (text[i] === "\n") {
        line++
        column = 1
      } else column++
    }
    return `line ${line}, column ${column}`
  }

  /** Finds the first syntax error of a document JSON.parse rejected. */
  function locate(text: string): { offset: number; message: string } {
    let i = 0
    const fail = (message: string): never => {
      throw { offset: i, message }
    }
    const show = () => (i >= text.length ? "the end of the file (is it truncated?)" : `'${text[i]}'`)
    const ws = () => {
      while (i < text.length && " \t\n\r".includes(text[i])) i++
    }
    const literal = (word: string) => {
      if (text.startsWith(word, i)) i += word.length
      else fail(`expected a value, found ${show()}`)
    }
    const string = () => {
      i++
      while (i < text.length) {
        const c = text[i]
        if (c === '"') {
          i++
          return
        }
        if (c === "\\") {
          const n = text[i + 1]
          if (n === "u") {
            if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail("invalid \\u escape")
            i += 6
            continue
          }
          if (n === undefined || !'"\\/bfnrt'.includes(n)) {
            i++
            fail("invalid escape in a string")
          }
          i += 2
          continue
        }
        if (c < " ") fail("control character inside a string (unescaped newline or tab?)")
        i++
      }
      fail("unterminated string: the file ends inside it (is it truncated?)")
    }
    const number = () => {
      const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i))
      if (!m) fail(`expected a value, found ${show()}`)
      i += m![0].length
    }
    const value = (depth: number): void => {
      if (depth > 200) fail("nesting too deep")
      ws()
      const c = text[i]
      if (c === "{") {
        i++
        ws()
        if (text[i] === "}") {
          i++
          return
        }
        for (;;) {
          ws()
          if (text[i] !== '"') fail(`expected a string key, found ${show()}`)
          string()
          ws()
          if (text[i] !== ":") fail(`expected ':' after a key, found ${show()}`)
          i++
          value(depth + 1)
          ws()
          if (text[i] === ",") {
            i++
            continue
          }
          if (text[i] === "}") {
            i++
            return
          }
          fail(`expected ',' or '}', found ${show()}`)
        }
      }
      if (c === "[") {
        i++
        ws()
        if (text[i] === "]") {
          i++
          return
        }
        for (;;) {
          value(depth + 1)
          ws()
          if (text[i] === ",") {
            i++
            continue
          }
          if (text[i] === "]") {
            i++
            return
          }
          fail(`expected ',' or ']', found ${show()}`)
        }
      }
      if (c === '"') return string()
      if (c === "t") return literal("true")
      if (c === "f") return literal("false")
      if (c === "n") return literal("null")
      if (c === "-" || (c >= "0" && c <= "9")) return number()
      fail(`expected a value, found ${show()}`)
    }
    try {
      value(0)
      ws()
      if (i < text.length) fail(`unexpected ${show()} after the end of the document`)
      return { offset: text.length, message: "not valid JSON" }
    } catch (e) {
      if (e && typeof e === "object" && "offset" in e) return e as { offset: number; message: string }
      return { offset: 0, message: "not valid JSON" }
    }
  }
}
