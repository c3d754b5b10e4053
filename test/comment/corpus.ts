import fs from "fs"
import path from "path"
import { CommentSyntax } from "../../packages/core/comment/syntax"

const ROOT = path.resolve(import.meta.dir, "../..")

/**
 * The comment checker's two measurement corpora.
 *
 * - `slop()`: files written for this purpose under test/comment/slop/ (as `*.sample`), in 18 languages, commented the way AI
 *   assistants over-comment (narrating each step, restating the next line, labelling the obvious).
 * - `real()`: well-commented source written by people, from packages this repository installs (node_modules, pinned
 *   by package-lock.json): JavaScript/TypeScript libraries and C/C++ headers and sources. "Well-commented" means at
 *   least 5 comment lines and 30 non-blank lines, at most 20 files per package; generated parsers, minified files, bundles over 3000 lines and
 *   declaration files are left out.
 */
export namespace CommentCorpus {
  export type Sample = { file: string; text: string }

  /** Files are stored as `<name>.sample` so that no tool of this repository treats them as its code. */
  export function slop(): Sample[] {
    const dir = path.join(import.meta.dir, "slop")
    return fs
      .readdirSync(dir)
      .filter((name) => name.endsWith(".sample"))
      .sort()
      .map((name) => ({
        file: path.join(dir, name.slice(0, -".sample".length)),
        text: fs.readFileSync(path.join(dir, name), "utf8"),
      }))
  }

  /** Package folders the real corpus is drawn from (all are installed by `npm install` of this repository). */
  export const PACKAGES = [
    "zod/src/v4",
    "zod/src/v3",
    "gpt-tokenizer/src",
    "tree-sitter/src",
    "tree-sitter/index.js",
    "tree-sitter-nix/grammar.js",
    "tree-sitter-solidity/grammar.js",
    "picomatch/lib",
    "ignore",
    "gray-matter/lib",
    "js-yaml/lib",
    "fastest-levenshtein",
    "stemmer/index.js",
    "diff/libesm",
    "node-gyp-build",
    "detect-libc/lib",
    "argparse",
    "sprintf-js/src",
    "section-matter",
    "kind-of",
    "nan",
    "node-addon-api",
    "tree-sitter-nix/src",
    "tree-sitter-php/common",
  ]

  const CODE = /\.(m?js|cjs|ts|c|cc|h)$/

  export function real(limit = 400, perPackage = 20): Sample[] {
    const samples: Sample[] = []
    for (const entry of PACKAGES) {
      const files: string[] = []
      const full = path.join(ROOT, "node_modules", entry)
      if (!fs.existsSync(full)) continue
      const stat = fs.statSync(full)
      const list = stat.isFile()
        ? [full]
        : (fs.readdirSync(full, { recursive: true }) as string[]).map((r) => path.join(full, r))
      for (const file of list.sort()) {
        if (!CODE.test(file) || /\.d\.ts$|\.min\.|[/\\](test|tests|__tests__)[/\\]|parser\.c$/.test(file)) continue
        if (!fs.statSync(file).isFile()) continue
        files.push(file)
      }
      let taken = 0
      for (const file of files) {
        if (taken >= perPackage || samples.length >= limit) break
        const text = fs.readFileSync(file, "utf8")
        const lines = text.split("\n")
        if (lines.length > 3000) continue
        const { kinds } = CommentSyntax.extract(lines, CommentSyntax.forFile(file)!)
        const comments = kinds.filter((k) => k === "comment" || k === "doc").length
        const nonBlank = kinds.filter((k) => k !== "blank").length
        if (comments >= 5 && nonBlank >= 30) {
          samples.push({ file, text })
          taken++
        }
      }
    }
    return samples
  }
}
