import { readFileSync, statSync } from "fs"
import os from "os"
import path from "path"
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser"
import { TextFile } from "./text-file"

/**
 * OpenCode's configuration files as OpenCode finds them, read without OpenCode: features that must agree with what
 * the user configured (an agent turned off, a skill denied, a language server replaced) read the same files in the
 * same order. Each file is parsed once per change (size and modification time).
 *
 * Order, lowest precedence first: the global `config.json`, `opencode.json`, `opencode.jsonc` in
 * `$XDG_CONFIG_HOME/opencode` (`~/.config/opencode`), `OPENCODE_CONFIG`, `opencode.json[c]` from the worktree down to
 * the directory, `.opencode/opencode.json[c]` likewise (`OPENCODE_DISABLE_PROJECT_CONFIG` drops both project kinds),
 * `OPENCODE_CONFIG_DIR/opencode.json[c]`, then `OPENCODE_CONFIG_CONTENT`.
 * Not read: a remote organisation's configuration, managed (MDM) files, `{env:…}` and `{file:…}` substitutions.
 *
 * @example
 * const { sources } = OpenCodeConfig.sources({ directory: "/repo", worktree: "/repo" })
 * sources.at(-1)?.config.agent // the agent entries of the file read last
 */
export namespace OpenCodeConfig {
  export type Input = {
    directory: string
    worktree?: string
    env?: Record<string, string | undefined>
  }

  /** One configuration read: where it came from and its top-level object. */
  export type Source = { file: string; config: Record<string, unknown> }
  /** A configuration file that exists but could not be used, with the reason (line and column for JSON errors). */
  export type Problem = { file: string; error: string }

  /**
   * The configuration files OpenCode reads for `input`, lowest precedence first (whether or not they exist).
   *
   * @example
   * OpenCodeConfig.files({ directory: "/repo/app", worktree: "/repo", env: { HOME: "/home/me" } })
   * // ["/home/me/.config/opencode/config.json", …, "/repo/opencode.json", …, "/repo/app/.opencode/opencode.jsonc"]
   */
  export function files(input: Input): string[] {
    const env = input.env ?? process.env
    const home = env.HOME || os.homedir()
    const configHome = env.XDG_CONFIG_HOME || path.join(home, ".config")
    const list = ["config.json", "opencode.json", "opencode.jsonc"].map((f) => path.join(configHome, "opencode", f))
    if (env.OPENCODE_CONFIG) list.push(path.resolve(env.OPENCODE_CONFIG))
    if (!truthy(env.OPENCODE_DISABLE_PROJECT_CONFIG)) {
      const dirs = chain(input.directory, input.worktree)
      for (const dir of dirs) list.push(path.join(dir, "opencode.json"), path.join(dir, "opencode.jsonc"))
      for (const dir of dirs)
        list.push(path.join(dir, ".opencode", "opencode.json"), path.join(dir, ".opencode", "opencode.jsonc"))
    }
    if (env.OPENCODE_CONFIG_DIR)
      for (const f of ["opencode.json", "opencode.jsonc"]) list.push(path.join(env.OPENCODE_CONFIG_DIR, f))
    return [...new Set(list)]
  }

  /** The name `sources` gives the configuration passed in `OPENCODE_CONFIG_CONTENT`. */
  export const CONTENT = "OPENCODE_CONFIG_CONTENT"

  /**
   * Every configuration that exists and parses to an object, lowest precedence first, and a problem for each one that
   * does not (OpenCode refuses to start on those; a feature reading them carries on without that file).
   *
   * @example
   * const { sources, problems } = OpenCodeConfig.sources({ directory: "/repo" })
   */
  export function sources(input: Input): { sources: Source[]; problems: Problem[] } {
    const out: Source[] = []
    const problems: Problem[] = []
    const take = (file: string, read: Parsed) => {
      if ("error" in read) problems.push({ file, error: read.error })
      else out.push({ file, config: read.config })
    }
    for (const file of files(input)) {
      const read = readFile(file)
      if (read) take(file, read)
    }
    const content = (input.env ?? process.env)[CONTENT]
    if (content) take(CONTENT, parse(content))
    return { sources: out, problems }
  }

  type Parsed = { config: Record<string, unknown> } | { error: string }
  const parsedFiles = new Map<string, { size: number; mtimeMs: number; read: Parsed }>()

  function readFile(file: string): Parsed | undefined {
    let stat
    try {
      stat = statSync(file)
    } catch {
      parsedFiles.delete(file)
      return undefined
    }
    if (!stat.isFile()) return { error: "not a regular file" }
    const kept = parsedFiles.get(file)
    if (kept && kept.size === stat.size && kept.mtimeMs === stat.mtimeMs) return kept.read
    let read: Parsed
    try {
      read = parseBytes(readFileSync(file))
    } catch (error) {
      read = { error: (error as Error).message }
    }
    parsedFiles.set(file, { size: stat.size, mtimeMs: stat.mtimeMs, read })
    return read
  }

