import { execFile } from "child_process"
import fs from "fs/promises"
import path from "path"
import { promisify } from "util"
import z from "zod"
import { LocalState } from "../learning/local"
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
 * private folder and unpacked there. Nothing of the package is installed or executed, and no lifecycle script runs.
 *
 * npm takes as "project" configuration the `.npmrc` of the nearest folder above where it runs that holds a
 * `package.json` (or of a workspace root above that one): run from a folder under the shared temporary folder, it
 * obeyed a `registry=` a contained command left in `/tmp` (`/tmp/package.json` + `/tmp/.npmrc`), and a decoy was
 * audited in place of the package the user then installs (red team GE3). So npm runs in a new folder of the
 * built-ins' own cache (`LocalState.cacheDir`, hidden from every command while a policy exists), which holds a
 * `package.json` of its own and no `.npmrc`, with `--workspaces=false` (no workspace root above it is looked for):
 * npm's configuration is then the user's own (`~/.npmrc`, npm's global file, `npm_config_*`), and the download and
 * the unpacked files are where no command can change them before they are audited. The URLs npm fetched are kept
 * (`packed.registry`, `packed.tarball`) and printed with the report.
 *
 * @example
 * await using target = await AuditTarget.resolve("opencode-pty", { cwd: process.cwd() })
 * target.dir // "~/.cache/opencode-builtins/audit/pack-…/unpacked/package"
 * target.label // "opencode-pty@0.1.3"
 * target.packed // { name: "opencode-pty", version: "0.1.3", registry: "https://registry.npmjs.org/", tarball: "https://registry.npmjs.org/opencode-pty/-/opencode-pty-0.1.3.tgz" }
 */
export namespace AuditTarget {
  export type Target = {
    dir: string
    label: string
    /**
     * For a package fetched from npm (only unpacked, never installed: no dependency is beside it): the registry npm
     * asked for the package's metadata and the URL of the tarball audited, as npm logged them (absent when it logged
     * none).
     */
    packed?: { name: string; version: string; registry?: string; tarball?: string }
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

    const env = { ...process.env, ...options.env }
    const temp = await privateFolder(target, env)
    const cleanup = () => fs.rm(temp, { recursive: true, force: true })
    try {
      // npm's project configuration is this folder's (none): the nearest package.json above the folder npm runs in.
      await fs.writeFile(path.join(temp, "package.json"), '{ "private": true }\n', { flag: "wx", mode: 0o600 })
      const npm = options.npm ?? (process.platform === "win32" ? "npm.cmd" : "npm")
      let stdout: string
      let stderr: string
      try {
        ;({ stdout, stderr } = await run(
          npm,
          [
            "pack",
            target,
            "--ignore-scripts",
            "--json",
            "--pack-destination",
            temp,
            // No workspace root above the folder is looked for (one there would bring its own `.npmrc` back).
            "--workspaces=false",
            "--no-update-notifier",
            // Every request on stderr (`npm http fetch GET 200 <url>`): where the package came from is reported.
            "--loglevel=http",
          ],
          { cwd: temp, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
        ))
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
      await run("tar", ["-xzf", tarball, "-C", unpacked], { cwd: temp, timeout: 120_000 })
      const entries = await fs.readdir(unpacked)
      const root = entries.length === 1 ? path.join(unpacked, entries[0]) : unpacked
      return {
        dir: root,
        label: `${info.name}@${info.version}`,
        packed: { name: info.name, version: info.version, ...fetchedFrom(stderr, info.name) },
        [Symbol.asyncDispose]: cleanup,
      }
    } catch (error) {
      await cleanup()
      throw error
    }
  }

  /** The error when no private folder can be made for a download. */
  export const NoPrivateFolder = NamedError.create(
    "AuditNoPrivateFolder",
    z.object({ target: z.string(), folder: z.string(), reason: z.string() }),
    (d) =>
      `cannot audit '${d.target}': no private folder for the download in ${d.folder} (${d.reason}); ` +
      "make it writable, or set XDG_CACHE_HOME to a folder of yours",
  )

  /**
   * A new folder for one download under `<cache>/audit` (mode 0700), never under the shared temporary folder: a
   * folder there is writable by any command the sandbox runs, and npm reads configuration from the folders above it.
   */
  async function privateFolder(target: string, env: Record<string, string | undefined>): Promise<string> {
    const base = path.join(LocalState.ensureCache(env), "audit")
    try {
      await fs.mkdir(base, { recursive: true, mode: 0o700 })
      const stat = await fs.lstat(base)
      if (!stat.isDirectory()) throw new Error("it is not a folder")
      if (process.getuid && stat.uid !== process.getuid()) throw new Error("it belongs to another user")
      return await fs.mkdtemp(path.join(base, "pack-"))
    } catch (error) {
      throw new NoPrivateFolder({ target, folder: base, reason: errorMessage(error) }, { cause: error })
    }
  }

  /**
   * Where npm got the package, from its `--loglevel=http` lines (`npm http fetch GET 200 <url> …`, `npm http cache
   * <url> … (cache hit)`; credentials are already taken out of the URLs by npm): the registry is the first URL asked
   * (the package's metadata) without the package's name, the tarball the last one.
   *
   * @example
   * fetchedFrom("npm http fetch GET 200 https://r.example/a 20ms\nnpm http fetch GET 200 https://r.example/a/-/a-1.tgz 9ms", "a")
   * // { registry: "https://r.example/", tarball: "https://r.example/a/-/a-1.tgz" }
   */
  export function fetchedFrom(stderr: string, name: string): { registry?: string; tarball?: string } {
    const urls = [...stderr.matchAll(/^npm http (?:fetch [A-Z]+ \d{3}|cache) (\S+)/gm)].map((m) => m[1])
    if (!urls.length) return {}
    const first = urls[0]
    const escaped = name.replace("/", "%2f")
    const lower = first.toLowerCase()
    const registry = lower.endsWith("/" + escaped.toLowerCase())
      ? first.slice(0, first.length - escaped.length)
      : lower.endsWith("/" + name.toLowerCase())
        ? first.slice(0, first.length - name.length)
        : first
    return { registry, tarball: urls[urls.length - 1] }
  }
}
