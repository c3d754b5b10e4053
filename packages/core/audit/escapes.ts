import { parse, type SgNode } from "@ast-grep/napi"
import { splice } from "../util/splice"

/**
 * Identifiers written with Unicode escapes (`\u0065val(x)`, `globalThis.\u{66}etch(url)`, `process.\u0065nv.KEY`)
 * name the same binding or property as the plain spelling, but tree-sitter keeps the escape in the node's text, so an
 * analysis that compares names would not see them. `unescape` writes such identifiers plainly and pads each with
 * spaces to its former length: lines, columns and offsets of every other token stay where they were, and a space
 * after an identifier changes nothing in JavaScript or TypeScript.
 *
 * @example
 * IdentifierEscapes.unescape(root, "\\u0065val(x)", "JavaScript") // "eval     (x)"
 */
export namespace IdentifierEscapes {
  /** A Unicode escape in the text: without one, nothing needs parsing again. */
  const ANY = /\\u(?:[0-9a-fA-F]{4}|\{[0-9a-fA-F]+\})/
  const ESCAPE = /\\u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]+)\})/g
  /** The identifier kinds of the JavaScript, TypeScript and TSX grammars (not every grammar has each). */
  const KINDS = [
    "identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "shorthand_property_identifier_pattern",
    "private_property_identifier",
    "statement_identifier",
    "type_identifier",
  ]
  /**
   * Reserved words: written with an escape they are not keywords (the file is invalid JavaScript anyway), and
   * decoding them would change how the file parses, so they are left as they are.
   */
  const RESERVED = new Set(
    (
      "await break case catch class const continue debugger default delete do else enum export extends false finally " +
      "for function if import in instanceof let new null return static super switch this throw true try typeof var " +
      "void while with yield implements interface package private protected public"
    ).split(" "),
  )

  /** Whether a source could hold an escaped identifier (a cheap test before `unescape`). */
  export function possible(source: string): boolean {
    // A plain search first: most files hold no `\u` at all, and the regular expression scans them more slowly.
    return source.includes("\\u") && ANY.test(source)
  }

  /**
   * The source with every escaped identifier of `root` (parsed from `source`) decoded and padded; undefined when
   * there is none.
   *
   * @example
   * IdentifierEscapes.unescape(parse("JavaScript", s).root(), s, "JavaScript") ?? s
   */
  export function unescape(root: SgNode, source: string, lang: string): string | undefined {
    if (!possible(source)) return undefined
    const edits: { start: number; end: number; text: string }[] = []
    const rule = { rule: { any: kinds(lang).map((kind) => ({ kind })), regex: "\\\\u" } }
    for (const node of holders(root, source).flatMap((holder) => holder.findAll(rule))) {
      const raw = node.text()
      const plain = decode(raw)
      if (plain === undefined || plain === raw) continue
      const { start, end } = node.range()
      // The text of the node is its source slice; a mismatch would mean offsets in other units: leave it alone.
      if (source.slice(start.index, end.index) !== raw) continue
      edits.push({ start: start.index, end: end.index, text: plain.padEnd(raw.length, " ") })
    }
    if (!edits.length) return undefined
    edits.sort((a, b) => a.start - b.start)
    return splice(source, edits)
  }

  /** A node holding an escape and larger than this is searched through its children (see `holders`). */
  const SPLIT_CHARS = 16 * 1024

  /**
   * Nodes of `root`'s tree, none inside another, that hold every `\u` of the source: an escaped identifier is inside
   * one of them. A bundle's escapes are in a few of its thousands of statements (mostly in strings), and searching only
   * those saves most of a traversal of the whole tree (the 32 files of 12 published plugins that hold a `\u`: 0.6 s
   * searched whole, 0.26 s so). A node holding an escape is split into its children while it is larger than
   * SPLIT_CHARS (a CommonJS bundle is one call); smaller splits cost more in nodes listed than they save.
   */
  function holders(root: SgNode, source: string): SgNode[] {
    const at: number[] = []
    for (let i = source.indexOf("\\u"); i >= 0; i = source.indexOf("\\u", i + 2)) at.push(i)
    const out: SgNode[] = []
    let next = 0
    const visit = (node: SgNode) => {
      for (const child of node.children()) {
        if (next >= at.length) return
        const { start, end } = child.range()
        while (next < at.length && at[next] < start.index) next++
        if (next >= at.length || at[next] >= end.index) continue
        if (end.index - start.index > SPLIT_CHARS && !child.isLeaf()) visit(child)
        else out.push(child)
      }
    }
    visit(root)
    return out
  }

  const known = new Map<string, string[]>()
  /**
   * The identifier kinds `lang`'s grammar has (ast-grep refuses a rule naming a kind its grammar lacks). Asked of an
   * empty tree: a kind the file lacks would have been searched for through the whole file (230 ms on a 5 MB bundle).
   */
  function kinds(lang: string): string[] {
    let list = known.get(lang)
    if (!list) {
      const empty = parse(lang as any, "").root()
      list = KINDS.filter((kind) => {
        try {
          empty.find({ rule: { kind } })
          return true
        } catch {
          return false
        }
      })
      known.set(lang, list)
    }
    return list
  }

  /** The identifier spelled plainly, or undefined when an escape is out of range or it would be a reserved word. */
  function decode(raw: string): string | undefined {
    let bad = false
    const plain = raw.replace(ESCAPE, (_, four: string | undefined, braced: string | undefined) => {
      const code = parseInt(four ?? braced ?? "", 16)
      if (!(code >= 0 && code <= 0x10ffff)) {
        bad = true
        return ""
      }
      return String.fromCodePoint(code)
    })
    if (bad || RESERVED.has(plain.replace(/^#/, ""))) return undefined
    if (plain.length > raw.length) return undefined
    return plain
  }
}
