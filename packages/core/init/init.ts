import fs from "fs"
import {
  applyEdits,
  findNodeAtLocation,
  modify,
  parse,
  parseTree,
  type Edit,
  type FormattingOptions,
  type Node,
  type ParseError,
} from "jsonc-parser"
import os from "os"
import path from "path"
import z from "zod"
import { LocalState } from "../learning/local"
import { Resource } from "../resource/schema"
import { SecurityAccess } from "../security/access"
import { SecurityConfig } from "../security/config"
import { SecurityGuard } from "../security/guard"
import { SecurityPath } from "../security/paths"
import { NamedError } from "../util/error"
import { OpenCodeConfig } from "../util/opencode-config"
import { TextFile } from "../util/text-file"
import { TempFile } from "../util/temp-file"
import { worktreeOf } from "../util/cli"

/**
 * `opencode-builtins init`: a project set up in one command. It adds the plugin (or, with `mcp`, the MCP server
 * entry) to the project's OpenCode configuration, scaffolds the `.opencode/` resource folders with one example each,
 * and git-ignores the local state. Non-destructive and idempotent:
 *
 * - the configuration is edited in place with jsonc-parser: comments, trailing commas, key order, indentation and
 *   line endings stay as they are; only the key it owns changes;
 * - `opencode.jsonc` is edited when it exists (an `opencode.json` is never created beside it); a new `opencode.json`
 *   is created only when the project has neither;
 * - a configuration that is not valid JSONC (or whose `plugin`/`mcp` has the wrong type) is refused with the reason
 *   and its position, and nothing at all is written;
 * - folders that exist are left alone (no example added to them), files are never overwritten, `.gitignore` lines
 *   already present are not added again: a second run changes nothing;
 * - nothing is written through a link a command of a session may have left (red team GE2: a `.gitignore` linked to
 *   the policy file got init's block appended to the policy, which then failed every later session): a `.gitignore`
 *   that is a link, or not a plain file, is refused (git itself does not read one that is a link); a configuration
 *   file that is a link is edited where it leads (a dotfile manager's link), but never when that file, or a file a
 *   linked folder on the way leads to, is one the project's security policy keeps from writes: refused, naming the
 *   link, the file and the rule, and nothing is written.
 *
 * @example
 * const plan = Init.plan("/repo", { mcp: false })
 * if (plan.ok) Init.apply(plan.changes) // writes; plan.changes describes each file
 */
export namespace Init {
  export const PACKAGE = "opencode-builtins"
  /**
   * The project configuration files OpenCode reads, relative to the project: the root's, then the `.opencode` folder's
   * (loaded after, merged; the plugin lists of all of them are joined).
   */
  export const CONFIG_FILES = [
    "opencode.jsonc",
    "opencode.json",
    ".opencode/opencode.jsonc",
    ".opencode/opencode.json",
  ] as const
  export const SCHEMA = "https://opencode.ai/config.json"
  /** The MCP entry `--mcp` adds under `mcp`. */
  export const MCP_ENTRY = { type: "local", command: ["npx", "-y", PACKAGE, "mcp"] } as const

  export type Options = {
    mcp?: boolean
    /**
     * Set up `dir` on its own even when a folder above it (up to the git root) is already set up, which OpenCode
     * reads from `dir` too (`--standalone`); without it such a folder is left as it is.
     */
    standalone?: boolean
  }
  /**
   * One file to write. `before` is the text the plan was made from (an edit) — the file must still hold it when the
   * change is applied; a `create` expects no file there. `follow`: an edit of the file a link at `path` leads to (an
   * OpenCode configuration a dotfile manager links); without it the new text replaces the name itself, which must
   * still be a plain file, so nothing is written through a link.
   */
  export type Change = {
    path: string
    action: "create" | "edit"
    summary: string
    text: string
    before?: string
    follow?: boolean
  }
  export type Plan =
    | {
        ok: true
        changes: Change[]
        notes: string[]
        /** The configuration above `dir` (up to the git root) that sets it up already; nothing was planned then. */
        enclosing?: { config: string; root: string }
      }
    | { ok: false; error: string }

