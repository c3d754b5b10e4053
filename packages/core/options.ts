import { distance } from "fastest-levenshtein"
import fs from "fs"
import path from "path"
import type z from "zod"
import { ResourceProject } from "./resource/project"
import type { Logger } from "./util/log"
import { OpenCodeConfig } from "./util/opencode-config"

/**
 * OpenCode Built-ins options, shared by both routes: the project's `.opencode/opencode-builtins.json` files, plus, for
 * the external plugin on OpenCode 1.18+, options given in `"plugin": [["opencode-builtins", { ... }]]` (1.2.15 has no
 * plugin options). Explicit options win over the files, key by key at the top level of each feature section.
 *
 * The files are found as OpenCode finds its own project config (`opencode.json`): in every folder from the one OpenCode
 * starts in up to the worktree (the git root; "/" outside git is never used, as for resources), so OpenCode started in
 * `packages/server` of a repository still reads the repository's file. They merge as OpenCode merges its config files:
 * the farthest first, each nearer file merged over it deeply (objects key by key at every level, any other value
 * replaced whole), and, as OpenCode adds up its `plugin` and `instructions` lists, the lists of `LISTS_ADDED_UP` add up
 * (farthest first, each entry once); other lists are replaced whole. A UTF-8 byte-order mark at the start of a file is
 * skipped.
 *
 * @example
 * // .opencode/opencode-builtins.json
 * { "resources": { "maxResourcesPerSession": 10 }, "discovery": { "enabled": false } }
 */
export type Options = Record<string, Record<string, unknown> | undefined>

export const OPTIONS_FILE = ".opencode/opencode-builtins.json"

/**
 * The list options that add up across options files and the plugin's explicit options instead of the nearer list
 * replacing the farther one, as OpenCode adds up its own `plugin` and `instructions` lists (farthest first, each entry
 * once). A list is here when each file's entries stand alone and a user adding one in a package means "these too":
 * `capture.exclude` (tools never captured: a package excluding `bash` keeps the root's `webfetch` excluded). Lists
 * whose whole value is one setting are replaced: `readme.names` (an order of preference, first match wins) and an LSP
 * server's `command` (one command line) and `extensions` (the files that server takes).
 */
export const LISTS_ADDED_UP: readonly string[] = ["capture.exclude"]

/** Where each top-level section of a loaded options object came from (files, or the plugin's options), for warnings. */
const origins = new WeakMap<Options, Record<string, string[]>>()

/** What `unknownSections` names as the origin of a section given as the plugin's explicit options. */
export const EXPLICIT_ORIGIN = "the plugin's options"

/** Where OpenCode runs: its directory and, when known, the worktree (git root) holding it. */
export type OptionsPlace = string | { directory: string; worktree?: string }

/**
 * The options files that apply to a place, farthest first (the order they merge in); only files that exist.
 *
 * @example
 * optionsFiles({ directory: "/repo/packages/server", worktree: "/repo" })
 * // ["/repo/.opencode/opencode-builtins.json", "/repo/packages/server/.opencode/opencode-builtins.json"]
 */
export function optionsFiles(place: OptionsPlace): string[] {
  const { directory, worktree } = typeof place === "string" ? { directory: place, worktree: undefined } : place
  return ResourceProject.resolve(directory, worktree)
    .opencodeDirs.map((dir) => path.join(path.dirname(dir), OPTIONS_FILE))
    .filter((file) => fs.existsSync(file))
    .reverse()
}

/**
 * The options of a place: its options files merged (see the module's description), then the plugin's explicit options;
 * the files read, and what was wrong with any that could not be (each still leaves the others in force).
 *
 * @example
 * loadOptions({ directory: "/repo/packages/server", worktree: "/repo" }, undefined)
 * // { options: { lsp: { enabled: false } }, files: ["/repo/.opencode/opencode-builtins.json"] }
 */
export function loadOptions(
  place: OptionsPlace,
  explicit: unknown,
): { options: Options; error?: string; files: string[] } {
  let fromFile: Options = {}
  const errors: string[] = []
  const files: string[] = []
  const from: Record<string, string[]> = {}
  const note = (sections: object, origin: string) => {
    for (const key of Object.keys(sections)) (from[key] ??= []).push(origin)
  }
  for (const file of optionsFiles(place)) {
    try {
      // JSON with comments and trailing commas, as OpenCode reads its own configuration; an editor's BOM skipped.
      const read = OpenCodeConfig.parseBytes(fs.readFileSync(file))
      if ("error" in read) throw new Error(read.error)
      fromFile = mergeDeep(fromFile, read.config) as Options
      files.push(file)
      if (plain(read.config)) note(read.config, file)
    } catch (e) {
      errors.push(`${file}: ${e instanceof Error ? e.message : String(e)}; using defaults for what it would set`)
    }
  }
  const given = plain(explicit) ? (explicit as Options) : {}
  note(given, EXPLICIT_ORIGIN)
  const options: Options = { ...fromFile }
  for (const [key, value] of Object.entries(given)) {
    const base = options[key]
    if (!plain(value) || !plain(base)) {
      options[key] = value
      continue
    }
    // Key by key at the top level of the section; the lists that add up still do.
    const section: Record<string, unknown> = { ...base }
    for (const [name, v] of Object.entries(value)) section[name] = combined(`${key}.${name}`, section[name], v)
    options[key] = section
  }
  origins.set(options, from)
  return { options, files, ...(errors.length ? { error: errors.join("\n") } : {}) }
}

/**
 * The options of a place, as both routes' composition gets them: the files read are logged (info), a broken file is
 * a warning naming it. The plugin and the fork's glue only pass where OpenCode runs.
 *
 * @example
 * const options = projectOptions({ directory: input.directory, worktree: input.worktree }, explicit, log)
 */
