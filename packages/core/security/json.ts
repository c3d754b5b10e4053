/**
 * Strict JSON parsing that says where a document is broken (line and column), which the runtime's `JSON.parse` does
 * not. Used for policy files so that a truncated or mistyped policy gets an error a person can act on. Stricter than
 * `JSON.parse`: a key twice in one object is an error (`JSON.parse` keeps the last one silently, so a second, empty
 * `"rules"` would win), and so is the key `__proto__`.
 *
 * @example
 * SecurityJson.parse('{"a": 1,}') // { error: "line 1, column 9: expected a string key, found '}'", offset: 8 }
 */
export namespace SecurityJson {
  /** On an error, `pointer` is the JSON pointer of the object holding a duplicate or forbidden key. */
  export type Result = { value: unknown } | { error: string; offset: number; pointer?: string }

  /**
   * Parses a document, or says where and why it cannot be used.
   *
   * @example
   * SecurityJson.parse('{"rules": [1],\n "rules": []}')
   * // { error: 'line 2, column 2: duplicate key "rules" (first at line 1, column 2)', offset: 16, pointer: "" }
   */
  export function parse(text: string): Result {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      const found = locate(text)
      return { error: `${position(text, found.offset)}: ${found.message}`, offset: found.offset }
    }
    const key = keys(text)
    if (key) return { error: `${position(text, key.offset)}: ${key.message}`, offset: key.offset, pointer: key.pointer }
    return { value }
  }

  /**
   * An open object or array. An object's keys are a short list while few (most policy objects), a map past that, so
   * the pass stays linear.
   */
  type Frame = {
    object: boolean
    expectKey: boolean
    index: number
    key: string
    names: string[]
    offsets: number[]
    map?: Map<string, number>
  }

  /**
   * The first duplicate or forbidden key of a document `JSON.parse` accepted: one pass, the keys of each open object.
   */
  function keys(text: string): { offset: number; message: string; pointer: string } | undefined {
    const stack: Frame[] = []
    const pointer = () =>
      stack
        .slice(1)
        .map((_, i) => (stack[i].object ? stack[i].key : String(stack[i].index)))
        .map((s) => "/" + s.replace(/~/g, "~0").replace(/\//g, "~1"))
        .join("")
    const open = (object: boolean): Frame => ({ object, expectKey: object, index: 0, key: "", names: [], offsets: [] })
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c <= 0x20) continue
      if (c === 0x22) {
        // A string: its end is a quote not escaped by an odd run of backslashes.
        let end = text.indexOf('"', i + 1)
        while (text.charCodeAt(end - 1) === 0x5c) {
          let slashes = 1
          while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++
          if (slashes % 2 === 0) break
          end = text.indexOf('"', end + 1)
        }
        const top = stack[stack.length - 1]
        if (top !== undefined && top.expectKey) {
          const raw = text.slice(i + 1, end)
          const key = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw
          if (key === "__proto__")
            return { offset: i, message: 'the key "__proto__" is not allowed in a policy', pointer: pointer() }
          let first = top.map?.get(key)
          if (!top.map)
            for (let k = 0; k < top.names.length && first === undefined; k++)
              if (top.names[k] === key) first = top.offsets[k]
          if (first !== undefined)
            return {
              offset: i,
              message: `duplicate key ${JSON.stringify(key)} (first at ${position(text, first)}); JSON.parse would keep only the last one`,
              pointer: pointer(),
            }
          if (top.map) top.map.set(key, i)
          else {
            top.names.push(key)
            top.offsets.push(i)
            if (top.names.length > 16) top.map = new Map(top.names.map((name, k) => [name, top.offsets[k]]))
          }
          top.key = key
          top.expectKey = false
        }
        i = end
      } else if (c === 0x7b) stack.push(open(true))
      else if (c === 0x5b) stack.push(open(false))
      else if (c === 0x7d || c === 0x5d) stack.pop()
      else if (c === 0x2c) {
        const top = stack[stack.length - 1]
        if (top.object) top.expectKey = true
        else top.index++
      }
    }
    return undefined
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

  /** A character as an error shows it: invisible and unusual white space by code point. */
  function shown(code: number): string {
    const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`
    if (code === 0xfeff) return `${hex} (a byte order mark)`
    if (code === 0xa0 || code === 0x3000 || (code >= 0x2000 && code <= 0x200b) || code === 0x202f || code === 0x205f)
      return `${hex} (a space JSON does not allow)`
    if (code < 0x20 || code === 0x7f || (code >= 0x200c && code <= 0x200f) || (code >= 0x2028 && code <= 0x202e))
      return `${hex} (an invisible character)`
    return `'${String.fromCharCode(code)}'`
  }

  /** Finds the first syntax error of a document JSON.parse rejected. */
  function locate(text: string): { offset: number; message: string } {
    let i = 0
    const fail = (message: string): never => {
      throw { offset: i, message }
    }
    const show = () => (i >= text.length ? "the end of the file (is it truncated?)" : shown(text.charCodeAt(i)))
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
