// Applying the series to an OpenCode checkout: verify the pin, vendor packages/core, apply every patch in order with
// no fuzz, all or nothing.
import { spawnSync } from "child_process"
import fs from "fs"
import os from "os"
import path from "path"
import { Series } from "./series"

/**
 * Applies `patches/` to an OpenCode checkout.
 *
 * - The checkout must be the pinned version (`packages/opencode/package.json`, and the pinned commit when it is a
 *   git checkout whose history has it).
 * - Every upstream file the series changes must be the pinned release's (its git blob id, recorded in the pin);
 *   otherwise the files that differ are named and nothing is changed.
 * - Every patch is first applied to a scratch copy of the files it touches, in order, with `git apply` (exact
 *   context, no fuzz). A failure names the patch and git's message (file and hunk) and changes nothing.
 * - A series that is already applied (it reverses cleanly to the pinned files) is reported as such; the vendored core
 *   is refreshed.
 * - `check` does all of that and changes nothing.
 *
 * @example
 * const report = await PatchApply.run({ checkout: "/src/opencode", patches: "patches", core: "packages/core" })
 * report.status // "applied" | "already-applied" | "would-apply"
 */
export namespace PatchApply {
  export const VENDOR_DIR = "packages/opencode-builtins-core"
  /**
   * The parser libraries the glue embeds in the binary. Apply writes an empty table when the file is absent; the fork
   * build replaces it with the libraries of the build machine (see `scripts/fork.ts`).
   */
  export const GRAMMARS = "packages/opencode/src/builtins/grammars.gen.ts"
  export const GRAMMARS_EMPTY = [
    "// The AST tools' parser libraries embedded in the binary: none (`npm run fork` writes the real table).",
    'import type { AstLanguage } from "@opencode-builtins/core/ast/languages"',
    "",
    "export default {} as Partial<Record<AstLanguage.Name, AstLanguage.Prebuilt>>",
    "",
  ].join("\n")

  export type Options = {
    checkout: string
    patches: string
    core: string
    check?: boolean
    log?: (line: string) => void
  }
  export type Report = { status: "applied" | "already-applied" | "would-apply"; patches: string[]; vendored: boolean }

  export class ApplyError extends Error {
    constructor(
      message: string,
      readonly patch?: string,
    ) {
      super(message)
      this.name = "ApplyError"
    }
  }

