import crypto from "crypto"
import fs from "fs"
import path from "path"
import z from "zod"
import { NamedError } from "../util/error"
import { LocalState } from "./local"

/**
 * Provenance of the project's local state (`LocalState`): every file (or JSONL record) the built-ins write there
 * carries a seal, an HMAC-SHA256 made with a per-user key kept in the built-ins' cache folder
 * (`<LocalState.cacheDir()>/local-state.key`, 32 random bytes, mode 0600), which the security layer hides from every
 * command while a policy exists. The MAC covers the project root the state folder belongs to (its real path), the
 * file's kind and its content, so a file a contained command wrote (a nested repository's state folder it created, a
 * folder spelled at run time, one a repository ships), and a genuine file copied into another project's state folder
 * or passed off as another kind, is told apart: readers skip it, saying `UNTRUSTED`, and never act on it (red team GH:
 * a planted heartbeat had `recovery resume` start OpenCode in the agent's folder, a planted learnings.json was
 * injected as the user's correction).
 *
 * The seal is the object's last member, `"seal":"<64 hex>"`, added to the JSON text as written (the MAC is of the text
 * without it): the file stays JSON, and what is checked is byte for byte what was written.
 *
 * Migration: a file written before this version has no seal. It is accepted only when its change time — which a
 * command can move forward (any write, rename or chmod) but never back — predates the moment sealing began for this
 * user (`epoch`: the first key's time, kept outside the cache and never moved by a key made again), and it is sealed
 * at its next write. A file without a seal changed after that moment was not written by the built-ins.
 *
 * @example
 * const text = LocalSeal.seal("/repo/.opencode/builtins-local/learnings.json", "learnings", '{"version":1}')
 * LocalSeal.open("/repo/.opencode/builtins-local/learnings.json", "learnings", text) // { text: '{"version":1}' }
 */
export namespace LocalSeal {
  /** What a seal binds a file to besides its project: the store it belongs to. */
  export type Kind = "recovery" | "learnings" | "capture" | "discovery-cache" | "look-at"

  export const KEY_FILE = "local-state.key"
  export const KEY_BYTES = 32

  /** Why a file or record without a valid seal is skipped. */
  export const UNTRUSTED = "not written by OpenCode Built-ins for this project on this machine: ignored"

  /** The key cannot be used (a link, not a plain file, another owner, another size): nothing is sealed or trusted. */
  export const KeyError = NamedError.create(
    "LocalSealKey",
    z.object({ file: z.string(), problem: z.string() }),
    (d) =>
      `${d.file} ${d.problem}: the built-ins' local state is neither sealed nor trusted with it (remove it; a new ` +
      `key is made at the next use, and local state written before is then ignored)`,
  )

  /**
   * `created`: when the key file was made; `legacyBefore`: when sealing began for this user (`epoch`), the change time
   * before which a file without a seal counts as written by an earlier version.
   */
  export type Key = { bytes: Buffer; created: number; file: string; legacyBefore: number }

  /** Keys read in this process, by file: each is read once. */
  const keys = new Map<string, Key>()

  /** The key file (`<cache folder>/local-state.key`). */
  export function keyFile(env: Record<string, string | undefined> = process.env): string {
    return path.join(LocalState.cacheDir(env), KEY_FILE)
  }

  /**
   * The per-user key, read once per process, made on first use: 32 random bytes written to a file of its own made
   * with `O_EXCL` (mode 0600), then linked to the key's name, which fails when another process made the key first
   * (that one is read then): two processes starting at once end with one key, and no reader sees a key half written.
   * Throws `KeyError` for a key that is a link, not a plain file, another user's or not 32 bytes.
   *
   * @example
   * LocalSeal.key().bytes.length // 32
   */
  export function key(env: Record<string, string | undefined> = process.env): Key {
    const file = keyFile(env)
    const known = keys.get(file)
    if (known) return known
    const found = readKey(file) ?? (create(file), readKey(file))
    if (!found) throw new KeyError({ file, problem: "could not be made" })
    const made = { ...found, legacyBefore: epoch(found.created, env) }
    keys.set(file, made)
    return made
  }

