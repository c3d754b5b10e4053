import { distance } from "fastest-levenshtein"
import fs from "fs"
import path from "path"
import type z from "zod"
import type { Logger } from "./util/log"

/**
 * OpenCode Built-ins options, shared by both routes: the project's `.opencode/opencode-builtins.json`, plus, for the
 * external plugin on OpenCode 1.18+, options given in `"plugin": [["opencode-builtins", { ... }]]` (1.2.15 has no
 * plugin options). Explicit options win over the file, key by key at the top level of each feature section.
 *
 * @example
 * // .opencode/opencode-builtins.json
 * { "resources": { "maxResourcesPerSession": 10 }, "discovery": { "enabled": false } }
 */
export type Options = Record<string, Record<string, unknown> | undefined>

export const OPTIONS_FILE = ".opencode/opencode-builtins.json"

export function loadOptions(directory: string, explicit: unknown): { options: Options; error?: string } {
  let fromFile: Options = {}
  let error: string | undefined
  const file = path.join(directory, OPTIONS_FILE)
  if (fs.existsSync(file)) {
    try {
      const parsed = JSON.parse(fs.readFileSync(file, "utf8"))
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("expected a JSON object")
      fromFile = parsed
    } catch (e) {
      error = `${file}: ${e instanceof Error ? e.message : String(e)}; using defaults`
    }
  }
  const given = explicit && typeof explicit === "object" && !Array.isArray(explicit) ? (explicit as Options) : {}
  const options: Options = { ...fromFile }
  for (const [key, value] of Object.entries(given)) {
    const base = options[key]
    options[key] =
      value && typeof value === "object" && !Array.isArray(value) && base && typeof base === "object"
        ? { ...base, ...value }
        : (value as Record<string, unknown>)
  }
  return { options, error }
}

/**
 * Top-level keys of the options that no feature reads, each reported once with a warning naming it and, when it is a
 * feature's id or close to a section's name, the section meant (`"todo-continuation"` → `todoContinuation`): such a
 * section is ignored, so the user's setting would otherwise do nothing without a word. `$schema` is allowed.
 *
 * @example
 * unknownSections({ "todo-continuation": { enabled: false } }, [{ id: "todo-continuation", section: "todoContinuation" }], log)
 * // logs: unknown section "todo-continuation" in the options ignored (did you mean "todoContinuation"?); …
 */
export function unknownSections(
  options: Options,
  features: readonly { id: string; section: string }[],
  log: Logger,
): string[] {
  const sections = [...new Set(features.map((f) => f.section))]
  const unknown = Object.keys(options).filter((key) => key !== "$schema" && !sections.includes(key))
  for (const key of unknown) {
    const meant = suggestSection(key, features)
    log.warn(
      `unknown section "${key}" in the options ignored${meant ? ` (did you mean "${meant}"?)` : ""}; sections: ${sections.join(", ")}`,
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
 * replaced by their defaults; unknown keys are reported and ignored. `enabled` is the plugin's own switch.
 *
 * @example
 * const config = validSection(Resource.Config, { maxResourcesPerSession: "x" }, "resources", log)
 * // logs: resources.maxResourcesPerSession: expected number, received string — using the default
 */
export function validSection<T extends z.ZodObject>(
  schema: T,
  section: Record<string, unknown>,
  name: string,
  log: Logger,
): z.input<T> {
  const { enabled: _enabled, ...given } = section
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