  /** Examples, one per resource type (each passes `opencode-builtins resources lint`). */
  export const EXAMPLES: Record<Resource.Type, { file: string; text: string }> = {
    checklist: {
      file: "example-checklist.md",
      text: [
        "---",
        "title: Example checklist",
        'description: "What to check before asking for a review (an example: edit or replace it)"',
        "tags: [example, review]",
        "---",
        "",
        "- [ ] Tests added or updated, and passing",
        "- [ ] No debug output or commented-out code left",
        "- [ ] Documentation updated when behaviour changed",
        "",
      ].join("\n"),
    },
    "knowledge-base": {
      file: "example-article.md",
      text: [
        "---",
        "title: Example article",
        'description: "How this project is built and tested (an example: edit or replace it)"',
        "tags: [example, build]",
        "---",
        "",
        "# Building and testing",
        "",
        "Write down what a newcomer (or the agent) must know and cannot read from the code: conventions, commands,",
        "decisions and their reasons. The agent finds articles with `resource-query` and loads one with",
        "`resource-load`; the ones relevant to a session's first prompt are offered to it at the start.",
        "",
      ].join("\n"),
    },
    schema: {
      file: "example-schema.json",
      text:
        JSON.stringify(
          {
            $id: "example-schema",
            title: "Example schema",
            description: "The shape of a configuration file (an example: edit or replace it)",
            "x-tags": ["example"],
            type: "object",
            properties: { name: { type: "string" }, port: { type: "integer", minimum: 1 } },
            required: ["name"],
          },
          null,
          2,
        ) + "\n",
    },
    task: {
      file: "example-task.md",
      text: [
        "---",
        "title: Example task",
        'description: "Steps to add a new command to the project (an example: edit or replace it)"',
        "tags: [example]",
        "references: [example-checklist]",
        "---",
        "",
        "1. Write the command and its help text.",
        "2. Add a test.",
        "3. Go through [[example-checklist]].",
        "",
      ].join("\n"),
    },
    template: {
      file: "example-template.md",
      text: [
        "---",
        "title: Example template",
        'description: "A pull request description (an example: edit or replace it)"',
        "tags: [example, docs]",
        "---",
        "",
        "## What changes",
        "",
        "## Why",
        "",
        "## How it was tested",
        "",
      ].join("\n"),
    },
  }

  /** `text` is without the UTF-8 byte-order mark (`bom`), which an edit keeps; `raw` is the file as read. */
  /** `name`: the file as the project names it (`.opencode/opencode.jsonc`), for messages. */
  type Parsed = { file: string; name: string; text: string; raw: string; bom: string; value: unknown }

  const BOM = "\uFEFF"

  /** The text of an existing file, undefined when there is none, or an error naming it (a folder, unreadable). */
  function readText(file: string): string | undefined | { error: string } {
    try {
      // Strict: a file that is not UTF-8 (a Latin-1 `.gitignore`) written back would get U+FFFD for its accents.
      return TextFile.readSync(file)
    } catch (error) {
      if (TextFile.NotUtf8.is(error)) return { error: `${error.message}; nothing was written` }
      const code = (error as NodeJS.ErrnoException).code
      // ENOTDIR: a file stands where a folder of the path should be (`.opencode`), so there is no such file.
      if (code === "ENOENT" || code === "ENOTDIR") {
        // A link to nothing: a file created at its name would be created where it leads.
        if (notPlain(file) === "a symbolic link")
          return {
            error:
              `${file} is a symbolic link to ${fs.readlinkSync(file)}, which does not exist: remove the link or ` +
              "create that file, and run init again; nothing was written",
          }
        return undefined
      }
      if (code === "EISDIR")
        return {
          error: `${file} is a folder where a file is expected: move it away and run init again; nothing was written`,
        }
      return { error: `cannot read ${file}: ${reason(error)}; nothing was written` }
    }
  }