  export const EPOCH_FILE = "local-state-epoch"

  /**
   * Where the moment sealing began is kept: `$XDG_STATE_HOME/opencode-builtins/local-state-epoch` (default
   * `~/.local/state/…`; `LocalState.stateDir`, hidden from commands like the cache folder), outside the cache folder, so
   * that clearing the cache (or removing the key) makes a new key but never a new moment.
   */
  export function epochFile(env: Record<string, string | undefined> = process.env): string {
    return path.join(LocalState.stateDir(env), EPOCH_FILE)
  }

  /**
   * When sealing began for this user (milliseconds): recorded once, with the first key's time (`keyCreated`) when no
   * record exists, and never moved. Files without a seal changed before it are an earlier version's; after it, nothing
   * but a command writes one. Before, the key's own time stood for it, and a key made again (the cache cleared, a key
   * removed as `KeyError` advises) turned every file a command had planted meanwhile into an accepted old one (red team
   * GJ1: a planted learnings.json was injected, a planted heartbeat resumed). A record that cannot be read or made
   * safely (a link, another user's, not a number) accepts no file without a seal.
   *
   * @example
   * LocalSeal.epoch(LocalSeal.key().created) // 1796108434736
   */
  export function epoch(keyCreated: number, env: Record<string, string | undefined> = process.env): number {
    const file = epochFile(env)
    const read = () => {
      let fd: number
      try {
        fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
        return -Infinity
      }
      try {
        const stat = fs.fstatSync(fd)
        if (!stat.isFile() || (process.getuid && stat.uid !== process.getuid())) return -Infinity
        const text = fs.readFileSync(fd, "utf8").trim()
        return /^\d{1,16}$/.test(text) ? Number(text) : -Infinity
      } finally {
        fs.closeSync(fd)
      }
    }
    const known = read()
    if (known !== undefined) return known
    try {
      createOnce(file, `${Math.floor(keyCreated)}\n`)
    } catch {
      return -Infinity
    }
    return read() ?? -Infinity
  }

  /** Forgets the keys read (tests: a key removed or replaced on disk is read again). */
  export function forget() {
    keys.clear()
  }

