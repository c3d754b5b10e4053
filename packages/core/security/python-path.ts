import fs from "fs"
import path from "path"

/**
 * The importable top-level names of a folder on a Python server's `sys.path` before the standard library. A Python
 * MCP server started as `python3 -m mod` has its folder first on `sys.path` (a script's folder for `python3 x.py`, and
 * each `PYTHONPATH` entry after it), so a `json.py` or `mcp/__init__.py` there shadows the standard library's or an
 * installed package's module of that name for every later import. In such a folder these are held, present or not:
 * module files (`name.py`, `.pyc`, `.pyw`, extension modules `.so`/`.pyd`, `name.cpython-312-x86_64-linux-gnu.so`),
 * package initialisers (`name/__init__.py` and their other forms) and the cached `.pyc` files Python runs in place of
 * a source of the size and time they record (`__pycache__/name.cpython-312.pyc`, `name/__pycache__/__init__.….pyc`).
 * Deeper files of a package are not (`name/sub.py`): only the names Python looks up in the folder itself.
 *
 * @example
 * SecurityPythonPath.held(["/repo"], "/repo/json.py")              // true
 * SecurityPythonPath.held(["/repo"], "/repo/mcp/__init__.py")      // true
 * SecurityPythonPath.held(["/repo"], "/repo/mcp/server.py")        // false
 * SecurityPythonPath.held(["/repo"], "/repo/my-notes.py")          // false: not an importable name
 */
export namespace SecurityPythonPath {
  /**
   * How a held folder is named among host paths (`SecurityFeature.configuredHostFiles`, `SecurityGuard.protectHost`):
   * `<folder>/*.py`, standing for every held name of the folder, present or not.
   *
   * @example
   * SecurityPythonPath.entry("/repo")          // "/repo/*.py"
   * SecurityPythonPath.folderOf("/repo/*.py")  // "/repo"
   * SecurityPythonPath.folderOf("/repo/x.py")  // undefined
   */
  export function entry(folder: string): string {
    return path.join(folder, ENTRY)
  }
  export function folderOf(p: string): string | undefined {
    return path.basename(p) === ENTRY && path.isAbsolute(p) ? path.dirname(p) : undefined
  }
  const ENTRY = "*.py"

  /** What Python's import system loads a module from (source, bytecode, extension modules). */
  const MODULE = /\.(py|pyc|pyw|so|pyd)$/i
  /** An importable name: a Python identifier (the file name up to its first dot). */
  const NAME = /^[\p{ID_Start}_][\p{ID_Continue}]*$/u
  const stem = (base: string) => base.split(".")[0]!

  /**
   * Whether `abs` is a held name of one of `folders` (absolute, resolved), as above. `fold` lowers case on a
   * file system that ignores it.
   */
  export function held(folders: readonly string[], abs: string, fold: (s: string) => string = (s) => s): boolean {
    if (!folders.length) return false
    const at = (dir: string) => folders.some((f) => fold(f) === fold(dir))
    const dir = path.dirname(abs)
    const base = path.basename(abs)
    if (!MODULE.test(base)) return false
    const name = stem(base)
    // `name.py`, `name.cpython-312-x86_64-linux-gnu.so` in the folder.
    if (NAME.test(name) && at(dir)) return true
    const cached = path.basename(dir) === "__pycache__" && /\.pyc$/i.test(base)
    // `__pycache__/name.cpython-312.pyc`.
    if (cached && NAME.test(name) && at(path.dirname(dir))) return true
    if (name !== "__init__") return false
    // `name/__init__.py` (or its `.pyc`, `.so` forms).
    if (NAME.test(path.basename(dir)) && at(path.dirname(dir))) return true
    // `name/__pycache__/__init__.cpython-312.pyc`.
    const pkg = path.dirname(dir)
    return cached && NAME.test(path.basename(pkg)) && at(path.dirname(pkg))
  }

