import { existsSync, readFileSync, statSync } from "fs"
import { createRequire } from "module"
import path from "path"
import z from "zod"
import { NamedError } from "../util/error"
import { OpenCodeConfig } from "../util/opencode-config"

/**
 * Which language server handles a file, and how to start it: a small catalog of well-known servers merged with
 * OpenCode's own `lsp` configuration (`opencode.json`, same shape and ids as OpenCode uses, so one configuration
 * drives both OpenCode's clients and these).
 *
 * Nothing is downloaded: a server is found in the project's `node_modules`, next to this package, or on `PATH`. When
 * none is found the error names the package to install and the configuration that would name a command instead.
 *
 * @example
 * const servers = LspServers.resolve({ directory: "/repo", worktree: "/repo", config: { pyright: { disabled: true } } })
 * const [match] = servers.forFile("/repo/src/a.ts") // { spec: typescript, root: "/repo" }
 * const launch = await LspServers.launch(match.spec, match.root, servers) // { command: ["node", ".../cli.mjs", "--stdio"], … }
 */
export namespace LspServers {
  /** One entry of OpenCode's `lsp` configuration. */
  export const Entry = z.union([
    z.object({ disabled: z.literal(true) }).strict(),
    z.object({
      command: z.array(z.string()).min(1),
      extensions: z.array(z.string()).optional(),
      disabled: z.boolean().optional(),
      env: z.record(z.string(), z.string()).optional(),
      initialization: z.record(z.string(), z.unknown()).optional(),
    }),
  ])
  /** OpenCode's `lsp` configuration: false turns language servers off, true or a record of entries turns them on. */
  export const Config = z.union([z.boolean(), z.record(z.string(), Entry)])
  export type Config = z.infer<typeof Config>

  /** How a server is started: a resolved command line, its environment and initialization options. */
  export type Launch = { command: string[]; env?: Record<string, string>; initialization?: Record<string, unknown> }

  export type Spec = {
    id: string
    /** File extensions with the dot, e.g. ".ts". */
    extensions: string[]
    /** Files marking a root: the nearest folder from the file up to the project directory holding one. */
    markers?: string[]
    /** What to install when it is missing (shown in the error). */
    install: string
    /**
     * How diagnostics are obtained beyond the protocol's push and pull: `tsserver` asks TypeScript's server directly
     * through typescript-language-server's `typescript.tsserverRequest` command (its publishes carry no version and
     * it sends none when a clean file stays clean).
     */
    diagnostics?: "tsserver"
    /** The command, or undefined when the server is not installed. */
    find(root: string, ctx: Context): Launch | undefined
  }

  export type Context = {
    directory: string
    worktree: string
    /** The environment servers are looked up with (`VIRTUAL_ENV`); default `process.env`. */
    env?: Record<string, string | undefined>
  }

  export const NotConfigured = NamedError.create(
    "LspNoServer",
    z.object({ file: z.string(), extension: z.string() }),
    (d) =>
      `No language server is configured for ${d.extension || "extension-less"} files (${d.file}). Add one to ` +
      `opencode.json, e.g. "lsp": { "my-server": { "command": ["my-language-server", "--stdio"], "extensions": ` +
      `["${d.extension || ".ext"}"] } }.`,
  )

  export const NotInstalled = NamedError.create(
    "LspServerNotInstalled",
    z.object({ server: z.string(), file: z.string(), install: z.string() }),
    (d) =>
      `The ${d.server} language server (for ${d.file}) is not installed: ${d.install}. Or name a command in ` +
      `opencode.json: "lsp": { "${d.server}": { "command": ["/path/to/server", "--stdio"] } }.`,
  )

  export const Disabled = NamedError.create(
    "LspDisabled",
    z.object({ source: z.string() }),
    (d) => `Language servers are turned off (${d.source}). Remove that setting to use the lsp tool.`,
  )

  /**
   * Root markers of the JavaScript servers: the package manager's lock file, which a workspace monorepo has once, at
   * its root (OpenCode's typescript root and nvim-lspconfig's ts_ls/vtsls use the same). Not `package.json`: every
   * package of a workspace has one, and a server rooted at a package never sees a `tsconfig.json` above it (TypeScript
   * searches for a file's configuration from its folder up to the server's root), so the file fell into an inferred
   * project with default options. From the lock file's folder TypeScript still takes the nearest configuration for
   * each file: a package with its own `tsconfig.json` keeps it.
   */
  const LOCKS = ["package-lock.json", "bun.lockb", "bun.lock", "pnpm-lock.yaml", "yarn.lock"]
  const require = createRequire(import.meta.url)

