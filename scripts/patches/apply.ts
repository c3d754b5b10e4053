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
 * - Every patch is first applied to a scratch copy of the files it touches, in order, with `git apply` (exact
 *   context, no fuzz). A failure names the patch and git's message (file and hunk) and changes nothing.
 * - A series that is already applied (it reverses cleanly) is reported as such; the vendored core is refreshed.
 * - `check` does all of that and changes nothing.
 *
 * @example
 * const report = await PatchApply.run({ checkout: "/src/opencode", patches: "patches", core: "packages/core" })
 * report.status // "applied" | "already-applied" | "would-apply"
 */
export namespace PatchApply {
  export const VENDOR_DIR = "packages/opencode-builtins-core"

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

    const reversed = scratch(checkout, report.patches)
    try {
      if (!applyEach(reversed, report.patches, true)) {
        log(`already applied: ${names.length} patches`)
        if (options.check) return { status: "already-applied", patches: names, vendored: false }
        vendor(options.core, checkout)
        log(`refreshed ${VENDOR_DIR}`)
        return { status: "already-applied", patches: names, vendored: true }
      }
    } finally {
      fs.rmSync(reversed, { recursive: true, force: true })
    }

    const forward = scratch(checkout, report.patches)
    try {
      const failure = applyEach(forward, report.patches, false)
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
    try {
      vendor(options.core, checkout)
      for (const p of report.patches) {
        const r = git(["apply", "--whitespace=nowarn", p.file], checkout)
        if (!r.ok) throw new ApplyError(`${p.name} failed while applying:\n${r.out}`, p.name)
        log(`applied ${p.name}`)
      }
    } catch (error) {
      for (const [file, content] of backup) {
        if (content === null) fs.rmSync(file, { force: true })
        else fs.writeFileSync(file, content)
      }
      if (!vendorExisted) fs.rmSync(path.join(checkout, VENDOR_DIR), { recursive: true, force: true })
      throw error
    }
    return { status: "applied", patches: names, vendored: true }
  }
}
