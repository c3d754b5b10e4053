import { fileURLToPath } from "url"

/**
 * How LSP positions relate to a file's text when the file starts with a UTF-8 byte-order mark (Visual Studio and
 * many Windows editors write one).
 *
 * Editors do not count the mark: VS Code's documents hold the text after it, and so does the text this tool sends
 * (`didOpen`/`didChange`), so a 1-based column the model gives is the one an editor shows, and every position a
 * server computes on a document it was sent is on that text. Servers disagree about files they read from disk
 * themselves: TypeScript's drops the mark, pyright counts it (its first-line columns are one more). So a file with a
 * mark that a server answers about without having been sent it is opened in that server and the request is asked
 * again (`Lsp`), and edits are always applied to the text after the mark, which is kept (`LspEdit`).
 *
 * @example
 * LspText.withoutBom("\uFEFFexport const a = 1") // "export const a = 1"
 * LspText.files({ changes: { "file:///r/a.ts": [] } }) // ["/r/a.ts"]
 */
export namespace LspText {
  export const BOM = "\uFEFF"

  export function hasBom(text: string): boolean {
    return text.charCodeAt(0) === 0xfeff
  }

  /** `text` without a leading byte-order mark: what servers are sent and what edit positions refer to. */
  export function withoutBom(text: string): string {
    return hasBom(text) ? text.slice(1) : text
  }

  /**
   * Every file an LSP answer names (`uri`, `targetUri`, `oldUri`, `newUri` and the keys of a `WorkspaceEdit`'s
   * `changes`), as paths, in order of appearance.
   */
  export function files(value: unknown): string[] {
    const out = new Set<string>()
    const add = (uri: unknown) => {
      if (typeof uri !== "string" || !uri.startsWith("file:")) return
      try {
        out.add(fileURLToPath(uri))
      } catch {}
    }
    const walk = (v: unknown, depth: number) => {
      if (!v || typeof v !== "object" || depth > 12) return
      if (Array.isArray(v)) {
        for (const item of v) walk(item, depth + 1)
        return
      }
      for (const [key, item] of Object.entries(v)) {
        if (key === "uri" || key === "targetUri" || key === "oldUri" || key === "newUri") add(item)
        else if (key === "changes" && item && typeof item === "object" && !Array.isArray(item))
          for (const uri of Object.keys(item)) add(uri)
        else walk(item, depth + 1)
      }
    }
    walk(value, 0)
    return [...out]
  }
}
