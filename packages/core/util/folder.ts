import fs from "fs"
import path from "path"
import { errorMessage } from "./error"

/**
 * The one rule for a project folder a command or a host hands us. Bun (which runs OpenCode and our commands) holds
 * paths as text: a name whose bytes are not UTF-8 (`caf\xe9`) reads as U+FFFD (`caf\ufffd`), and that path names
 * another folder or none, while the process itself stands in the real one. Used as the project folder, it had the
 * security layer find no policy there ("nothing is enforced", every access allowed), and the state our features write
 * created a twin folder outside the project. So:
 *
 * - `problem` says why a folder cannot be used as the project folder (missing, a file, a path that is not UTF-8);
 *   every entry point (each CLI command, the composition root for the plugin, the fork and the MCP server) refuses
 *   with it instead of going on with no policy;
 * - `mkdirInside` is the only way our state folders inside a project are made: below a project folder that exists,
 *   never the project folder or a folder above it.
 *
 * @example
 * ProjectFolder.problem("/tmp/caf\ufffd") // "/tmp/caf\ufffd: its path is not valid UTF-8 text … rename $'caf\\xe9' …"
 * ProjectFolder.mkdirInside("/repo", "/repo/.opencode/builtins-local/capture")
 */
export namespace ProjectFolder {
  const REPLACEMENT = "\ufffd"
  const strict = new TextDecoder("utf-8", { fatal: true })

  function utf8(bytes: Uint8Array): boolean {
    try {
      strict.decode(bytes)
      return true
    } catch {
      return false
    }
  }

  /** A name's bytes as a shell's `$'…'` quoting shows them (`$'caf\xe9'`). */
  function shellQuoted(bytes: Uint8Array): string {
    let out = ""
    for (const b of bytes)
      out += b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16)}`
    return `$'${out}'`
  }

  export type Lossy = {
    /** The folder holding the name. */
    parent: string
    /** The name's real bytes, when the folder could be listed. */
    name?: Uint8Array
  }

  /**
   * Where `dir` (absolute) is the U+FFFD reading of a name that is not UTF-8, or undefined when it is not: the first
   * name holding U+FFFD whose folder lists a name that is not UTF-8 and reads the same, or whose folder cannot be
   * listed (it cannot be told: taken as lossy). A name really spelled with U+FFFD (valid UTF-8) is fine.
   *
   * @example
   * ProjectFolder.lossy("/tmp/caf\ufffd") // { parent: "/tmp", name: <63 61 66 e9> } when /tmp holds caf\xe9
   */
  export function lossy(dir: string): Lossy | undefined {
    if (!dir.includes(REPLACEMENT)) return undefined
    let at = path.parse(dir).root
    for (const name of dir.slice(at.length).split(path.sep)) {
      if (!name) continue
      if (name.includes(REPLACEMENT)) {
        let entries: Buffer[]
        try {
          entries = fs.readdirSync(at, { encoding: "buffer" })
        } catch {
          return { parent: at }
        }
        const match = entries.find((e) => !utf8(e) && Buffer.from(e).toString("utf8") === name)
        if (match) return { parent: at, name: match }
      }
      at = path.join(at, name)
    }
    return undefined
  }

  function notUtf8(dir: string, found: Lossy, real?: string): string {
    const where = real ? `its real path ${real} (it is reached through a link)` : "its path"
    const rename = found.name
      ? `rename ${shellQuoted(found.name)} in ${found.parent} to a UTF-8 name`
      : `rename the folder in ${found.parent} whose name is not UTF-8 to a UTF-8 name`
    return (
      `${dir}: ${where} is not valid UTF-8 text (a folder's name holds bytes that are not UTF-8, read as U+FFFD "${REPLACEMENT}"), ` +
      `which Bun cannot address: that path names another folder or none, so the project's policy and files cannot be read there. ` +
      `${rename[0].toUpperCase()}${rename.slice(1)} and use the new path (a link with a UTF-8 name does not help: its real path is what is read)`
    )
  }

  /**
   * Why `dir` cannot be used as a project folder, or undefined when it can: its path (or, reached through links, its
   * real path) is not UTF-8 (see `lossy`), it does not exist, it is a file, or it cannot be read.
   *
   * @example
   * ProjectFolder.problem("/etc/hostname") // "/etc/hostname is not a directory (it is a file)"
   */
  export function problem(dir: string): string | undefined {
    const found = lossy(path.resolve(dir))
    if (found) return notUtf8(dir, found)
    let stat: fs.Stats
    try {
      stat = fs.statSync(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT" || code === "ENOTDIR") return `${dir} does not exist`
      return `${dir} cannot be read (${errorMessage(error)})`
    }
    if (!stat.isDirectory()) return `${dir} is not a directory (it is a file)`
    let real: string
    try {
      real = fs.realpathSync(dir)
    } catch (error) {
      return `${dir} cannot be read (${errorMessage(error)})`
    }
    const behind = real === path.resolve(dir) ? undefined : lossy(real)
    return behind ? notUtf8(dir, behind, real) : undefined
  }

  /** A state folder asked for outside its project, or in a project folder that does not exist. */
  export class Outside extends Error {
    override name = "ProjectFolderOutside"
  }

  /**
   * A state folder whose path below the project root passes through a symbolic link (or a name that is not a folder).
   * A command planted a nested project's `.opencode` as a link to a plain folder, and an admin session's capture was
   * written through it into that folder, which a viewer read: our state is never written through a link in the project.
   */
  export class Linked extends Error {
    override name = "ProjectFolderLinked"
  }

  /**
   * Makes `folder` and the folders between `root` and it, one at a time, when `root` is an existing folder and
   * `folder` lies below it. Never makes `root` or anything above it: a project folder that is gone (or a path that only
   * reads as one) throws `Outside` instead of being created as an empty twin. A name between `root` and `folder` (or
   * `folder` itself) that is a symbolic link, or anything but a folder, throws `Linked`: nothing is written through
   * it (the caller logs it; the link is the user's to remove). `root` itself may be reached through links.
   *
   * @example
   * ProjectFolder.mkdirInside("/repo", "/repo/.opencode/builtins-local") // makes .opencode, then builtins-local
   */
  export function mkdirInside(root: string, folder: string) {
    const base = path.resolve(root)
    const rel = path.relative(base, path.resolve(folder))
    if (rel.startsWith("..") || path.isAbsolute(rel))
      throw new Outside(`${folder} is not inside the project folder ${root}: not created`)
    let stat: fs.Stats | undefined
    try {
      stat = fs.statSync(base)
    } catch {
      stat = undefined
    }
    if (!stat?.isDirectory())
      throw new Outside(
        `the project folder ${root} does not exist: ${folder} is not created (nothing is made outside it)`,
      )
    let at = base
    for (const name of rel.split(path.sep)) {
      if (!name) continue
      at = path.join(at, name)
      try {
        fs.mkdirSync(at)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      const entry = fs.lstatSync(at)
      if (!entry.isDirectory())
        throw new Linked(
          `${at} is ${entry.isSymbolicLink() ? "a symbolic link" : "not a folder"}: the built-ins' local state (${folder}) ` +
            `is not written through it (remove it to let the state be kept)`,
        )
    }
  }
}