  /**
   * One configuration text, JSON with comments and trailing commas as OpenCode accepts it.
   *
   * @example
   * OpenCodeConfig.parse('{ "agent": { "x": { "disable": true } }, }') // { config: { agent: { x: { disable: true } } } }
   * OpenCodeConfig.parse("{ oops") // { error: "line 1, column 3: unexpected character 'o'" }
   */
  export function parse(text: string): Parsed {
    const errors: ParseError[] = []
    const value = parseJsonc(text, errors, { allowTrailingComma: true })
    if (errors.length) return { error: syntaxError(text, errors[0]) }
    if (!value || typeof value !== "object" || Array.isArray(value)) return { error: "not a JSON object" }
    return { config: value as Record<string, unknown> }
  }

  /**
   * A configuration file's bytes: UTF-8 (a byte-order mark skipped) parsed as `parse` does; bytes that are not UTF-8
   * (a binary or Latin-1 file) are named as such, not as the parser's first complaint about them.
   *
   * @example
   * OpenCodeConfig.parseBytes(Buffer.from([0x80, 0x41])) // { error: "is not UTF-8 text (byte 0); save it as UTF-8" }
   */
  export function parseBytes(bytes: Uint8Array): Parsed {
    const bad = TextFile.invalidAt(bytes)
    if (bad >= 0) return { error: `is not UTF-8 text (byte ${bad}); save it as UTF-8` }
    return parse(
      Buffer.from(bytes)
        .toString("utf8")
        .replace(/^\uFEFF/, ""),
    )
  }

  /** What each of jsonc-parser's error codes means, in words (its names, `CloseBracketExpected`, are not). */
  const MEANING: Record<string, string> = {
    InvalidSymbol: "unexpected character",
    InvalidNumberFormat: "a number is not written as JSON writes numbers",
    PropertyNameExpected: "expected a property name in double quotes",
    ValueExpected: "expected a value",
    ColonExpected: "expected ':' after the property name",
    CommaExpected: "expected ',' between two entries",
    CloseBraceExpected: "expected '}': an object is not closed",
    CloseBracketExpected: "expected ']': a list is not closed",
    EndOfFileExpected: "unexpected text after the end of the configuration",
    InvalidCommentToken: "a comment is not closed",
    UnexpectedEndOfComment: "a comment is not closed",
    UnexpectedEndOfString: "a string is not closed",
    UnexpectedEndOfNumber: "a number is cut off",
    InvalidUnicode: "an invalid \\u escape",
    InvalidEscapeCharacter: "an invalid escape sequence",
    InvalidCharacter: "a character not allowed in a string (a line break or a control character)",
  }

  /**
   * A JSONC syntax error in words, where it is (`line 3, column 3: expected ',' between two entries`): the character
   * found is named when it is the problem, and an error at the very end says the file ends early.
   *
   * @example
   * OpenCodeConfig.syntaxError('{ "a": 1 "b": 2 }', { error: 6, offset: 9, length: 3 }) // "line 1, column 10: expected ',' between two entries"
   */
  export function syntaxError(text: string, error: ParseError): string {
    const before = text.slice(0, error.offset).split("\n")
    const at = `line ${before.length}, column ${before.at(-1)!.length + 1}`
    const code = printParseErrorCode(error.error)
    let words = MEANING[code] ?? code
    const found = text.slice(error.offset, error.offset + Math.max(1, Math.min(error.length, 1)))
    if (code === "InvalidSymbol" && found) words += ` ${JSON.stringify(found).replace(/^"|"$/g, "'")}`
    if (error.offset >= text.trimEnd().length) words += " (the text ends early: cut off?)"
    return `${at}: ${words}`
  }

  /** Folders from the worktree (or the directory alone when outside it) down to the directory. */
  function chain(directory: string, worktree: string | undefined): string[] {
    const top = path.resolve(worktree || directory)
    const dirs: string[] = []
    for (let dir = path.resolve(directory); ; dir = path.dirname(dir)) {
      dirs.unshift(dir)
      if (dir === top || dir === path.dirname(dir)) break
      const rel = path.relative(top, dir)
      if (rel.startsWith("..") || path.isAbsolute(rel)) break
    }
    return dirs
  }

  function truthy(value: string | undefined): boolean {
    return value !== undefined && ["1", "true"].includes(value.toLowerCase())
  }
}