  /** `node_modules/<name>` from `root` up to the worktree (the project's own install), then next to this package. */
  export function packageDir(name: string, root: string, ctx: Context): string | undefined {
    const stop = path.resolve(ctx.worktree || ctx.directory)
    for (let dir = path.resolve(root); ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, "node_modules", name)
      if (existsSync(path.join(candidate, "package.json"))) return candidate
      if (dir === stop || dir === path.dirname(dir) || !isInside(dir, stop)) break
    }
    try {
      return path.dirname(require.resolve(`${name}/package.json`))
    } catch {
      return undefined
    }
  }

  /** A package's `bin` entry as an absolute path. */
  export function packageBin(dir: string, bin: string): string | undefined {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"))
      const rel = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.[bin]
      if (typeof rel !== "string") return undefined
      const file = path.join(dir, rel)
      return existsSync(file) ? file : undefined
    } catch {
      return undefined
    }
  }

  /** The JavaScript runtime for npm servers: `node` on PATH, else the running Bun (OpenCode's binary acts as Bun). */
  export function js(script: string): Launch {
    const node = which("node")
    if (node) return { command: [node, script] }
    return { command: [process.execPath, script], env: process.versions.bun ? { BUN_BE_BUN: "1" } : undefined }
  }

  export function which(name: string): string | undefined {
    const found = typeof Bun !== "undefined" ? Bun.which(name) : undefined
    if (found) return found
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      if (!dir) continue
      const file = path.join(dir, name)
      try {
        if (statSync(file).isFile()) return file
      } catch {}
    }
    return undefined
  }

  function npmServer(pkg: string, bin: string, args: string[]) {
    return (root: string, ctx: Context): Launch | undefined => {
      const dir = packageDir(pkg, root, ctx)
      const script = dir && packageBin(dir, bin)
      if (script) {
        const launch = js(script)
        return { ...launch, command: [...launch.command, ...args] }
      }
      const onPath = which(bin)
      return onPath ? { command: [onPath, ...args] } : undefined
    }
  }

  function pathServer(bin: string, args: string[]) {
    return (): Launch | undefined => {
      const found = which(bin)
      return found ? { command: [found, ...args] } : undefined
    }
  }

  /** The built-in catalog; ids are OpenCode's, so `opencode.json` entries of the same id adjust them. */
  export const CATALOG: readonly Spec[] = [
    {
      id: "typescript",
      extensions: [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"],
      markers: LOCKS,
      install: "npm install -D typescript-language-server typescript",
      diagnostics: "tsserver",
      find(root, ctx) {
        const server = npmServer("typescript-language-server", "typescript-language-server", ["--stdio"])(root, ctx)
        const ts = packageDir("typescript", root, ctx)
        const tsserver = ts && path.join(ts, "lib", "tsserver.js")
        if (!server || !tsserver || !existsSync(tsserver)) return undefined
        // One tsserver: with its separate syntax server, requests made while the project loads are answered from a
        // single-file program (a rename then edits one file and a definition stops at the import).
        // Renaming an imported name renames the exported symbol everywhere, not an `import { a as b }` alias.
        const preferences = { providePrefixAndSuffixTextForRename: false }
        return { ...server, initialization: { tsserver: { path: tsserver, useSyntaxServer: "never" }, preferences } }
      },
    },
    {
      id: "pyright",
      extensions: [".py", ".pyi"],
      markers: ["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "pyrightconfig.json"],
      install: "npm install -D pyright",
      find(root, ctx) {
        const server = npmServer("pyright", "pyright-langserver", ["--stdio"])(root, ctx)
        if (!server) return undefined
        // The project's own choice (`venv` in pyrightconfig.json or [tool.pyright]) is pyright's to apply.
        if (pyrightChoosesVenv(root)) return server
        const env = pythonEnv(root, ctx)
        // Answered for pyright's `python` section (workspace/configuration), as OpenCode's own pyright is given it.
        return env ? { ...server, initialization: { python: { pythonPath: env.python } } } : server
      },
    },
    {
      id: "gopls",
      extensions: [".go"],
      markers: ["go.work", "go.mod"],
      install: "go install golang.org/x/tools/gopls@latest (gopls on PATH)",
      find: pathServer("gopls", []),
    },
    {
      id: "rust",
      extensions: [".rs"],
      markers: ["Cargo.toml"],
      install: "rustup component add rust-analyzer (rust-analyzer on PATH)",
      find: pathServer("rust-analyzer", []),
    },
    {
      id: "clangd",
      extensions: [".c", ".cpp", ".cc", ".cxx", ".c++", ".h", ".hpp", ".hh", ".hxx", ".h++"],
      markers: ["compile_commands.json", "compile_flags.txt", ".clangd"],
      install: "install clangd (e.g. apt install clangd) so it is on PATH",
      find: pathServer("clangd", ["--background-index"]),
    },
    {
      id: "yaml-ls",
      extensions: [".yaml", ".yml"],
      markers: LOCKS,
      install: "npm install -D yaml-language-server",
      find: npmServer("yaml-language-server", "yaml-language-server", ["--stdio"]),
    },
    {
      id: "bash",
      extensions: [".sh", ".bash", ".zsh", ".ksh"],
      install: "npm install -D bash-language-server",
      find: npmServer("bash-language-server", "bash-language-server", ["start"]),
    },
  ]

  /**
   * Folder names of a Python virtual environment looked for next to a root and above it, in this order: `.venv` and
   * `venv` (what OpenCode's own pyright looks for; uv, Poetry's in-project setting and `python -m venv .venv` make
   * `.venv`), then `env` and `.env`, which count only when they hold `pyvenv.cfg` (a `.env` file is never read).
   */
  export const VENV_NAMES = [".venv", "venv", "env", ".env"]
  const VENV_NEEDS_MARKER = new Set(["env", ".env"])

  /**
   * The Python environment of a pyright server rooted at `root`, as OpenCode's own pyright chooses it and a little
   * wider: `$VIRTUAL_ENV` (an activated environment), else the nearest of `VENV_NAMES` from `root` up to the project
   * bound (the worktree, or the directory when there is no worktree: a uv workspace keeps one `.venv` at its top).
   * An environment counts when its interpreter exists (`bin/python`, `Scripts/python.exe` on Windows). pyright runs
   * that interpreter (`python -I` with a short script printing `sys.path` and its version) to find its site-packages,
   * as it runs the `python` on PATH when none is given.
   *
   * @example
   * LspServers.pythonEnv("/repo", { directory: "/repo", worktree: "/repo", env: {} })
   * // { venv: "/repo/.venv", python: "/repo/.venv/bin/python" }
   */
  export function pythonEnv(root: string, ctx: Context): { venv: string; python: string } | undefined {
    const env = ctx.env ?? process.env
    const interpreter = (venv: string) => {
      const python =
        process.platform === "win32" ? path.join(venv, "Scripts", "python.exe") : path.join(venv, "bin", "python")
      return isFile(python) ? { venv, python } : undefined
    }
    const active = env.VIRTUAL_ENV && path.isAbsolute(env.VIRTUAL_ENV) ? interpreter(env.VIRTUAL_ENV) : undefined
    if (active) return active
    const stop = bound(ctx)
    for (let dir = path.resolve(root); isInside(dir, stop); dir = path.dirname(dir)) {
      for (const name of VENV_NAMES) {
        const venv = path.join(dir, name)
        if (VENV_NEEDS_MARKER.has(name) && !isFile(path.join(venv, "pyvenv.cfg"))) continue
        const found = interpreter(venv)
        if (found) return found
      }
      if (dir === stop || dir === path.dirname(dir)) break
    }
    return undefined
  }

  /**
   * Whether the pyright configuration at `root` names its own environment (`venv`): `pyrightconfig.json`, or when
   * there is none (pyright then ignores pyproject.toml) the `[tool.pyright]` table of `pyproject.toml`.
   */
  export function pyrightChoosesVenv(root: string): boolean {
    const json = readText(path.join(root, "pyrightconfig.json"))
    if (json !== undefined) return /"venv"\s*:/.test(json)
    const toml = readText(path.join(root, "pyproject.toml"))
    if (toml === undefined) return false
    const table = /^\[tool\.pyright\][^\S\n]*(?:#.*)?$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(toml)?.[1]
    return table !== undefined && /^\s*venv\s*=/m.test(table)
  }

  /** The folder project-wide searches stay in: the worktree, or the directory when the worktree is `/` or elsewhere. */
  export function bound(ctx: Pick<Context, "directory" | "worktree">): string {
    const dir = path.resolve(ctx.directory)
    const tree = path.resolve(ctx.worktree || ctx.directory)
    return tree !== path.parse(tree).root && isInside(dir, tree) ? tree : dir
  }

  function isFile(file: string): boolean {
    try {
      return statSync(file).isFile()
    } catch {
      return false
    }
  }

  function readText(file: string): string | undefined {
    try {
      return statSync(file).isFile() ? readFileSync(file, "utf8") : undefined
    } catch {
      return undefined
    }
  }

  export type Resolved = {
    /** Why servers are off (`lsp: false`), or undefined. */
    disabled?: string
    specs: Spec[]
    /** Configuration entries that were ignored, with the reason. */
    warnings: string[]
    ctx: Context
    /** The servers handling `file`, with their root, in configuration order. */
    forFile(file: string): { spec: Spec; root: string }[]
  }

  export type Input = Context & {
    /** OpenCode's `lsp` configuration (undefined: read it from OpenCode's configuration files, see `read`). */
    config?: unknown
  }

  /**
   * The catalog with OpenCode's `lsp` configuration applied: `false` turns everything off; an entry with
   * `disabled: true` removes a server; an entry with a `command` replaces the command of a catalog server of that id
   * or adds a server (which then needs `extensions`).
   */
  export function resolve(input: Input): Resolved {
    const ctx = { directory: input.directory, worktree: input.worktree || input.directory, env: input.env }
    const raw = input.config === undefined ? read(input) : { config: input.config, source: "options" }
    const warnings: string[] = []
    const parsed = Config.safeParse(raw.config ?? true)
    let config: Config = true
    if (!parsed.success) {
      warnings.push(`${raw.source}: "lsp" is not valid (${parsed.error.issues[0]?.message}); using the catalog`)
    } else config = parsed.data
    const specs = new Map(CATALOG.map((s) => [s.id, s]))
    let disabled: string | undefined
    if (config === false) disabled = `"lsp": false in ${raw.source}`
    else if (config !== true) {
      for (const [id, entry] of Object.entries(config)) {
        if (entry.disabled) {
          specs.delete(id)
          continue
        }
        if (!("command" in entry)) continue
        const base = specs.get(id)
        const extensions = entry.extensions ?? base?.extensions
        if (!extensions?.length) {
          warnings.push(`${raw.source}: lsp.${id} has no "extensions" (required for a server OpenCode does not know)`)
          continue
        }
        const launch: Launch = { command: entry.command, env: entry.env, initialization: entry.initialization }
        specs.set(id, {
          id,
          extensions,
          markers: base?.markers,
          install: `the command ${JSON.stringify(entry.command[0])} from lsp.${id} in ${raw.source} was not found`,
          diagnostics: base?.diagnostics,
          find(root) {
            const [bin, ...args] = entry.command
            const found = path.isAbsolute(bin) ? (existsSync(bin) ? bin : undefined) : which(bin)
            if (!found) return undefined
            const initialization = launch.initialization ?? base?.find(root, ctx)?.initialization
            return { command: [found, ...args], env: launch.env, initialization }
          },
        })
      }
    }
    const list = disabled ? [] : [...specs.values()]
    return {
      disabled,
      specs: list,
      warnings,
      ctx,
      forFile(file) {
        const ext = path.extname(file)
        return list
          .filter((spec) => spec.extensions.includes(ext))
          .map((spec) => ({ spec, root: root(file, spec.markers, ctx) }))
      },
    }
  }

  /** The nearest folder from `file` up to the project directory holding one of `markers`, else the project. */
  export function root(file: string, markers: string[] | undefined, ctx: Context): string {
    const stop = path.resolve(ctx.directory)
    if (!markers?.length || !isInside(file, stop)) return stop
    for (let dir = path.dirname(path.resolve(file)); ; dir = path.dirname(dir)) {
      if (markers.some((m) => existsSync(path.join(dir, m)))) return dir
      if (dir === stop || dir === path.dirname(dir)) return stop
    }
  }

  /**
   * OpenCode's `lsp` setting from its configuration files (`OpenCodeConfig.sources`: the global ones, `OPENCODE_CONFIG`,
   * the project's from the worktree down, `OPENCODE_CONFIG_CONTENT`), later ones winning entry by entry.
   */
  export function read(input: Input): { config: unknown; source: string } {
    let config: unknown = undefined
    let source = "the default (no lsp setting)"
    for (const read of OpenCodeConfig.sources({ ...input, env: input.env ?? process.env }).sources) {
      const value = read.config.lsp
      if (value === undefined) continue
      source = read.file
      if (value && typeof value === "object" && config && typeof config === "object")
        config = { ...(config as object), ...(value as object) }
      else config = value
    }
    return { config, source }
  }

  /** LSP language ids by extension (what `didOpen` sends). */
  export function languageId(file: string): string {
    const ext = path.extname(file).toLowerCase()
    return LANGUAGE_IDS[ext] ?? (ext.slice(1) || "plaintext")
  }

  const LANGUAGE_IDS: Record<string, string> = {
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".py": "python",
    ".pyi": "python",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sh": "shellscript",
    ".bash": "shellscript",
    ".zsh": "shellscript",
  }

  export function isInside(file: string, dir: string): boolean {
    const rel = path.relative(dir, file)
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
  }
}
