import { parse } from "@ast-grep/napi"
import path from "path"

/**
 * Code embedded in HTML, searched as the ast-grep CLI 0.51.1 searches it: with `-l javascript`, `typescript`, `tsx`
 * or `css` the CLI also reads `.html`, `.htm` and `.xhtml` files and searches the text of their `<script>` and
 * `<style>` elements (tree-sitter-html's `raw_text`) in that language, reporting file positions and rewriting in
 * place. The element's language is its `lang` attribute read through the CLI's language aliases, letter case
 * ignored (`js`, `javascript`, `jsx`; `ts`, `typescript`; `tsx`; `css`), else JavaScript for `<script>` and CSS for
 * `<style>`; the `type` attribute is not read (a `type="application/json"` script is parsed as JavaScript too), nor
 * are event-handler or `style` attributes.
 *
 * The tool masks the file instead of parsing ranges of it: every character outside those elements' text becomes a
 * space (line breaks kept), so the masked text has the file's length and lines, and every position napi reports in it
 * is the file's own. Like the CLI's ranged parse, the elements of one file form one program.
 *
 * @example
 * const spec = AstEmbed.spec("javascript")! // { element: "script_element", names: ["js", "javascript", "jsx"], byDefault: true }
 * AstEmbed.mask("<p>x</p><script>f()</script>", spec) // "                f()         "
 */
export namespace AstEmbed {
  /** Which elements hold code of a language: their kind in tree-sitter-html, the `lang` values naming it, and
   *  whether an element without a `lang` value holds it. */
  export type Spec = { element: "script_element" | "style_element"; names: string[]; byDefault: boolean }

  /** Extensions of the files whose `<script>`/`<style>` elements are searched (the CLI's html extensions). */
  export const HOSTS = ["html", "htm", "xhtml"]

  const SPECS: Record<string, Spec> = {
    javascript: { element: "script_element", names: ["js", "javascript", "jsx"], byDefault: true },
    typescript: { element: "script_element", names: ["ts", "typescript"], byDefault: false },
    tsx: { element: "script_element", names: ["tsx"], byDefault: false },
    css: { element: "style_element", names: ["css"], byDefault: true },
  }

  /**
   * What `lang` (a tool language name) reads in HTML files, if anything.
   *
   * @example
   * AstEmbed.spec("css") // { element: "style_element", names: ["css"], byDefault: true }
   * AstEmbed.spec("python") // undefined
   */
  export function spec(lang: string): Spec | undefined {
    return SPECS[lang]
  }

  /**
   * True for a file whose extension is one of `HOSTS` (letter case counts, as in the CLI).
   *
   * @example
   * AstEmbed.isHost("/r/index.html") // true
   */
  export function isHost(file: string): boolean {
    return HOSTS.includes(path.extname(file).slice(1))
  }

  /**
   * `html` with everything but the text of the elements `spec` selects turned into spaces (line breaks kept), or
   * undefined when no such element holds text.
   *
   * @example
   * AstEmbed.mask('<style lang="scss">a{}</style>', AstEmbed.spec("css")!) // undefined
   */
  export function mask(html: string, spec: Spec): string | undefined {
    const ranges: [number, number][] = []
    for (const element of parse("Html", html)
      .root()
      .findAll({ rule: { kind: spec.element } })) {
      // The CLI's rule: the first `lang` attribute that has a value names the language; none: the default.
      let named: string | undefined
      for (const attribute of element.findAll({ rule: { kind: "attribute" } })) {
        if (attribute.find({ rule: { kind: "attribute_name" } })?.text() !== "lang") continue
        const value = attribute.find({ rule: { kind: "attribute_value" } })
        if (value) {
          named = value.text().toLowerCase()
          break
        }
      }
      if (named === undefined ? !spec.byDefault : !spec.names.includes(named)) continue
      const text = element.children().find((child) => child.kind() === "raw_text")
      if (!text) continue
      const { start, end } = text.range()
      if (end.index > start.index) ranges.push([start.index, end.index])
    }
    if (!ranges.length) return undefined
    ranges.sort((a, b) => a[0] - b[0])
    const blank = (text: string) => text.replace(/[^\r\n]/g, " ")
    let out = ""
    let at = 0
    for (const [start, end] of ranges) {
      out += blank(html.slice(at, start)) + html.slice(start, end)
      at = end
    }
    return out + blank(html.slice(at))
  }
}