  function readConfig(file: string, name = path.basename(file)): Parsed | { error: string } | undefined {
    const raw = readText(file)
    if (raw === undefined || typeof raw === "object") return raw
    const bom = raw.startsWith(BOM) ? BOM : ""
    const text = raw.slice(bom.length)
    const errors: ParseError[] = []
    const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false })
    if (errors.length)
      return {
        error: `${name}: ${OpenCodeConfig.syntaxError(text, errors[0])} (not valid JSONC); fix it and run init again — nothing was written`,
      }
    if (!value || typeof value !== "object" || Array.isArray(value))
      return { error: `${name}: the configuration is not a JSON object; nothing was written` }
    return { file, name, text, raw, bom, value }
  }

  /** Whether a `plugin` entry is this package (by name, a versioned name, a tuple with options, or a path to it). */
  export function isOurPlugin(entry: unknown): boolean {
    const name = Array.isArray(entry) ? entry[0] : entry
    if (typeof name !== "string") return false
    if (name === PACKAGE || name.startsWith(`${PACKAGE}@`)) return true
    return /(?:^|[/\\])opencode-builtins(?:[/\\]|$)|packages[/\\]plugin[/\\]index\.ts$/.test(name)
  }

  /** Whether an `mcp` entry runs this package's server. */
  export function isOurMcp(name: string, entry: unknown): boolean {
    if (name === PACKAGE) return true
    const command = (entry as { command?: unknown })?.command
    return Array.isArray(command) && command.some((c) => typeof c === "string" && c.includes(PACKAGE))
  }

  /** Indentation and line ending of an existing file, so inserted text looks like the rest. */
  export function formatting(text: string): FormattingOptions {
    const eol = text.includes("\r\n") ? "\r\n" : "\n"
    const indent = /^([ \t]+)\S/m.exec(text)?.[1]
    if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 1, eol }
    return { insertSpaces: true, tabSize: indent ? indent.length : 2, eol }
  }

  function configChange(dir: string, options: Options): { change?: Change; note?: string } | { error: string } {
    const found: Parsed[] = []
    for (const name of CONFIG_FILES) {
      const read = readConfig(path.join(dir, name), name)
      if (read && "error" in read) return { error: read.error }
      if (read) found.push(read)
    }
    const what = options.mcp ? "the MCP server entry" : "the plugin"
    for (const config of found) {
      const value = config.value as { plugin?: unknown; mcp?: unknown }
      if (value.plugin !== undefined && !Array.isArray(value.plugin))
        return { error: `${config.name}: "plugin" is not an array; nothing was written` }
      if (value.mcp !== undefined && (!value.mcp || typeof value.mcp !== "object" || Array.isArray(value.mcp)))
        return { error: `${config.name}: "mcp" is not an object; nothing was written` }
    }
    const hasPlugin = found.some((c) => ((c.value as { plugin?: unknown[] }).plugin ?? []).some(isOurPlugin))
    const hasMcp = found.some((c) =>
      Object.entries((c.value as { mcp?: Record<string, unknown> }).mcp ?? {}).some(([k, v]) => isOurMcp(k, v)),
    )
    const present = options.mcp ? hasMcp : hasPlugin
    const note =
      options.mcp && hasPlugin
        ? "the plugin is configured too: OpenCode then offers the resource tools twice (remove one of them)"
        : !options.mcp && hasMcp
          ? "an opencode-builtins MCP entry is configured too: OpenCode then offers the resource tools twice"
          : undefined
    if (present) return { note }

    // The first existing file gets the entry (the root's before the .opencode folder's, opencode.jsonc before
    // opencode.json): OpenCode joins the plugin lists of all of them, and no new opencode.json joins an existing one.
    const target = found[0]
    if (!target) {
      const config = options.mcp
        ? { $schema: SCHEMA, mcp: { [PACKAGE]: MCP_ENTRY } }
        : { $schema: SCHEMA, plugin: [PACKAGE] }
      return {
        note,
        change: {
          path: path.join(dir, "opencode.json"),
          action: "create",
          summary: `created with ${what}`,
          text: JSON.stringify(config, null, 2) + "\n",
        },
      }
    }
    const value = target.value as { plugin?: unknown[]; mcp?: Record<string, unknown> }
    const edits = options.mcp
      ? value.mcp
        ? addProperty(target.text, ["mcp"], PACKAGE, MCP_ENTRY)
        : addProperty(target.text, [], "mcp", { [PACKAGE]: MCP_ENTRY })
      : value.plugin
        ? append(target.text, ["plugin"], PACKAGE)
        : addProperty(target.text, [], "plugin", [PACKAGE])
    const text = applyEdits(target.text, edits)
    // The edit must give valid JSONC that has the entry, or nothing is written.
    const errors: ParseError[] = []
    const after = parse(text, errors, { allowTrailingComma: true }) as typeof value
    const ok = options.mcp ? isOurMcp(PACKAGE, after?.mcp?.[PACKAGE]) : (after?.plugin ?? []).some(isOurPlugin)
    if (errors.length || !ok) return { error: `${target.name}: could not be edited safely; nothing was written` }
    return {
      note,
      change: {
        path: target.file,
        action: "edit",
        summary: options.mcp ? `added "mcp.${PACKAGE}"` : `added "${PACKAGE}" to "plugin"`,
        text: target.bom + text,
        before: target.raw,
        follow: true,
      },
    }
  }

  /**
   * The edit appending `item` to the array at `at`, in the array's own style: on the last element's line when the
   * list is on one line, else on a new line indented like that element, after the element's comma and any comment
   * on its line (jsonc-parser's own insertion would put it before that comment, taking the comment with it). A
   * trailing comma stays trailing.
   *
   * @example
   * applyEdits('{ "plugin": ["a"] }', Init.append('{ "plugin": ["a"] }', ["plugin"], "b")) // '{ "plugin": ["a", "b"] }'
   */
  export function append(text: string, at: (string | number)[], item: string): Edit[] {
    const node = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, at)
    if (!node) return modify(text, at, [item], { formattingOptions: formatting(text) })
    return insertLast(text, node, () => JSON.stringify(item))
  }

  /**
   * The edit adding `key: value` to the object at `at` (`[]`: the top level) in the style `append` keeps, so no other
   * line of the file changes (jsonc-parser's formatted insertion re-formats the line of the property before it: a
   * user's `"instructions": ["README.md"],` came back over three lines). Arrays of plain values are printed on one
   * line, objects over several lines indented like the file, or on one line inside an object written on one line.
   *
   * @example
   * Init.addProperty('{\n  "a": 1,\n}\n', [], "plugin", ["opencode-builtins"]) // '{\n  "a": 1,\n  "plugin": ["opencode-builtins"],\n}\n' once applied
   */
  export function addProperty(text: string, at: string[], key: string, value: unknown): Edit[] {
    const root = parseTree(text, [], { allowTrailingComma: true })
    const node = root && (at.length ? findNodeAtLocation(root, at) : root)
    if (node?.type !== "object" || !node.children?.length)
      return modify(text, [...at, key], value, { formattingOptions: formatting(text) })
    const options = formatting(text)
    const unit = options.insertSpaces ? " ".repeat(options.tabSize ?? 2) : "\t"
    return insertLast(text, node, (indent, eol) => `${JSON.stringify(key)}: ${render(value, indent, unit, eol)}`)
  }

  /** `value` as JSON: plain values and arrays of them on one line, objects over lines (`eol` undefined: one line). */
  function render(value: unknown, indent: string, unit: string, eol: string | undefined): string {
    if (Array.isArray(value)) {
      const items = value.map((v) => render(v, indent + unit, unit, eol))
      if (!eol || value.every((v) => v === null || typeof v !== "object")) return `[${items.join(", ")}]`
      return `[${eol}${items.map((i) => indent + unit + i).join("," + eol)}${eol}${indent}]`
    }
    if (value && typeof value === "object") {
      const entries = Object.entries(value).map(
        ([k, v]) => `${JSON.stringify(k)}: ${render(v, indent + unit, unit, eol)}`,
      )
      if (!entries.length) return "{}"
      if (!eol) return `{ ${entries.join(", ")} }`
      return `{${eol}${entries.map((e) => indent + unit + e).join("," + eol)}${eol}${indent}}`
    }
    return JSON.stringify(value)
  }

  /**
   * The edits inserting what `render` gives (for the indentation of its line, and the line ending; no line ending when
   * it goes on one line) after the last child of `node` (an array or object): after that child's comma and any comment
   * on its line, on a new line indented like it, or on its line when the container is written on one line.
   */
  function insertLast(text: string, node: Node, render: (indent: string, eol: string | undefined) => string): Edit[] {
    const last = node.children?.[node.children.length - 1]
    if (!last) return [{ offset: node.offset + 1, length: 0, content: render("", undefined) }]
    const end = last.offset + last.length
    let i = end
    const spaces = () => {
      while (text[i] === " " || text[i] === "\t") i++
    }
    const comment = () => {
      if (text.startsWith("//", i)) {
        while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++
        return true
      }
      if (text.startsWith("/*", i)) {
        const close = text.indexOf("*/", i + 2)
        if (close < 0 || /[\r\n]/.test(text.slice(i, close))) return false
        i = close + 2
        return true
      }
      return false
    }
    spaces()
    while (comment()) spaces()
    const comma = text[i] === ","
    if (comma) i++
    spaces()
    while (comment()) spaces()
    const lineStart = text.lastIndexOf("\n", last.offset - 1) + 1
    const indent = /^[ \t]*/.exec(text.slice(lineStart))![0]
    if (text[i] !== "\n" && text[i] !== "\r")
      // One line: right after the last child (a trailing comma then follows the new one).
      return [{ offset: end, length: 0, content: `, ${render(indent, undefined)}` }]
    const eol = text[i] === "\r" ? "\r\n" : "\n"
    return [
      ...(comma ? [] : [{ offset: end, length: 0, content: "," }]),
      { offset: i, length: 0, content: `${eol}${indent}${render(indent, eol)}${comma ? "," : ""}` },
    ]
  }

  function gitignoreChange(dir: string): Change | undefined | { error: string } {
    const file = path.join(dir, ".gitignore")
    const kind = notPlain(file)
    // A folder there is named by `readText`, as for the configuration files.
    if (kind && kind !== "a folder") return { error: linkedGitignore(file, kind) }
    const read = readText(file)
    if (typeof read === "object") return read
    const exists = read !== undefined
    const text = read ?? ""
    const lines = new Set(text.split(/\r?\n/).map((l) => l.trim()))
    const missing = LocalState.GITIGNORE.filter(
      (entry) => !lines.has(entry) && !lines.has(entry.replace(/\/$/, "")) && !lines.has("/" + entry),
    )
    if (!missing.length) return undefined
    const eol = text.includes("\r\n") ? "\r\n" : "\n"
    const gap = text && !text.endsWith("\n") ? eol : ""
    const block = [
      "# opencode-builtins: local state (learnings, captured tool calls) and the security audit log",
      ...missing,
    ]
    return {
      path: file,
      action: exists ? "edit" : "create",
      summary: `ignores ${missing.join(", ")}`,
      text: text + gap + (text.trim() ? eol : "") + block.join(eol) + eol,
      before: exists ? text : undefined,
    }
  }

  /** What stands at `file` when it is not a plain file or absent: "a symbolic link", "a folder", … */
  function notPlain(file: string): string | undefined {
    let stat: fs.Stats
    try {
      stat = fs.lstatSync(file)
    } catch {
      return undefined
    }
    if (stat.isFile()) return undefined
    if (stat.isSymbolicLink()) return "a symbolic link"
    if (stat.isDirectory()) return "a folder"
    return "not a regular file (a pipe, socket or device)"
  }

  /**
   * Why a `.gitignore` that is not a plain file is not edited, and what to do. Git does not read a `.gitignore` that
   * is a link (it opens it without following links since 2.32), so editing where it leads would change another file
   * (the policy file, `.git/config`: red team GE2) and ignore nothing.
   */
  function linkedGitignore(file: string, kind: string): string {
    if (kind !== "a symbolic link")
      return `${file} is ${kind}, where a file is expected: move it away and run init again; nothing was written`
    let target = "?"
    try {
      target = fs.readlinkSync(file)
    } catch {}
    return (
      `${file} is a symbolic link (to ${target}): init does not write through a link, and git does not read a ` +
      ".gitignore that is one. If you made it, replace it with a copy of the file it leads to; if you did not (a " +
      "command of an agent session can leave one), remove it. Then run init again; nothing was written"
    )
  }

  /**
   * Where writing `change` lands: the file a link at its path leads to for an edit that follows links, else the name
   * itself in its folder's real place (links of the folders on the way followed, as the kernel does).
   */
  function landing(change: Change): string {
    if (change.action === "edit" && change.follow) return SecurityPath.physicalPrefix(change.path)
    return path.join(SecurityPath.physicalPrefix(path.dirname(change.path)), path.basename(change.path))
  }

  /** The folder whose security policy applies to `dir`: the nearest one above it holding `.git`, else `dir`. */
  function policyRoot(dir: string): string {
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
      if (fs.existsSync(path.join(d, ".git"))) return d
      if (d === path.dirname(d)) return path.resolve(dir)
    }
  }

  /**
   * Why a planned change may not be written where a link sends it, or undefined. A change that a link (the file's
   * own, or a folder's on the way) sends elsewhere than its name in the project is refused when the file it lands on
   * is kept from writes by the project's security policy for any role (its rules, the policy files, the audit log,
   * OpenCode's configuration and code folders: the same policy the layer enforces, with the host paths it protects);
   * the project's own configuration files, which init edits anyway, excepted. A link a command left could otherwise
   * have init, run by the user outside the sandbox, write what no role may write. An invalid policy cannot tell, so
   * a link is then refused too. The policy is read only when some change goes through a link.
   */
  function throughLink(dir: string, changes: readonly Change[], env: Record<string, string | undefined>) {
    const base = SecurityPath.physicalPrefix(path.resolve(dir))
    const own = new Set(CONFIG_FILES.map((f) => path.join(base, f)))
    let state: SecurityConfig.State | undefined
    for (const change of changes) {
      const lands = landing(change)
      const named = path.join(base, path.relative(path.resolve(dir), path.resolve(change.path)))
      if (lands === named || own.has(lands)) continue
      if (!state) {
        const root = fs.realpathSync(policyRoot(dir))
        const home = env.HOME || os.homedir()
        const protect = SecurityGuard.hostProtected(fs.realpathSync(dir), root, env)
        state = SecurityConfig.load(root, { home, protect })
      }
      const name = path.relative(path.resolve(dir), path.resolve(change.path))
      if (state.status === "invalid")
        return (
          `${name} leads to ${lands} through a symbolic link, and the project's security policy is not valid, so ` +
          "init cannot tell whether that file is protected: fix the policy (opencode-builtins security validate) " +
          "or replace the link, and run init again; nothing was written"
        )
      if (state.status !== "valid") continue
      const config = state.config
      for (const role of new Set([...config.roles.keys(), config.defaultRole])) {
        const decision = SecurityAccess.checkAccess(config, lands, "write", role)
        if (!decision.allowed)
          return (
            `${name} leads to ${lands} through a symbolic link, a file the security policy keeps from writes ` +
            `(${decision.reason}). init does not write a protected file through a link, which a command of an ` +
            "agent session can leave: if the link is yours, make that change yourself; if not, remove it and run " +
            "init again. Nothing was written"
          )
      }
    }
    return undefined
  }

  /**
   * The folders above `dir` up to its git root (the nearest folder holding `.git`), nearest first: OpenCode reads
   * their configurations (`CONFIG_FILES`) and `.opencode` folders from `dir` too. Empty when `dir` is the git root or
   * is in no git repository (no root to stop at).
   */
  export function above(dir: string): { folders: string[]; root?: string } {
    const start = path.resolve(dir)
    const root = worktreeOf(start)
    if (!root || root === start) return { folders: [] }
    const folders: string[] = []
    for (let d = path.dirname(start); ; d = path.dirname(d)) {
      folders.push(d)
      if (d === root || d === path.dirname(d)) break
    }
    return { folders, root }
  }

  /**
   * The nearest configuration above `dir` (up to the git root) that names what `options` asks for (the plugin, or
   * the MCP entry): OpenCode reads it from `dir` as well, so `dir` is set up already. One that cannot be read or
   * parsed counts as naming nothing (init does not edit it).
   */
  export function enclosing(dir: string, options: Options = {}): { config: string; root: string } | undefined {
    const { folders, root } = above(dir)
    for (const folder of folders) {
      for (const name of CONFIG_FILES) {
        const read = readConfig(path.join(folder, name), name)
        if (!read || "error" in read) continue
        const value = read.value as { plugin?: unknown; mcp?: unknown }
        const named = options.mcp
          ? !!value.mcp &&
            typeof value.mcp === "object" &&
            Object.entries(value.mcp as Record<string, unknown>).some(([k, v]) => isOurMcp(k, v))
          : Array.isArray(value.plugin) && value.plugin.some(isOurPlugin)
        if (named) return { config: read.file, root: root! }
      }
    }
    return undefined
  }

  /** What init would write in `dir`, or why it refuses. Reads only. */
  export function plan(
    dir: string,
    options: Options = {},
    env: Record<string, string | undefined> = process.env,
  ): Plan {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return { ok: false, error: `${dir} is not a directory` }
    const config = configChange(dir, options)
    if ("error" in config) return { ok: false, error: config.error }
    // A folder below one already set up (a package of a monorepo set up at its root) is set up by it: OpenCode reads
    // that configuration from here too. Nothing is planned, unless asked (`standalone`) or this folder's own
    // configuration names the entry already (set up on its own before).
    const outer = !options.standalone && config.change ? enclosing(dir, options) : undefined
    if (outer) return { ok: true, changes: [], notes: [], enclosing: outer }
    const changes: Change[] = []
    if (config.change) changes.push(config.change)
    // The resources of every `.opencode` folder up to the git root are read from here: an example goes only where
    // none of them has that resource folder (no second copy of the same example).
    const resourceDirs = [dir, ...above(dir).folders].map((d) => path.join(d, ".opencode"))
    for (const type of Resource.TYPES) {
      const folder = path.join(dir, ".opencode", type)
      if (resourceDirs.some((d) => fs.existsSync(path.join(d, type)))) continue
      const example = EXAMPLES[type]
      changes.push({
        path: path.join(folder, example.file),
        action: "create",
        summary: `example ${type} resource`,
        text: example.text,
      })
    }
    const ignore = gitignoreChange(dir)
    if (ignore && "error" in ignore) return { ok: false, error: ignore.error }
    if (ignore) changes.push(ignore)
    const linked = throughLink(dir, changes, env)
    if (linked) return { ok: false, error: linked }
    return { ok: true, changes, notes: config.note ? [config.note] : [] }
  }

  /** A planned change that could not be written; nothing of the plan was left behind. */
  export const WriteError = NamedError.create(
    "InitWriteError",
    z.object({ path: z.string(), reason: z.string() }),
    (d) => `cannot write ${d.path}: ${d.reason}`,
  )

  /** A file the plan read changed (or appeared) before the plan was written: nothing was changed. */
  export const ChangedError = NamedError.create(
    "InitFileChanged",
    z.object({ path: z.string() }),
    (d) => `${d.path} changed while init was running (another init, or an editor?); nothing was changed`,
  )

  /**
   * Test seams: `beforeCommit` runs after every file is staged and before they are checked and put in place,
   * `afterCheck` after the check and before the first file is put in place.
   */
  export type ApplyHooks = { beforeCommit?: () => void; afterCheck?: () => void }

  /**
   * Why `change` can no longer be applied as planned: its file changed since it was read, or appeared (a link too:
   * `lstat`), or a file edited by name is no longer a plain file (a link put there since).
   */
  function changedSince(change: Change, target: string): boolean {
    if (change.action === "create") return notPlain(target) !== undefined || fs.existsSync(target)
    if (!change.follow && notPlain(target)) return true
    let now: string
    try {
      now = TextFile.readSync(target)
    } catch {
      return true
    }
    return change.before !== undefined && now !== change.before
  }

  /**
   * Writes the planned changes all or nothing: every file is first written beside its target (an edited file keeps its
   * mode), then each target is checked to be as the plan read it (an edit: same text; a create: still absent), and
   * only then are they put in place: new files linked (never replacing one that appeared since), then edits renamed. A failure removes what was staged and the folders it made, and throws
   * `WriteError` naming the file, or `ChangedError` when a file changed in the meantime (plan again: see `setup`).
   *
   * @example
   * Init.apply(Init.plan("/repo", { mcp: false }).changes) // throws Init.WriteError when a file cannot be written
   */
  export function apply(changes: readonly Change[], hooks: ApplyHooks = {}) {
    const staged: { tmp: string; target: string; change: Change }[] = []
    const made: string[] = []
    const undo = () => {
      for (const s of staged) fs.rmSync(s.tmp, { force: true })
      for (const dir of made.reverse()) fs.rmSync(dir, { recursive: true, force: true })
    }
    for (const change of changes) {
      try {
        const first = fs.mkdirSync(path.dirname(change.path), { recursive: true })
        if (first) made.push(first)
        // A configuration edit follows a link (checked in `plan`); any other edit replaces the name itself.
        const target = change.action === "edit" && change.follow ? fs.realpathSync(change.path) : change.path
        const mode = change.action === "edit" ? fs.lstatSync(target).mode & 0o7777 : undefined
        const tmp = TempFile.beside(target, "init")
        // Exactly the edited file's mode: a mode given to writeFile alone is cut by the umask (0664 became 0644).
        TempFile.writeSync(tmp, change.text, mode)
        staged.push({ tmp, target, change })
      } catch (error) {
        undo()
        throw new WriteError({ path: change.path, reason: `${reason(error)}; nothing was changed` }, { cause: error })
      }
    }
    hooks.beforeCommit?.()
    const changed = staged.find((s) => changedSince(s.change, s.target))
    if (changed) {
      undo()
      throw new ChangedError({ path: changed.change.path })
    }
    hooks.afterCheck?.()
    // New files first, each linked into place only if its name is still free (an atomic check, where a rename would
    // replace a file that appeared after the check above): one that appeared meanwhile undoes the new files linked.
    const creates = staged.filter((s) => s.change.action === "create")
    for (const [i, s] of creates.entries()) {
      try {
        place(s.tmp, s.target)
      } catch (error) {
        for (const done of creates.slice(0, i)) fs.rmSync(done.target, { force: true })
        undo()
        if ((error as NodeJS.ErrnoException).code === "EEXIST") throw new ChangedError({ path: s.change.path })
        throw new WriteError({ path: s.target, reason: `${reason(error)}; nothing was changed` }, { cause: error })
      }
    }
    for (const s of creates) fs.rmSync(s.tmp, { force: true })
    const edits = staged.filter((s) => s.change.action !== "create")
    for (const [i, s] of edits.entries()) {
      try {
        fs.renameSync(s.tmp, s.target)
      } catch (error) {
        // Only a file system failing between two renames gets here; what was renamed stays, the rest is removed.
        for (const rest of edits.slice(i)) fs.rmSync(rest.tmp, { force: true })
        const placed = creates.length + i
        throw new WriteError(
          { path: s.target, reason: `${reason(error)} (${placed} of ${staged.length} files were already in place)` },
          { cause: error },
        )
      }
    }
  }

  /**
   * Plans and applies, planning again (up to `attempts` times) when a file changed between the read and the write, so
   * two runs at once both land: the second sees the first one's edit. Returns the plan that was written.
   *
   * @example
   * const plan = Init.setup("/repo", { mcp: true }) // { ok: true, changes, notes } or { ok: false, error }
   */
  export function setup(dir: string, options: Options = {}, hooks: ApplyHooks = {}, attempts = 5): Plan {
    for (let attempt = 1; ; attempt++) {
      const planned = plan(dir, options)
      if (!planned.ok) return planned
      try {
        apply(planned.changes, hooks)
        return planned
      } catch (error) {
        if (!ChangedError.is(error) || attempt >= attempts) throw error
      }
    }
  }

  /** `tmp` at `target` unless a file is there: a hard link, or a copy made exclusively where links are not supported. */
  function place(tmp: string, target: string) {
    try {
      fs.linkSync(tmp, target)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EMLINK") throw error
      fs.copyFileSync(tmp, target, fs.constants.COPYFILE_EXCL)
    }
  }

  function reason(error: unknown): string {
    const code = (error as NodeJS.ErrnoException)?.code
    if (code === "EACCES" || code === "EPERM") return "permission denied"
    if (code === "ENOSPC") return "no space left on the device"
    if (code === "EROFS") return "the file system is read-only"
    if (code === "ENOTDIR" || code === "EEXIST") return "a file stands where a folder is needed"
    if (code === "ENOENT") return "a folder on the way does not exist or cannot hold files"
    return error instanceof Error ? error.message : String(error)
  }
}