export function projectOptions(place: OptionsPlace, explicit: unknown, log: Logger): Options {
  const { options, error, files } = loadOptions(place, explicit)
  if (error) log.warn(error)
  if (files.length) log.info(`options read from ${files.join(", ")} (nearest last, overriding)`)
  return options
}

/**
 * Whether a feature's section leaves it on: only `"enabled": false` turns it off (a value of another type is reported by
 * `validSection` and leaves it on).
 *
 * @example
 * sectionEnabled({ enabled: false }) // false
 * sectionEnabled(5) // true
 */
export function sectionEnabled(section: unknown): boolean {
  return !(plain(section) && section.enabled === false)
}

function plain(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value)
}

/**
 * OpenCode's config merge: objects merged key by key at every level, the lists of `LISTS_ADDED_UP` added up, any
 * other value (other lists too) replaced. `at` is the option path of `base` ("" at the top).
 */
function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>, at = ""): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const where = at ? `${at}.${key}` : key
    out[key] =
      plain(value) && plain(out[key])
        ? mergeDeep(out[key] as Record<string, unknown>, value, where)
        : combined(where, out[key], value)
  }
  return out
}

/** The value at option path `where` when `over` is given over `base`: both lists added up when the path is listed. */
function combined(where: string, base: unknown, over: unknown): unknown {
  if (LISTS_ADDED_UP.includes(where) && Array.isArray(base) && Array.isArray(over))
    return [...new Set([...base, ...over])]
  return over
}

/**
 * Top-level keys of the options that no feature reads, each reported once with a warning naming it, where it is
 * written (the options files holding it, or the plugin's options, when `loadOptions` read them) and, when it is a
 * feature's id or close to a section's name, the section meant (`"todo-continuation"` → `todoContinuation`): such a
 * section is ignored, so the user's setting would otherwise do nothing without a word. `$schema` is allowed.
 *
 * @example
 * unknownSections({ "todo-continuation": { enabled: false } }, [{ id: "todo-continuation", section: "todoContinuation" }], log)
 * // logs: unknown section "todo-continuation" in the options ignored (did you mean "todoContinuation"?); …
 * // from loadOptions: unknown section "todo-continuation" in /repo/packages/server/.opencode/opencode-builtins.json ignored …
 */
export function unknownSections(
  options: Options,
  features: readonly { id: string; section: string }[],
  log: Logger,
): string[] {
  const sections = [...new Set(features.map((f) => f.section))]
  const unknown = Object.keys(options).filter((key) => key !== "$schema" && !sections.includes(key))
  const from = origins.get(options)
  for (const key of unknown) {
    const meant = suggestSection(key, features)
    const where = from?.[key]?.length ? from[key].join(" and ") : "the options"
    log.warn(
      `unknown section "${key}" in ${where} ignored${meant ? ` (did you mean "${meant}"?)` : ""}; sections: ${sections.join(", ")}`,
    )
  }
  return unknown
}

/** The section a misnamed key means: a feature id, the same letters (case, `-`, `_`), or at most two edits away. */
function suggestSection(key: string, features: readonly { id: string; section: string }[]): string | undefined {
  const byId = features.find((f) => f.id === key)
  if (byId) return byId.section
  const flat = (s: string) => s.toLowerCase().replace(/[-_\s]/g, "")
  const same = features.find((f) => flat(f.section) === flat(key) || flat(f.id) === flat(key))
  if (same) return same.section
  if (flat(key).length < 4) return undefined
  let best: { section: string; edits: number } | undefined
  for (const f of features) {
    const edits = Math.min(distance(flat(key), flat(f.section)), distance(flat(key), flat(f.id)))
    if (edits <= 2 && (!best || edits < best.edits)) best = { section: f.section, edits }
  }
  return best?.section
}

/**
 * A feature's options checked against its schema. Invalid values are reported (naming the key and the problem) and
 * replaced by their defaults; unknown keys are reported and ignored. `enabled` is the plugin's own switch, read by
 * `sectionEnabled`; a value that is not true or false is reported here (the feature stays on), and so is a section that
 * is not an object (`"discovery": 5`: every default used). The plugin, the fork and the commands (`resources`,
 * `discover`) report a section's problems through this one function.
 *
 * @example
 * const config = validSection(Resource.Config, { maxResourcesPerSession: "x" }, "resources", log)
 * // logs: resources.maxResourcesPerSession: expected number, received string — using the default
 */
export function validSection<T extends z.ZodObject>(
  schema: T,
  section: unknown,
  name: string,
  log: Logger,
): z.input<T> {
  if (section === undefined) return {} as z.input<T>
  if (!plain(section)) {
    log.error(`${name}: expected an object of options, got ${JSON.stringify(section)} — using the defaults`)
    return {} as z.input<T>
  }
  const { enabled, ...given } = section
  if (enabled !== undefined && typeof enabled !== "boolean")
    log.error(`${name}.enabled: expected true or false, got ${JSON.stringify(enabled)} — the feature stays on`)
  const known = new Set(Object.keys(schema.shape))
  const kept: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(given)) {
    if (!known.has(key)) {
      log.warn(`unknown option ${name}.${key} ignored; known options: ${[...known].join(", ")}`)
      continue
    }
    const check = schema.shape[key].safeParse(value)
    if (!check.success) {
      log.error(`${name}.${key}: ${check.error.issues[0]?.message ?? "invalid value"} — using the default`)
      continue
    }
    kept[key] = value
  }
  return kept as z.input<T>
}