  /**
   * The held names of `folder` present now (files and links to files; a package initialiser through a link to a
   * folder too), as `held` tells them.
   *
   * @example
   * SecurityPythonPath.present("/repo") // ["/repo/setup.py", "/repo/tools/__init__.py"]
   */
  export function present(folder: string): string[] {
    const out: string[] = []
    const list = (dir: string) => {
      try {
        return fs.readdirSync(dir, { withFileTypes: true })
      } catch {
        return []
      }
    }
    const take = (dir: string) => {
      for (const e of list(dir)) {
        const p = path.join(dir, e.name)
        if (!e.isDirectory() && held([folder], p)) out.push(p)
      }
    }
    /** A folder, or a link leading to one (Python imports a package through it). */
    const isFolder = (e: fs.Dirent, p: string) => {
      if (e.isDirectory()) return true
      if (!e.isSymbolicLink()) return false
      try {
        return fs.statSync(p).isDirectory()
      } catch {
        return false
      }
    }
    for (const e of list(folder)) {
      const p = path.join(folder, e.name)
      if (!isFolder(e, p)) {
        if (held([folder], p)) out.push(p)
        continue
      }
      if (e.name === "__pycache__") take(p)
      else if (NAME.test(e.name)) {
        take(p)
        take(path.join(p, "__pycache__"))
      }
    }
    return out
  }

  /**
   * The paths of a `sys.path` entry that CPython may import from as a zip archive (zipimport), inside `within`: the
   * entry itself when it is not a folder (`deps.zip`, an egg or wheel, a missing entry the agent could create as an
   * archive), and each missing or non-folder part of its path above it (`deps.zip/lib` imports from `deps.zip`'s
   * `lib/`), up to the first existing folder. They are held as files, present or not; an existing folder has none.
   *
   * @example
   * SecurityPythonPath.archives("/repo/deps.zip", "/repo")     // ["/repo/deps.zip"] (a file, or not there)
   * SecurityPythonPath.archives("/repo/deps.zip/lib", "/repo") // ["/repo/deps.zip/lib", "/repo/deps.zip"]
   * SecurityPythonPath.archives("/repo/vendor", "/repo")       // [] (an existing folder)
   */
  export function archives(entry: string, within: string): string[] {
    const out: string[] = []
    for (let p = path.resolve(entry); p !== path.dirname(p); p = path.dirname(p)) {
      let folder = false
      try {
        folder = fs.statSync(p).isDirectory()
      } catch {
        folder = false
      }
      if (folder || !isInside(p, within)) break
      out.push(p)
    }
    return out
  }
  const isInside = (p: string, dir: string) => {
    const rel = path.relative(path.resolve(dir), p)
    return !!rel && !rel.startsWith("..") && !path.isAbsolute(rel)
  }

  /**
   * The folders a CPython start puts on `sys.path` before the standard library: the first one by CPython's rules
   * (`-m` and `-c` and standard input: the working folder; a script: its folder, or the script itself when it is a
   * folder or zip file; none with `-P`, `-I` or a non-empty `PYTHONSAFEPATH`) and each `PYTHONPATH` entry (relative
   * ones, and empty ones, against the working folder; ignored with `-E` or `-I`).
   *
   * @example
   * SecurityPythonPath.folders({ cwd: "/r", mode: "module", env: { PYTHONPATH: "lib:/x" } }) // ["/r", "/r/lib", "/x"]
   * SecurityPythonPath.folders({ cwd: "/r", mode: "module", flags: "I", env: { PYTHONPATH: "lib" } }) // []
   */
  /** What the interpreter runs: a module (`-m`), code (`-c`, standard input, interactive), or a script path. */
  export type Mode = "module" | "code" | { script: string }

  export function folders(input: {
    cwd: string
    mode: Mode
    /** The single-letter options given (`-I`, `-P`, `-E`), in any order. */
    flags?: string
    env?: Record<string, string | undefined>
  }): string[] {
    const flags = input.flags ?? ""
    const ignoreEnv = flags.includes("E") || flags.includes("I")
    const env = ignoreEnv ? {} : (input.env ?? {})
    const safe = flags.includes("P") || flags.includes("I") || !!env.PYTHONSAFEPATH
    const out: string[] = []
    if (!safe) {
      if (typeof input.mode === "object") {
        const script = path.resolve(input.cwd, input.mode.script)
        let real = script
        try {
          real = fs.realpathSync(script)
        } catch {
          // Not there yet: the folder it is named in.
        }
        let dir = false
        try {
          dir = fs.statSync(real).isDirectory()
        } catch {
          dir = false
        }
        out.push(dir ? real : path.dirname(real))
      } else out.push(path.resolve(input.cwd))
    }
    if (env.PYTHONPATH !== undefined && env.PYTHONPATH !== "")
      for (const entry of env.PYTHONPATH.split(path.delimiter)) out.push(path.resolve(input.cwd, entry))
    return [...new Set(out)]
  }
}