  function git(args: string[], cwd: string) {
    const r = spawnSync("git", args, { cwd, encoding: "utf8" })
    return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() }
  }

  /** Checks the checkout is the pinned OpenCode version. */
  export function verifyCheckout(checkout: string, pin: Series.Pin) {
    const pkg = path.join(checkout, "packages/opencode/package.json")
    if (!fs.existsSync(pkg))
      throw new ApplyError(`${checkout} is not an OpenCode checkout (no packages/opencode/package.json)`)
    const version = JSON.parse(fs.readFileSync(pkg, "utf8")).version
    if (version !== pin.version)
      throw new ApplyError(`${checkout} is OpenCode ${version}; this series is for ${pin.version} (${pin.tag})`)
    if (fs.existsSync(path.join(checkout, ".git"))) {
      const head = git(["rev-parse", "HEAD"], checkout)
      const known = git(["cat-file", "-e", `${pin.commit}^{commit}`], checkout)
      if (head.ok && known.ok && head.out !== pin.commit) {
        const ancestor = git(["merge-base", "--is-ancestor", pin.commit, "HEAD"], checkout)
        if (!ancestor.ok)
          throw new ApplyError(
            `${checkout} is at ${head.out.slice(0, 12)}, which does not contain ${pin.tag} (${pin.commit.slice(0, 12)})`,
          )
      }
    }
  }

  /**
   * The pinned files whose content is not the pinned release's, with both blob ids (`actual` undefined: missing).
   *
   * @example
   * PatchApply.drift("/src/opencode", pin) // [{ path: "packages/opencode/src/index.ts", actual: "…", expected: "…" }]
   */
  export function drift(dir: string, pin: Series.Pin) {
    return Object.entries(pin.files)
      .map(([rel, expected]) => {
        const file = path.join(dir, rel)
        const actual = fs.existsSync(file) ? Series.blobId(fs.readFileSync(file)) : undefined
        return { path: rel, actual, expected }
      })
      .filter((f) => f.actual !== f.expected)
  }

  function describeDrift(list: ReturnType<typeof drift>, pin: Series.Pin) {
    return list
      .map((f) => `${f.path}: ${f.actual ? `blob ${f.actual}` : "missing"}, ${pin.tag} has ${f.expected}`)
      .join("\n  ")
  }

  /** Copies the files the series touches (those that exist) into a fresh scratch folder. */
  function scratch(checkout: string, patches: Series.Patch[]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-apply-"))
    for (const p of patches)
      for (const f of p.files) {
        const from = path.join(checkout, f.path)
        const to = path.join(dir, f.path)
        if (fs.existsSync(from) && !fs.existsSync(to)) {
          fs.mkdirSync(path.dirname(to), { recursive: true })
          fs.copyFileSync(from, to)
        }
      }
    return dir
  }

  function applyEach(dir: string, patches: Series.Patch[], reverse: boolean) {
    const ordered = reverse ? [...patches].reverse() : patches
    for (const p of ordered) {
      const r = git(["apply", "--whitespace=nowarn", ...(reverse ? ["--reverse"] : []), p.file], dir)
      if (!r.ok) return { failed: p, message: r.out }
    }
    return undefined
  }

  /** Copies packages/core (sources only) into the checkout's workspace and names its workspace dependencies. */
  export function vendor(core: string, checkout: string): boolean {
    const target = path.join(checkout, VENDOR_DIR)
    const existed = fs.existsSync(target)
    const files = (fs.readdirSync(core, { recursive: true }) as string[]).filter((rel) => {
      const top = rel.split(path.sep)[0]
      return top !== "test" && top !== "node_modules" && fs.statSync(path.join(core, rel)).isFile()
    })
    // Refresh the sources; keep what `bun install` put in node_modules.
    if (existed)
      for (const entry of fs.readdirSync(target))
        if (entry !== "node_modules") fs.rmSync(path.join(target, entry), { recursive: true, force: true })
    for (const rel of files) {
      const to = path.join(target, rel)
      fs.mkdirSync(path.dirname(to), { recursive: true })
      fs.copyFileSync(path.join(core, rel), to)
    }
    // Inside OpenCode's workspace the plugin package is the workspace's own.
    const pkg = JSON.parse(fs.readFileSync(path.join(target, "package.json"), "utf8"))
    if (pkg.dependencies?.["@opencode-ai/plugin"]) pkg.dependencies["@opencode-ai/plugin"] = "workspace:*"
    fs.writeFileSync(path.join(target, "package.json"), JSON.stringify(pkg, null, 2) + "\n")
    fs.writeFileSync(
      path.join(target, "VENDORED.md"),
      "Copied from OpenCode Built-ins packages/core by `npm run apply`. Edit the original, not this copy.\n",
    )
    return !existed
  }

  export async function run(options: Options): Promise<Report> {
    const log = options.log ?? (() => {})
    const checkout = path.resolve(options.checkout)
    const report = Series.validate(options.patches)
    if (report.errors.length) throw new ApplyError(`the series is invalid:\n  ${report.errors.join("\n  ")}`)
    verifyCheckout(checkout, report.pin!)
    const names = report.patches.map((p) => p.name)

    const pin = report.pin!
    const drifted = drift(checkout, pin)
    if (drifted.length) {
      // Either the series is applied already (it reverses to the pinned files), or the files are not the release's.
      const reversed = scratch(checkout, report.patches)
      let beyond: ReturnType<typeof drift> | undefined
      try {
        if (!applyEach(reversed, report.patches, true)) {
          beyond = drift(reversed, pin)
          if (!beyond.length) {
            log(`already applied: ${names.length} patches`)
            if (options.check) return { status: "already-applied", patches: names, vendored: false }
            vendor(options.core, checkout)
            writeDefaults(checkout)
            log(`refreshed ${VENDOR_DIR}`)
            return { status: "already-applied", patches: names, vendored: true }
          }
        }
      } finally {
        fs.rmSync(reversed, { recursive: true, force: true })
      }
      throw new ApplyError(
        beyond
          ? `${checkout}: the series is applied, but files it changes differ from ${pin.tag} besides the patches (nothing was changed):\n  ${describeDrift(beyond, pin)}`
          : `${checkout}: files the series changes are not those of ${pin.tag} (nothing was changed):\n  ${describeDrift(drifted, pin)}`,
      )
    }

    const forward = scratch(checkout, report.patches)
    try {
      const failure = applyEach(forward, report.patches, false)
      if (failure && !Object.keys(pin.files).length) {
        // A series that only adds files: applied already when it reverses cleanly.
        const reversed = scratch(checkout, report.patches)
        const applied = !applyEach(reversed, report.patches, true)
        fs.rmSync(reversed, { recursive: true, force: true })
        if (applied) {
          if (options.check) return { status: "already-applied", patches: names, vendored: false }
          vendor(options.core, checkout)
          writeDefaults(checkout)
          return { status: "already-applied", patches: names, vendored: true }
        }
      }
      if (failure)
        throw new ApplyError(
          `${failure.failed.name} does not apply to ${checkout} (nothing was changed):\n${failure.message}`,
          failure.failed.name,
        )
    } finally {
      fs.rmSync(forward, { recursive: true, force: true })
    }
    if (options.check) {
      log(`would apply ${names.length} patches`)
      return { status: "would-apply", patches: names, vendored: false }
    }

    // Back up what the patches touch, so that an unexpected failure can be rolled back completely.
    const backup = new Map<string, Buffer | null>()
    for (const p of report.patches)
      for (const f of p.files) {
        const file = path.join(checkout, f.path)
        if (!backup.has(file)) backup.set(file, fs.existsSync(file) ? fs.readFileSync(file) : null)
      }
    const vendorExisted = fs.existsSync(path.join(checkout, VENDOR_DIR))
    const grammarsExisted = fs.existsSync(path.join(checkout, GRAMMARS))
    try {
      vendor(options.core, checkout)
      for (const p of report.patches) {
        const r = git(["apply", "--whitespace=nowarn", p.file], checkout)
        if (!r.ok) throw new ApplyError(`${p.name} failed while applying:\n${r.out}`, p.name)
        log(`applied ${p.name}`)
      }
      writeDefaults(checkout)
    } catch (error) {
      for (const [file, content] of backup) {
        if (content === null) fs.rmSync(file, { force: true })
        else fs.writeFileSync(file, content)
      }
      if (!vendorExisted) fs.rmSync(path.join(checkout, VENDOR_DIR), { recursive: true, force: true })
      if (!grammarsExisted) fs.rmSync(path.join(checkout, GRAMMARS), { force: true })
      throw error
    }
    return { status: "applied", patches: names, vendored: true }
  }

  /** Files the patched checkout needs that a build later fills in: written only when absent. */
  function writeDefaults(checkout: string) {
    const file = path.join(checkout, GRAMMARS)
    if (fs.existsSync(file) || !fs.existsSync(path.dirname(file))) return
    fs.writeFileSync(file, GRAMMARS_EMPTY)
  }
}
