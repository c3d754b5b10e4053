import { execFile } from "child_process"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { promisify } from "util"
import z from "zod"
import { NamedError, errorMessage } from "../util/error"
import { ProjectFolder } from "../util/folder"

const run = promisify(execFile)

/** npm's error codes a user meets when a package cannot be fetched, in plain words. */
const NPM_ERRORS: Record<string, string> = {
  E404: "no package of that name on the registry (check the spelling and the scope)",
  ETARGET: "the registry has no version matching that range",
  E401: "the registry refused the credentials (npm login, or the token in .npmrc)",
  E403: "the registry refused access to that package",
  ENOTFOUND: "the registry could not be reached (its host name did not resolve)",
  ECONNREFUSED: "the registry could not be reached (connection refused)",
  ETIMEDOUT: "the registry could not be reached (timed out)",
  EAI_AGAIN: "the registry could not be reached (name lookup failed)",
}

/**
 * Turns the audit's argument into a directory of plugin source: a directory is used in place; an npm package spec
 * (`name`, `@scope/name`, `name@1.2.3`, `name@tag`) is downloaded with `npm pack --ignore-scripts` into a new
 * temporary directory and unpacked there. Nothing of the package is installed or executed, and no lifecycle script
 * runs.
 *
 * @example
 * await using target = await AuditTarget.resolve("opencode-pty", { cwd: process.cwd() })
 * target.dir // "/tmp/ocb-audit-…/package"
 * target.label // "opencode-pty@0.1.3"
 */
export namespace AuditTarget {
  export type Target = {
    dir: string
    label: string
    /** For a package fetched from npm (only unpacked, never installed: no dependency is beside it). */
    packed?: { name: string; version: string }
    /** Removes what `resolve` downloaded (nothing for a directory). */
    [Symbol.asyncDispose](): Promise<void>
  }

  export const NotFound = NamedError.create(
    "AuditTargetNotFound",
    z.object({ target: z.string(), reason: z.string() }),
    (d) => `cannot audit '${d.target}': ${d.reason}`,
  )

  /** npm's package name rules (lower case, URL-safe, optional scope) plus an optional `@version` or `@tag`. */
  const SPEC = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(@[A-Za-z0-9._~^<>=|* -]+)?$/

  /**
   * True for an npm package spec the audit may fetch (name, scope, version or tag; no paths, URLs or shell syntax).
   *
   * @example
   * AuditTarget.isPackageSpec("@scope/pkg@1.2.3") // true
   * AuditTarget.isPackageSpec("../pkg") // false
   */
  export function isPackageSpec(value: string): boolean {
    return SPEC.test(value) && !value.includes("..") && value.length <= 214 + 64
  }

  /**
   * The directory to audit for `target` (see the namespace comment); dispose it to remove a download.
   *
   * @example
   * await using target = await AuditTarget.resolve("./my-plugin", { cwd: process.cwd() })
   */
  export async function resolve(
    target: string,
    options: { cwd: string; npm?: string; env?: Record<string, string | undefined> },
  ): Promise<Target> {
    const local = path.resolve(options.cwd, target)
    // A path that only reads as the folder (its name is not UTF-8): another folder or none, never audited as it.
    if (ProjectFolder.lossy(local)) throw new NotFound({ target, reason: ProjectFolder.problem(local)! })
    const stat = await fs.stat(local).catch(() => undefined)
    if (stat?.isDirectory()) return { dir: local, label: target, [Symbol.asyncDispose]: async () => {} }
    if (stat) throw new NotFound({ target, reason: "it is a file; give a plugin directory or an npm package name" })
    if (target.startsWith(".") || path.isAbsolute(target)) throw new NotFound({ target, reason: "no such directory" })
    if (!isPackageSpec(target))
      throw new NotFound({ target, reason: "neither an existing directory nor a valid npm package name" })

    const temp = await fs.mkdtemp(path.join(os.tmpdir(), "ocb-audit-"))
    const cleanup = () => fs.rm(temp, { recursive: true, force: true })
    try {
      const npm = options.npm ?? (process.platform === "win32" ? "npm.cmd" : "npm")
      let stdout: string
      try {
        ;({ stdout } = await run(npm, ["pack", target, "--ignore-scripts", "--json", "--pack-destination", temp], {
          cwd: temp,
          env: { ...process.env, ...options.env },
          timeout: 120_000,
          maxBuffer: 16 * 1024 * 1024,
        }))
      } catch (error) {
        const e = error as { stderr?: string; code?: string }
        if (e.code === "ENOENT")
          throw new NotFound({ target, reason: "npm is not installed (needed to fetch packages)" })
        const text = e.stderr ?? errorMessage(error)
        const code = /npm (?:error|ERR!) code (\w+)/.exec(text)?.[1]
        const known = code ? NPM_ERRORS[code] : undefined
        const reason = text.split("\n").find((l) => /npm (error|ERR!)/.test(l)) ?? errorMessage(error)
        throw new NotFound({
          target,
          reason: known
            ? `${known} (npm pack: ${code})`
            : `npm pack failed: ${reason.replace(/^npm (error|ERR!)\s*/, "").trim()}`,
        })
      }
      const info = JSON.parse(stdout.slice(stdout.indexOf("[")))[0] as {
        filename: string
        name: string
        version: string
      }
      const tarball = path.join(temp, path.basename(info.filename))
      const unpacked = path.join(temp, "unpacked")
      await fs.mkdir(unpacked)
      // System tar (GNU, bsdtar, Windows 10+): only extraction, no npm install, no scripts.
      await run("tar", ["-xzf", tarball, "-C", unpacked], { timeout: 120_000 })
      const entries = await fs.readdir(unpacked)
      const root = entries.length === 1 ? path.join(unpacked, entries[0]) : unpacked
      return {
        dir: root,
        label: `${info.name}@${info.version}`,
        packed: { name: info.name, version: info.version },
        [Symbol.asyncDispose]: cleanup,
      }
    } catch (error) {
      await cleanup()
      throw error
    }
  }
}