  function readKey(file: string): Key | undefined {
    let fd: number
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT") return undefined
      if (code === "ELOOP") throw new KeyError({ file, problem: "is a symbolic link" }, { cause: error })
      throw new KeyError({ file, problem: `cannot be read (${code ?? String(error)})` }, { cause: error })
    }
    try {
      const stat = fs.fstatSync(fd)
      if (!stat.isFile()) throw new KeyError({ file, problem: "is not a plain file" })
      if (process.getuid && stat.uid !== process.getuid())
        throw new KeyError({ file, problem: `is owned by another user (uid ${stat.uid})` })
      if (stat.size !== KEY_BYTES) throw new KeyError({ file, problem: `holds ${stat.size} bytes, not ${KEY_BYTES}` })
      const bytes = Buffer.alloc(KEY_BYTES)
      if (fs.readSync(fd, bytes, 0, KEY_BYTES, 0) !== KEY_BYTES)
        throw new KeyError({ file, problem: "could not be read whole" })
      return { bytes, created: stat.mtimeMs, file, legacyBefore: -Infinity }
    } finally {
      fs.closeSync(fd)
    }
  }

  function create(file: string) {
    createOnce(file, crypto.randomBytes(KEY_BYTES))
  }

  /**
   * Writes `data` to `file` (mode 0600, its folder made 0700) only when no file has that name: written whole to a new
   * file of its own, then linked to the name, so a process making it at the same time leaves the first one in place
   * and no reader sees it half written.
   */
  function createOnce(file: string, data: string | Buffer) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`
    fs.writeFileSync(tmp, data, { flag: "wx", mode: 0o600 })
    try {
      fs.linkSync(tmp, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    } finally {
      fs.rmSync(tmp, { force: true })
    }
  }

  /**
   * The project root a local state file belongs to: the folder holding its `.opencode/builtins-local`, as a real path
   * (a file outside any state folder: its own folder).
   */
  export function rootOf(file: string): string {
    const marker = path.sep + path.normalize(LocalState.DIR) + path.sep
    const at = file.lastIndexOf(marker)
    const root = at < 0 ? path.dirname(file) : file.slice(0, at) || path.sep
    try {
      return fs.realpathSync(root)
    } catch {
      return path.resolve(root)
    }
  }

  function mac(key: Key, kind: Kind, root: string, text: string): string {
    return crypto
      .createHmac("sha256", key.bytes)
      .update(`opencode-builtins local state v1\0${kind}\0${root}\0`)
      .update(text)
      .digest("hex")
  }

  const TAIL = /,"seal":"([0-9a-f]{64})"\}(\n?)$/

  /**
   * `text` (a JSON object, optionally ending in a line break) with its seal as its last member. Throws `KeyError` when
   * the key cannot be used.
   *
   * @example
   * LocalSeal.seal(file, "recovery", '{"a":1}\n') // '{"a":1,"seal":"3f2a…"}\n'
   */
  export function seal(file: string, kind: Kind, text: string): string {
    const end = /\}(\n?)$/.exec(text)
    const head = end ? text.slice(0, end.index) : ""
    if (!end || /\{\s*$/.test(head)) throw new Error(`${file}: only a JSON object with members is sealed`)
    return `${head},"seal":"${mac(key(), kind, rootOf(file), text)}"}${end[1]}`
  }

  /**
   * The text as written (seal taken off) and, when it is not to be trusted, why: a reader may still check its shape
   * first (a file cut short is reported as such), but never uses what it holds while `problem` is set.
   */
  export type Opened = { text: string; legacy?: true; problem?: undefined } | { text: string; problem: string }

  /**
   * `text` as written (its seal taken off) when its seal is this machine's for this project and kind; when it has
   * none, the text itself only when `ctimeMs` (the file's change time) is given and predates `Key.legacyBefore` (written by an
   * earlier version: `legacy`); else `problem` (`UNTRUSTED` and why). Throws `KeyError` when the key cannot be used.
   *
   * @example
   * LocalSeal.open(file, "learnings", fs.readFileSync(file, "utf8"), stat.ctimeMs)
   */
  export function open(file: string, kind: Kind, text: string, ctimeMs?: number): Opened {
    const k = key()
    const tail = TAIL.exec(text)
    if (!tail) {
      if (ctimeMs !== undefined && ctimeMs < k.legacyBefore) return { text, legacy: true }
      return { text, problem: `${UNTRUSTED} (no seal)` }
    }
    const original = text.slice(0, tail.index) + "}" + tail[2]
    const expected = Buffer.from(mac(k, kind, rootOf(file), original), "hex")
    if (!crypto.timingSafeEqual(expected, Buffer.from(tail[1], "hex")))
      return { text: original, problem: `${UNTRUSTED} (bad seal)` }
    return { text: original }
  }

  /**
   * `file` read whole through one descriptor (never blocking on a FIFO), with its change time as of that read: a file
   * swapped between the two is not paired with another's time. Throws what the read throws.
   */
  export function read(file: string): { text: string; ctimeMs: number } {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    try {
      const stat = fs.fstatSync(fd)
      if (!stat.isFile()) throw new Error(`${file} is not a plain file`)
      return { text: fs.readFileSync(fd, "utf8"), ctimeMs: stat.ctimeMs }
    } finally {
      fs.closeSync(fd)
    }
  }

  /**
   * `read` then `open`: the text of a local state file the built-ins wrote, or why it is not used. `legacy`: whether a
   * file without a seal that predates `Key.legacyBefore` is accepted (stores whose content a user would miss); caches say no.
   */
  export function readFile(file: string, kind: Kind, legacy = true): Opened {
    const { text, ctimeMs } = read(file)
    return open(file, kind, text, legacy ? ctimeMs : undefined)
  }
}
