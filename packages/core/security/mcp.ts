import crypto from "crypto"
import fs from "fs"
import os from "os"
import path from "path"
import { parse as parseToml } from "smol-toml"
import { OpenCode } from "../opencode"
import { SecurityConfig } from "./config"
import { SecurityPath } from "./paths"
import { SecurityPythonPath } from "./python-path"
import type { Node } from "web-tree-sitter"
import { SecurityShell } from "./shell"
import { ShellContext } from "./shell/context"
import { ShellWords } from "./shell/words"
import type { SecuritySchema } from "./schema"

/**
 * MCP tools. OpenCode names an MCP tool `<server>_<tool>`, with every character outside `[A-Za-z0-9_-]`
 * of both names replaced by `_`. The server is identified exactly against the configured server names — never by
 * splitting at the first `_` (a server called `my_docs` is not `my`). When two configured servers could both own a
 * tool name, the stricter policy applies.
 *
 * @example
 * SecurityMcp.serversOf("my_docs_search", ["my", "my_docs"]) // ["my", "my_docs"]: ambiguous, strictest wins
 * SecurityMcp.serversOf("docs_search", ["docs", "jira"])     // ["docs"]
 */
export namespace SecurityMcp {
  /** OpenCode's sanitising of server and tool names in tool ids. */
  export const sanitise = OpenCode.sanitise

  /** Configured servers that could own the tool id (its prefix is `<sanitised server>_`). */
  export function serversOf(toolId: string, servers: readonly string[]): string[] {
    return servers.filter((s) => {
      const prefix = sanitise(s) + "_"
      return toolId.startsWith(prefix) && toolId.length > prefix.length
    })
  }

  const RANK: Record<SecuritySchema.McpPolicy, number> = { trusted: 0, enforced: 1, blocked: 2 }

  /**
   * The servers a call reaches: for OpenCode's resource tools the one named in `server` (every configured one when
   * none is named: the listing covers them all), for an MCP tool those that could own its id.
   *
   * @example
   * SecurityMcp.serversOfCall("read_mcp_resource", { server: "docs", uri: "note://x" }, ["docs", "jira"]) // ["docs"]
   * SecurityMcp.serversOfCall("list_mcp_resources", {}, ["docs", "jira"]) // ["docs", "jira"]
   */
  export function serversOfCall(toolId: string, args: unknown, servers: readonly string[]): string[] {
    if (!OpenCode.MCP_RESOURCE_TOOLS.has(toolId)) return serversOf(toolId, servers)
    const named = args && typeof args === "object" ? (args as Record<string, unknown>).server : undefined
    return typeof named === "string" && named ? [named] : [...servers]
  }

  /**
   * The policy for a tool call: undefined when no configured server owns it (not an MCP tool), else the strictest
   * policy among the servers it could reach (`serversOfCall`; pass the call's arguments for the resource tools).
   *
   * @example
   * SecurityMcp.policyOfTool(state, "docs_search", ["docs"]) // "trusted" when the policy lists docs as trusted
   */
  export function policyOfTool(
    state: SecurityConfig.State,
    toolId: string,
    servers: readonly string[],
    args?: unknown,
  ): { policy: SecuritySchema.McpPolicy; servers: string[] } | undefined {
    const owners = serversOfCall(toolId, args, servers)
    if (!owners.length) return undefined
    let policy: SecuritySchema.McpPolicy = "trusted"
    for (const s of owners) {
      const p = SecurityConfig.getMcpPolicy(state, s)
      if (RANK[p] > RANK[policy]) policy = p
    }
    return { policy, servers: owners }
  }

  /** Options of node, bun and deno whose value is a file run or read before the server's own code. */
  const FILE_FLAGS = new Set(["-r", "--require", "--import", "--preload", "--loader", "--env-file", "--config"])

  /** Shells whose `-c` text is a script (read as the shell guard reads a command). */
  const SHELLS = /^(sh|bash|dash|zsh|ksh|ash)(\.exe)?$/

  /** The folders from `dir` up to `stop` (only `dir` when `stop` is not above it). */
  function upTo(dir: string, stop: string): string[] {
    const out = [dir]
    if (!SecurityPath.isInside(dir, stop)) return out
    for (let d = dir; d !== stop && path.dirname(d) !== d;) out.push((d = path.dirname(d)))
    return out
  }

  /** The `.env` files Bun loads from the folder it starts in. */
  export const BUN_ENV_FILES = [
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.development.local",
    ".env.production.local",
    ".env.test.local",
  ] as const

  /** Package runners: the words that start one, and the subcommands of a package manager that run a package's bin. */
  const RUNNERS = /^(npx|pnpx|bunx|npm-exec)$/
  const RUNNER_SUBCOMMANDS: Record<string, RegExp> = {
    npm: /^(exec|x)$/,
    bun: /^x$/,
    pnpm: /^(dlx|exec)$/,
    yarn: /^(dlx|exec|run)$/,
  }
  /** Runner options whose value is the next word (`-p pkg`, `-c "cmd"`, `--cwd dir`). */
  const VALUE_OPTIONS = new Set(["-p", "--package", "-c", "--call", "--cwd", "--prefix", "-C", "--dir", "--registry"])
  /** Files from the server's folder up to `/` that redirect a package manager's resolution (registry, scripts, `yarnPath`). */
  const RESOLUTION_FILES: Record<string, readonly string[]> = {
    npm: [".npmrc"],
    pnpm: [".npmrc", "pnpm-workspace.yaml"],
    yarn: [".yarnrc.yml", ".yarnrc", ".npmrc"],
    bun: [".npmrc"],
  }

  /** `@scope/name@1.2` → `@scope/name`; undefined for a path, URL, git or alias spec (nothing local to shadow it). */
  function packageName(spec: string): string | undefined {
    if (!spec || /^[./~]|:/.test(spec)) return undefined
    const name = spec.replace(/(.)@[^/]*$/, "$1")
    if (!/^(@[\w.-]+\/)?[\w.-]+$/.test(name) || name.split("/").some((part) => /^\.+$/.test(part))) return undefined
    return name
  }

  /**
   * The folder of npm exec's cache for these package specs, as npm (libnpmexec 7+) names it: the first 16 hex digits
   * of the SHA-512 of the specs as written, sorted and joined by line breaks.
   *
   * @example
   * SecurityMcp.npxHash(["opencode-builtins"]) // 16 hex digits
   */
  export function npxHash(specs: readonly string[]): string {
    const sorted = [...specs].sort((a, b) => a.localeCompare(b, "en"))
    return crypto.createHash("sha512").update(sorted.join("\n")).digest("hex").slice(0, 16)
  }

  /** The program word without its folder and a Windows extension (`/usr/bin/npx.cmd` → `npx`). */
  const programName = (w: string) => path.basename(w).replace(/\.(exe|cmd|bat|ps1)$/i, "")

  /**
   * What a package runner (`npx`, `npm exec`/`x`, `bunx`, `bun x`, `pnpx`, `pnpm dlx`/`exec`, `yarn dlx`/`exec`/`run`)
   * or a bare command name of a configured local MCP server would resolve to, present or not: the
   * `node_modules/.bin/<bin>` and `node_modules/<package>/` of every folder from the server's folder up to `/` (npm
   * exec looks for a local bin in each of them before the registry, and runs a package the local tree holds; what it
   * starts finds every such `.bin` on its `PATH`; a pinned version does not change that: a local copy of that version,
   * or a `.bin/<name>@<version>` file, is taken), and the files there that redirect the package manager (`.npmrc`,
   * pnpm's `pnpm-workspace.yaml`, Yarn's `.yarnrc.yml` whose `yarnPath` is run). OpenCode starts the server outside
   * the sandbox at its next start, so none of them may be the agent's: held whether they exist or not, and one a
   * command creates is moved aside (`SecurityGuard.protectHost`). Folders end in a separator; system folders are
   * left out. Disabled and remote servers have none.
   *
   * @example
   * SecurityMcp.resolvedPaths({ s: { type: "local", command: ["npx", "-y", "my-mcp"] } }, { directory: "/home/me/repo" })
   * // ["/home/me/repo/node_modules/.bin/my-mcp", "/home/me/repo/node_modules/my-mcp/", …, "/node_modules/my-mcp/", …]
   */
  export function resolvedPaths(
    mcp: unknown,
    input: { directory: string; env?: Record<string, string | undefined> },
  ): string[] {
    const env = input.env ?? process.env
    if (!mcp || typeof mcp !== "object") return []
    const out = new Set<string>()
    const add = (p: string) => {
      const bare = p.endsWith(path.sep) ? p.slice(0, -1) : p
      if (!SecurityPath.SYSTEM.some((d) => SecurityPath.isInside(bare, d))) out.add(p)
    }
    for (const { words, cwd } of localServers(mcp, input.directory, true)) {
      const folders = upTo(cwd, "/")
      const bins = new Set<string>()
      const packages = new Set<string>()
      let manager: string | undefined
      /** The package specs npm exec installs into its cache when the local tree lacks them (`npxCache`). */
      const specs: string[] = []
      const program = programName(words[0])
      // A bare command name: found on PATH, which holds every `node_modules/.bin` up to `/` when OpenCode was started
      // by a package manager (`npx opencode`, `bun run`).
      if (!words[0].includes("/") && !words[0].includes("\\")) bins.add(words[0])
      let rest: string[] | undefined
      if (RUNNERS.test(program)) {
        manager = program === "bunx" ? "bun" : program === "pnpx" ? "pnpm" : "npm"
        rest = words.slice(1)
      } else if (RUNNER_SUBCOMMANDS[program]) {
        // `npm --yes exec pkg`: options of the manager itself may come before the subcommand.
        const at = words.findIndex((w, i) => i > 0 && !w.startsWith("-"))
        if (at > 0 && RUNNER_SUBCOMMANDS[program].test(words[at])) {
          manager = program
          rest = words.slice(at + 1)
        }
      }
      if (manager && rest) {
        let command: string | undefined
        for (let i = 0; i < rest.length; i++) {
          const w = rest[i]
          if (w === "--") {
            command = rest[i + 1]
            break
          }
          const [flag, value] = w.includes("=")
            ? [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]
            : [w, undefined]
          if (flag === "-p" || flag === "--package") {
            const spec = value ?? rest[++i]
            const name = spec ? packageName(spec) : undefined
            if (name) packages.add(name)
            if (spec) specs.push(spec)
            continue
          }
          if (w.startsWith("-")) {
            if (value === undefined && VALUE_OPTIONS.has(flag)) i++
            continue
          }
          command = w
          break
        }
        if (command) {
          const name = packageName(command)
          // npm exec looks for `.bin/<the word as given>` first (`.bin/my-mcp@1.2.0` too).
          if (!/^[./]/.test(command) && !command.includes("..")) bins.add(command)
          if (name) {
            bins.add(name.split("/").pop()!)
            if (!packages.size) {
              packages.add(name)
              specs.push(command)
            }
          }
        }
        // bunx runs what its folder in the temporary folder (`bunx-<uid>-<name>@<version or latest>`) holds, even offline.
        if (manager === "bun" && command && specs.length === 1 && specs[0] === command && packageName(command)) {
          const name = packageName(command)!
          const version = command.slice(name.length + 1) || "latest"
          const uid = typeof process.getuid === "function" ? process.getuid() : 0
          add(path.join(env.TMPDIR || os.tmpdir(), `bunx-${uid}-${name}@${version}`) + path.sep)
        }
        // npm exec runs a package of its cache (`<cache>/_npx/<hash>/node_modules`) without asking the registry again.
        if (manager === "npm" && specs.length && specs.every((spec) => packageName(spec))) {
          const cache = env.npm_config_cache || env.NPM_CONFIG_CACHE || path.join(env.HOME || os.homedir(), ".npm")
          add(path.join(path.resolve(cwd, cache), "_npx", npxHash(specs)) + path.sep)
        }
      }
      for (const dir of folders) {
        for (const bin of bins) add(path.join(dir, "node_modules", ".bin", bin))
        for (const name of packages) add(path.join(dir, "node_modules", name) + path.sep)
        if (manager) for (const f of RESOLUTION_FILES[manager]) add(path.join(dir, f))
      }
    }
    return [...out]
  }

  /** `--flag=value` → [flag, value]; a word without `=` → [word, undefined]. */
  function split(w: string): [string, string | undefined] {
    const at = w.indexOf("=")
    return at > 0 ? [w.slice(0, at), w.slice(at + 1)] : [w, undefined]
  }

  /** Poetry's global options whose value is the next word. */
  const POETRY_VALUE_OPTIONS = new Set(["-C", "--directory", "-P", "--project"])
  /** Script text naming a Python launcher. */
  const LAUNCHER_TEXT = /(^|[^\w.-])((python|pypy)(\d+(\.\d+)?t?)?|uvx?|poetry|pipx|pdm|hatch|rye|pipenv)([^\w.-]|$)/
  /** `env` (GNU coreutils, BSD) options: those with a value (glued or the next word), and flags. */
  const ENV_VALUE_SHORT = new Set(["u", "C", "S", "P"])
  const ENV_FLAGS_SHORT = new Set(["i", "0", "v"])
  const ENV_LONG_VALUE = new Set(["--unset", "--chdir", "--split-string"])
  const ENV_LONG_FLAGS = /^--(ignore-environment|null|debug|(block|default|ignore)-signal(=.*)?|list-signal-handling)$/

  /**
   * `env -S` text split into words as env splits it (blanks; single and double quotes); undefined for what this does
   * not read (backslash escapes, `${VAR}`), so that the caller fails closed.
   */
  function splitEnvString(text: string): string[] | undefined {
    if (/[\\$]/.test(text)) return undefined
    const out: string[] = []
    let word: string | undefined
    let quote: string | undefined
    for (const c of text) {
      if (quote) {
        if (c === quote) quote = undefined
        else word += c
        continue
      }
      if (c === "'" || c === '"') {
        quote = c
        word ??= ""
        continue
      }
      if (/\s/.test(c)) {
        if (word !== undefined) out.push(word)
        word = undefined
        continue
      }
      if (c === "#" && word === undefined) break
      word = (word ?? "") + c
    }
    if (quote) return undefined
    if (word !== undefined) out.push(word)
    return out
  }

  /**
   * The command `env` starts and the folder it starts it in (`env -i PATH=… python3 …`, `env -u X …`, `env -C dir …`,
   * `env -S "python3 -m m"`); undefined when an option is not understood.
   *
   * @example
   * unwrapEnv(["env", "-C", "srv", "-S", "python3 -m m"], "/r") // { words: ["python3", "-m", "m"], cwd: "/r/srv" }
   */
  function unwrapEnv(
    words: string[],
    cwd: string,
    env: Record<string, string | undefined> = {},
  ): { words: string[]; cwd: string; env: Record<string, string | undefined> } | undefined {
    env = { ...env }
    // `NAME=value` words, then the command; options are not read after the first of them.
    const command = (at: number) => {
      for (; at < words.length && /^[^=]+=/.test(words[at]); at++) {
        const eq = words[at].indexOf("=")
        env[words[at].slice(0, eq)] = words[at].slice(eq + 1)
      }
      return { words: words.slice(at), cwd, env }
    }
    for (let i = 1; i < words.length; i++) {
      const w = words[i]
      if (w === "-") {
        env = {}
        continue
      }
      if (w === "--") return command(i + 1)
      if (w.startsWith("--")) {
        if (ENV_LONG_FLAGS.test(w)) {
          if (w === "--ignore-environment") env = {}
          continue
        }
        const [flag, value] = split(w)
        if (!ENV_LONG_VALUE.has(flag)) return undefined
        const v = value ?? words[++i]
        if (v === undefined) return undefined
        if (flag === "--chdir") cwd = path.resolve(cwd, v)
        if (flag === "--unset") delete env[v]
        if (flag === "--split-string") {
          const inner = splitEnvString(v)
          return inner && unwrapEnv(["env", ...inner, ...words.slice(i + 1)], cwd, env)
        }
        continue
      }
      if (w.startsWith("-") && w.length > 1) {
        for (let j = 1; j < w.length; j++) {
          const c = w[j]
          if (ENV_FLAGS_SHORT.has(c)) {
            if (c === "i") env = {}
            continue
          }
          if (!ENV_VALUE_SHORT.has(c)) return undefined
          const v = j + 1 < w.length ? w.slice(j + 1) : words[++i]
          if (v === undefined) return undefined
          if (c === "C") cwd = path.resolve(cwd, v)
          if (c === "u") delete env[v]
          if (c === "S") {
            const inner = splitEnvString(v)
            return inner && unwrapEnv(["env", ...inner, ...words.slice(i + 1)], cwd, env)
          }
          // `-P altpath` (BSD) searches the program in other folders: not read here.
          if (c === "P") return undefined
          break
        }
        continue
      }
      return command(i)
    }
    return { words: [], cwd, env }
  }

  /**
   * The files uv reads, in the folder it starts in and each above it, to choose the interpreter and environment of
   * `uv run` (from uv's documentation, docs.astral.sh/uv/concepts/python-versions and configuration-files; not run
   * here): `.python-version` and `.python-versions` (any Python request, an interpreter's path included), `uv.toml`
   * and `pyproject.toml` (`requires-python`, `[tool.uv]`: `python-preference`, indexes, `managed`).
   */
  export const UV_PROJECT_FILES = [".python-version", ".python-versions", "uv.toml", "pyproject.toml"]
  /** Python interpreters by name (`python`, `python3`, `python3.12`, `pypy3`; `programName` drops a Windows `.exe`). */
  const PYTHON = /^(python|pypy)(\d+(\.\d+)?t?)?$/
  /** Programs that start Python in the server's folder: a command of one that is not understood holds that folder. */
  const PYTHON_LAUNCHERS = /^((python|pypy)(\d+(\.\d+)?t?)?|uv|uvx|poetry|pipx|pdm|hatch|rye|pipenv|conda|micromamba)$/
  /** Python's short options without a value (`-u`, `-B`, `-I`…); `-X`, `-W` take one (glued or the next word). */
  /** The launchers a wrapper's words are searched for: Python's, `go` and `cargo`. */
  const LAUNCHER = new RegExp(PYTHON_LAUNCHERS.source.replace(/\)\$$/, "|go|cargo)$"))
  const PYTHON_FLAGS = new Set("bBdEhiIOPqsSuvVxR?".split(""))
  const PYTHON_VALUE_OPTIONS = new Set(["X", "W", "Q"])
  /** Python's long options: with a value, and those that print and exit. */
  const PYTHON_LONG_VALUE = new Set(["--check-hash-based-pycs"])
  const PYTHON_LONG_EXIT = new Set(["--help", "--version", "--help-env", "--help-xoptions", "--help-all"])
  /** uv's options (global and of `uv run`) whose value is the next word. */
  const UV_VALUE_OPTIONS = new Set([
    "--from",
    "--python-preference",
    "--allow-insecure-host",
    "--keyring-provider",
    "--index-strategy",
    "--exclude-newer",
    "--resolution",
    "--prerelease",
    "--link-mode",
    "--config-setting",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "--no-binary-package",
    "--no-build-package",
    "--no-extra",
    "--with",
    "--with-editable",
    "--with-requirements",
    "--python",
    "-p",
    "--directory",
    "--project",
    "--env-file",
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--package",
    "--index",
    "--default-index",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--config-file",
    "--cache-dir",
    "--color",
  ])
  /** `go run` (build) options whose value is the next word. */
  const GO_VALUE_OPTIONS = new Set([
    "-C",
    "-exec",
    "-toolexec",
    "-tags",
    "-mod",
    "-modfile",
    "-overlay",
    "-o",
    "-p",
    "-gcflags",
    "-ldflags",
    "-asmflags",
    "-gccgoflags",
    "-buildmode",
    "-compiler",
    "-installsuffix",
    "-pgo",
    "-pkgdir",
    "-coverpkg",
    "-covermode",
  ])
  /** `go run` options whose value is a file or program the build reads or runs (`-overlay` replaces source files). */
  const GO_FILE_OPTIONS = new Set(["-exec", "-toolexec", "-modfile", "-overlay", "-pgo"])

  /** Packages of one `cargo run` server whose manifests are read (members, path dependencies); past it, held whole. */
  const MAX_CARGO_PACKAGES = 1000

  /** cargo's global options and `cargo run`'s options whose value is the next word. */
  const CARGO_VALUE_OPTIONS = new Set([
    "-C",
    "--config",
    "-Z",
    "--color",
    "--manifest-path",
    "--lockfile-path",
    "-p",
    "--package",
    "--bin",
    "--example",
    "-F",
    "--features",
    "--target",
    "--target-dir",
    "--artifact-dir",
    "--profile",
    "-j",
    "--jobs",
    "--message-format",
  ])
  /** cargo's built-in subcommands and their short names: an `[alias]` of one of these names is ignored. */
  const CARGO_BUILTINS = new Set(
    (
      "add b bench build c check clean config d doc fetch fix generate-lockfile help info init install " +
      "locate-project login logout metadata new owner package pkgid publish r read-manifest remove report rm run " +
      "rustc rustdoc search t test tree uninstall update vendor verify-project version yank"
    ).split(" "),
  )

  /**
   * What the cargo configuration files of a start in `cwd` say (`.cargo/config.toml` and `.cargo/config` in `cwd` and
   * each folder above, nearest first, then `$CARGO_HOME`'s): `alias(name)` gives an `[alias]` entry's words
   * (undefined when none, null when not a string or an array of strings), `targetDir` is `build.target-dir` (relative
   * to the folder holding `.cargo`), `unreadable` a file present that is not valid TOML.
   */
  function cargoConfig(cwd: string, env: Record<string, string | undefined>) {
    const home = env.HOME || os.homedir()
    const cargoHome = env.CARGO_HOME && path.isAbsolute(env.CARGO_HOME) ? env.CARGO_HOME : path.join(home, ".cargo")
    const files = [
      ...upTo(cwd, "/").flatMap((d) => CARGO_CONFIG_FILES.map((f) => ({ file: path.join(d, ".cargo", f), base: d }))),
      ...CARGO_CONFIG_FILES.map((f) => ({ file: path.join(cargoHome, f), base: path.dirname(cargoHome) })),
    ]
    let unreadable = false
    const tables: { value: any; base: string }[] = []
    for (const { file, base } of files) {
      let text: string
      try {
        text = fs.readFileSync(file, "utf8")
      } catch {
        continue
      }
      try {
        const value = parseToml(text)
        if (value && typeof value === "object") tables.push({ value, base })
      } catch {
        unreadable = true
      }
    }
    const dir = tables.find((t) => typeof t.value.build?.["target-dir"] === "string")
    return {
      unreadable,
      targetDir: dir ? path.resolve(dir.base, dir.value.build["target-dir"]) : undefined,
      alias(name: string): string[] | null | undefined {
        const t = tables.find((t) => t.value.alias && typeof t.value.alias === "object" && name in t.value.alias)
        if (!t) return undefined
        const v = t.value.alias[name]
        if (typeof v === "string") return v.split(/\s+/).filter(Boolean)
        if (Array.isArray(v) && v.every((w) => typeof w === "string")) return v
        return null
      },
    }
  }

  /** The names of cargo's configuration file in a `.cargo` folder and in `$CARGO_HOME` (`config` is the old one). */
  export const CARGO_CONFIG_FILES = ["config.toml", "config"] as const
  /** rustup's toolchain override files, read from the folder cargo starts in upward (a `path` runs that toolchain). */
  export const RUSTUP_TOOLCHAIN_FILES = ["rust-toolchain.toml", "rust-toolchain"] as const

  /**
   * The user configuration and installation of the toolchain a local MCP server's launcher is, which set the programs
   * it runs whatever the project holds (from the tools' documentation):
   * - `go`: the GOENV file `go env -w` writes (`$GOENV`, else `$XDG_CONFIG_HOME/go/env`, else `~/.config/go/env`;
   *   none with `GOENV=off`): `GOFLAGS=-toolexec=<program>`, `CC`, `GOTOOLCHAIN`; and the installation the `go` on
   *   `PATH` (or `$GOROOT`) belongs to, with its `go.env`, when it is not a system folder.
   * - `cargo`: `$CARGO_HOME/config.toml` and `config` (`~/.cargo`; `build.rustc-wrapper`, `target.<triple>.runner`),
   *   rustup's `$RUSTUP_HOME/settings.toml` (the default toolchain and per-folder overrides) and `toolchains/` (`~/.rustup`).
   * The variables are the server's (its entry's `environment` over OpenCode's); relative ones are not followed.
   *
   * @example
   * SecurityMcp.toolchainFiles("go", { HOME: "/home/me" }) // ["/home/me/.config/go/env"]
   */
  export function toolchainFiles(launcher: "go" | "cargo", env: Record<string, string | undefined>): string[] {
    const home = env.HOME || os.homedir()
    const absolute = (v: string | undefined) => (v && path.isAbsolute(v) ? v : undefined)
    if (launcher === "go") {
      const out: string[] = []
      if (env.GOENV !== "off")
        out.push(
          absolute(env.GOENV) ?? path.join(absolute(env.XDG_CONFIG_HOME) ?? path.join(home, ".config"), "go", "env"),
        )
      const goroot = absolute(env.GOROOT) ?? installationOf("go", env.PATH)
      if (goroot) out.push(goroot + path.sep)
      return out
    }
    const cargoHome = absolute(env.CARGO_HOME) ?? path.join(home, ".cargo")
    const rustupHome = absolute(env.RUSTUP_HOME) ?? path.join(home, ".rustup")
    return [
      ...CARGO_CONFIG_FILES.map((f) => path.join(cargoHome, f)),
      path.join(rustupHome, "settings.toml"),
      path.join(rustupHome, "toolchains") + path.sep,
    ]
  }

  /** The installation a program found on `path` belongs to (`<root>/bin/<name>`, links followed): its `<root>`. */
  function installationOf(name: string, search: string | undefined): string | undefined {
    for (const dir of (search ?? "").split(path.delimiter)) {
      if (!dir || !path.isAbsolute(dir)) continue
      try {
        const real = fs.realpathSync(path.join(dir, name))
        if (!fs.statSync(real).isFile()) continue
        const bin = path.dirname(real)
        return path.basename(bin) === "bin" ? path.dirname(bin) : undefined
      } catch {
        // Not in this folder.
      }
    }
    return undefined
  }

  type Manifest = { package?: any; workspace?: any; [key: string]: any }

  /** A `Cargo.toml` read as TOML; undefined when absent or not valid. */
  function readManifest(file: string): Manifest | undefined {
    try {
      const parsed = parseToml(fs.readFileSync(file, "utf8"))
      return parsed && typeof parsed === "object" ? (parsed as Manifest) : undefined
    } catch {
      return undefined
    }
  }

  /**
   * A workspace's member folders: `members` entries, a `*` or `?` in a part matching the folders there. With `globs`,
   * the folder holding a glob's first wildcard part (`crates/` for `crates/*`) is added to it: a folder created there
   * later is a member at the next build.
   */
  function workspaceMembers(root: string, workspace: { members?: unknown } | undefined, globs?: string[]): string[] {
    const out: string[] = []
    const list = Array.isArray(workspace?.members) ? workspace.members : []
    for (const entry of list) {
      if (typeof entry !== "string") continue
      let dirs = [root]
      for (const part of entry.split("/").filter((p) => p && p !== ".")) {
        if (!/[*?[]/.test(part)) {
          dirs = dirs.map((d) => path.resolve(d, part))
          continue
        }
        globs?.push(...dirs)
        const re = new RegExp(
          "^" +
            part
              .replace(/[.+^${}()|\\]/g, "\\$&")
              .replace(/\*/g, ".*")
              .replace(/\?/g, ".") +
            "$",
        )
        dirs = dirs.flatMap((d) => {
          try {
            return fs
              .readdirSync(d, { withFileTypes: true })
              .filter((e) => e.isDirectory() && re.test(e.name))
              .map((e) => path.join(d, e.name))
          } catch {
            return []
          }
        })
      }
      out.push(...dirs)
    }
    return out
  }

  /** The folders of the path dependencies a manifest names (`[dependencies]`, targets', `[workspace.dependencies]`, `[patch]`, `[replace]`). */
  function pathDependencies(dir: string, manifest: Manifest | undefined): string[] {
    const out: string[] = []
    const walk = (value: unknown, inDeps: boolean) => {
      if (!value || typeof value !== "object") return
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        if (inDeps && key === "path" && typeof v === "string") out.push(path.resolve(dir, v))
        else walk(v, inDeps || /dependencies$|^patch$|^replace$/.test(key))
      }
    }
    walk(manifest, false)
    return out
  }

  /** The files a manifest names as a target's or the build script's source (`[lib] path`, `[[bin]] path`, `build`). */
  function targetPaths(manifest: Manifest | undefined): string[] {
    if (!manifest) return []
    const out: string[] = []
    if (typeof manifest.package?.build === "string") out.push(manifest.package.build)
    for (const kind of ["lib", "bin", "example"]) {
      const entries = Array.isArray(manifest[kind]) ? manifest[kind] : [manifest[kind]]
      for (const t of entries) if (t && typeof t.path === "string") out.push(t.path)
    }
    return out
  }

  /** CPython 3.6 to 3.15, and their free-threaded builds (`312`, `313t`): the tags of their file names. */
  const PYTHON_VERSIONS = Array.from({ length: 10 }, (_, i) => [`3${i + 6}`, `3${i + 6}t`]).flat()

  /**
   * The file names Python's import system takes for module `name` in one folder: a package (`name/__init__.*`), a
   * module (`name.py`, a compiled extension, a `.pyc` without source), and the cached `.pyc` it runs in place of a
   * source whose size and time it records (`__pycache__/name.cpython-312.pyc`, `.opt-1`, `.opt-2`). Extension names
   * carry the interpreter's tag (`name.cpython-312-x86_64-linux-gnu.so`): those of the versions above on this machine's
   * architecture. The `__pycache__` folders themselves stay writable: the agent's test runs write their own caches there.
   */
  function pythonModuleFiles(folder: string, name: string): string[] {
    const arch = process.arch === "arm64" ? "aarch64" : process.arch === "x64" ? "x86_64" : process.arch
    const platform = process.platform === "darwin" ? "darwin" : `${arch}-linux-gnu`
    const tags = ["", ".abi3", ...PYTHON_VERSIONS.map((v) => `.cpython-${v}-${platform}`)]
    const forms = (dir: string, base: string) => [
      path.join(dir, base + ".py"),
      path.join(dir, base + ".pyc"),
      path.join(dir, base + ".pyw"),
      ...tags.map((t) => path.join(dir, base + t + ".so")),
      ...PYTHON_VERSIONS.flatMap((v) =>
        ["", ".opt-1", ".opt-2"].map((o) => path.join(dir, "__pycache__", `${base}.cpython-${v}${o}.pyc`)),
      ),
    ]
    return [...forms(path.join(folder, name), "__init__"), ...forms(folder, name)]
  }

  /**
   * What `python -m a.b.c` would run from `base` (the first folder of `sys.path`: the server's folder), present or
   * not: for every prefix of the dotted name its package initialiser and the module files that would shadow it (Python
   * runs `a/__init__.py` and `a/b/__init__.py` before `a/b/c`), and the package's `__main__` for the last one.
   *
   * @example
   * pythonModulePaths("/repo", "tools.mcp") // ["/repo/tools/__init__.py", …, "/repo/tools.py", …, "/repo/tools/mcp.py", …]
   */
  function pythonModulePaths(base: string, module: string): string[] {
    const parts = module.split(".")
    if (parts.some((p) => !/^[\w]+$/.test(p))) return []
    const out: string[] = []
    for (let i = 0; i < parts.length; i++)
      out.push(...pythonModuleFiles(path.join(base, ...parts.slice(0, i)), parts[i]))
    const main = path.join(base, ...parts)
    out.push(path.join(main, "__main__.py"), path.join(main, "__main__.pyc"))
    return out
  }

  /** The `.go` files of a folder now. */
  function listGo(folder: string): string[] {
    try {
      return fs.readdirSync(folder).filter((f) => f.endsWith(".go"))
    } catch {
      return []
    }
  }

  /**
   * What a local MCP server started by a language's launcher would run before or as its own code, present or not, which
   * OpenCode runs on the host at its next start (none of it may be the agent's: held, and one a command creates is
   * moved aside, `SecurityGuard.protectHost`):
   * - Python (`python`, `python3`, `python3.12`, an interpreter by path, `uv run`): for `-m a.b.c` the modules and
   *   package initialisers along the dotted name below the server's folder (first on `sys.path`) and a shadowing
   *   `a.py`; for a script, the script; for an interpreter inside the project (`.venv/bin/python`), or `uv run` (the
   *   project's `.venv` of the server's folder and those above it up to the project, with the files uv reads there to
   *   choose the interpreter, `UV_PROJECT_FILES`), the whole virtual environment:
   *   its `pyvenv.cfg`, programs, `site-packages` (`site` runs the import lines of every `.pth` file and
   *   `sitecustomize.py`) and the packages the server imports from it.
   * - Go (`go run ./cmd/mcp`, `go run main.go`): the package folder (every `.go` file in it is compiled, a new one too)
   *   or the files named, the files its options read or run (`-overlay`, `-modfile`, `-exec`), and the `go.mod`,
   *   `go.sum`, `go.work` and `go.work.sum` of that folder and those above it, and the module's `vendor/` folder.
   * - Rust (`cargo run`, after `+toolchain`, `-C`, `--manifest-path`, `-p`): the manifest named or found from the
   *   server's folder upward (every `Cargo.toml` on the way), each package cargo builds — the one run, or the workspace
   *   members `-p` names (all of them for a virtual manifest), and their path dependencies and the root's `[patch]`
   *   paths — whole when it has a folder of its own, else (the project folder itself) its `Cargo.toml`, `build.rs`,
   *   `src/` and the target paths its manifest names; every `Cargo.toml` and `Cargo.lock` from the package up to `/`
   *   (a workspace root), and the target folder (a built program that looks up to date is run as it is). For any cargo
   *   subcommand: `.cargo/config.toml` and `.cargo/config` and rustup's `rust-toolchain.toml`/`rust-toolchain` of the
   *   folder cargo starts in and every folder above it.
   * - For `go` and `cargo` whatever they run: the toolchain's user configuration (`toolchainFiles`: the GOENV file,
   *   `$CARGO_HOME/config.toml`, rustup's settings and toolchains).
   * The command is unwrapped first, each wrapper by its own option parser: `env` (`-i`, `-u`, `-C`, `-S`), a shell's
   * `-c` script (read by the shell guard's parser), uv's global options (`uv --directory srv run x.py`), `uv tool
   * run`/`uvx --from <local source>`, `poetry run`. Fail closed: a Python launcher whose arguments are not understood
   * holds what can be held of its folder (its modules and package initialisers as they are now; for uv and Poetry the
   * `.venv`).
   * Folders end in a separator; system folders are left out. Disabled and remote servers have none.
   *
   * @example
   * await SecurityMcp.launcherPaths({ s: { command: ["python3", "-m", "tools.mcp"] } }, { directory: "/repo" })
   * // ["/repo/tools/__init__.py", …, "/repo/tools.py", …, "/repo/tools/mcp.py", …, "/repo/tools/mcp/__main__.py", …]
   */
  export async function launcherPaths(
    mcp: unknown,
    input: { directory: string; env?: Record<string, string | undefined> },
  ): Promise<string[]> {
    return (await launcherHolds(mcp, input)).paths
  }

  /**
   * The folders inside the project that a local Python MCP server has on `sys.path` before the standard library, whose
   * importable top-level names are held, present or not (`SecurityPythonPath`): a `json.py` or `mcp/__init__.py` there
   * would shadow the standard library's or an installed package's module for every import the server makes. The first
   * folder by CPython's rules (`-m`, `-c`, standard input: the server's folder; a script: its folder; none with `-P`,
   * `-I` or `PYTHONSAFEPATH`) and each `PYTHONPATH` entry (ignored with `-E`, `-I`), from the entry's `environment`,
   * `env NAME=value` and `NAME=value` words, a `sh -c` script's plain assignments, or OpenCode's own environment (`env`,
   * default `process.env`; `env -i` and `-u` honoured). A Python start that is not understood counts as code run in
   * its folder. Disabled and remote servers have none.
   *
   * @example
   * await SecurityMcp.pythonFolders({ s: { command: ["python3", "-m", "mcp_server_fetch"] } }, { directory: "/repo" })
   * // ["/repo"]
   */
  export async function pythonFolders(
    mcp: unknown,
    input: { directory: string; env?: Record<string, string | undefined> },
  ): Promise<string[]> {
    return (await launcherHolds(mcp, input)).modules
  }

  type Env = Record<string, string | undefined>

  /** `launcherPaths` and `pythonFolders` in one reading of the configuration. */
  export async function launcherHolds(
    mcp: unknown,
    input: { directory: string; env?: Env },
  ): Promise<{ paths: string[]; modules: string[] }> {
    if (!mcp || typeof mcp !== "object") return { paths: [], modules: [] }
    const directory = path.resolve(input.directory)
    const out = new Set<string>()
    const modules = new Set<string>()
    /** The `sys.path` folders before the standard library of a CPython start, those inside the project. */
    const sysPath = (cwd: string, mode: SecurityPythonPath.Mode, flags: string, env: Env) => {
      for (const f of SecurityPythonPath.folders({ cwd, mode, flags, env })) {
        if (!SecurityPath.isInside(f, directory)) continue
        modules.add(f)
        // An entry that is not a folder, or a missing part of its path, may be a zip archive Python imports from
        // (`deps.zip`, `deps.zip/lib`): held as a file, present or not (`SecurityPythonPath.archives`).
        for (const a of SecurityPythonPath.archives(f, directory)) add(a)
      }
    }
    const add = (p: string) => {
      const bare = p.endsWith(path.sep) ? p.slice(0, -1) : p
      if (!SecurityPath.SYSTEM.some((d) => SecurityPath.isInside(bare, d))) out.add(p)
    }
    /**
     * The virtual environments uv or Poetry would run for a project at `dir`, and the files uv reads to choose the
     * interpreter and environment (`UV_PROJECT_FILES`: a `.python-version` may name an interpreter by path): in `dir`
     * and each folder above it, to the project.
     */
    const venvs = (dir: string) => {
      for (const d of upTo(dir, directory)) {
        add(path.join(d, ".venv") + path.sep)
        for (const f of UV_PROJECT_FILES) add(path.join(d, f))
      }
    }
    /**
     * Fail closed: a Python start in `cwd` whose arguments are not understood may import any module of that folder (it
     * is first on `sys.path`). What can be held of it: its `*.py` files and package initialisers as they are now, and
     * with `venv` the virtual environments of the folder. With `env`, it is a Python start there: the folder (and the
     * environment's `PYTHONPATH`) on `sys.path`, new names included.
     */
    const folder = (cwd: string, venv: boolean, env?: Env) => {
      if (env) sysPath(cwd, "code", "", env)
      if (venv) venvs(cwd)
      let entries: fs.Dirent[] = []
      try {
        entries = fs.readdirSync(cwd, { withFileTypes: true })
      } catch {
        return
      }
      for (const e of entries) {
        if (e.isFile() && /\.(py|pyc|pyw|so|pth)$/.test(e.name)) add(path.join(cwd, e.name))
        if (e.isDirectory() && !e.name.startsWith("."))
          for (const f of ["__init__.py", "__init__.pyc", "__main__.py"])
            if (fs.existsSync(path.join(cwd, e.name, f))) add(path.join(cwd, e.name, f))
      }
    }
    /** `python [options] (-m module | script | -c code | -)` run in `cwd`; options parsed as CPython does. */
    const python = (args: string[], cwd: string, env: Env) => {
      /** The single-letter options seen (`-I`, `-P`, `-E` change `sys.path`). */
      let flags = ""
      const script = (word: string) => {
        add(path.resolve(cwd, word))
        sysPath(cwd, { script: word }, flags, env)
      }
      const code = () => {
        folder(cwd, false)
        sysPath(cwd, "code", flags, env)
      }
      for (let i = 0; i < args.length; i++) {
        const w = args[i]
        if (w === "--") {
          if (args[i + 1]) script(args[i + 1])
          else code()
          return
        }
        if (w.startsWith("--")) {
          const [flag, value] = split(w)
          if (PYTHON_LONG_EXIT.has(flag)) return
          if (PYTHON_LONG_VALUE.has(flag)) {
            if (value === undefined) i++
            continue
          }
          return code()
        }
        if (w.startsWith("-") && w.length > 1) {
          // A cluster of short options (`-uBm mod`, `-Xdev`, `-mtools.mcp`): a value option takes the rest or the next word.
          for (let j = 1; j < w.length; j++) {
            const c = w[j]
            if (PYTHON_FLAGS.has(c)) {
              flags += c
              continue
            }
            if (PYTHON_VALUE_OPTIONS.has(c)) {
              if (j + 1 === w.length) i++
              break
            }
            if (c === "m") {
              const module = w.slice(j + 1) || args[++i]
              const paths = module ? pythonModulePaths(cwd, module) : []
              if (paths.length) for (const p of paths) add(p)
              else folder(cwd, false)
              sysPath(cwd, "module", flags, env)
              return
            }
            // `-c code` imports what it names from the folder; an unknown option is not understood.
            return code()
          }
          continue
        }
        // `-` (standard input) or no script at all: any code.
        if (w === "-") return code()
        return script(w)
      }
      code()
    }
    /** A virtual environment whose interpreter `program` is (`<venv>/bin/python`), when it is inside the project. */
    const venvOf = (program: string, cwd: string) => {
      const interpreter = path.resolve(cwd, program)
      const bin = path.dirname(interpreter)
      const venv = path.dirname(bin)
      if (!/^(bin|Scripts)$/.test(path.basename(bin))) return add(interpreter)
      if (venv === directory || !SecurityPath.isInside(venv, directory)) return add(interpreter)
      add(venv + path.sep)
    }
    /** A local source `uvx --from` or `--with-editable` installs (`.`, `./srv`, `file:…`): its build files and modules. */
    const source = (spec: string, cwd: string) => {
      if (!/^(\.|\/|~|file:)/.test(spec)) return
      const dir = path.resolve(cwd, spec.replace(/^file:(\/\/)?/, "").replace(/^~(?=\/|$)/, os.homedir()))
      for (const f of ["pyproject.toml", "setup.py", "setup.cfg"]) add(path.join(dir, f))
      folder(dir, false)
      folder(path.join(dir, "src"), false)
    }
    /** `uv [global options] run …`, `uv tool run …`, `uvx …`: options before and after the subcommand. */
    const uv = async (words: string[], cwd: string, depth: number, env: Env) => {
      let i = 1
      let project = cwd
      let sub = programName(words[0]) === "uvx" ? "tool" : undefined
      const option = (w: string) => {
        const [flag, value] = split(w)
        const v = value ?? (UV_VALUE_OPTIONS.has(flag) ? words[++i] : undefined)
        if (flag === "--directory" && v) project = cwd = path.resolve(cwd, v)
        else if (flag === "--project" && v) project = path.resolve(cwd, v)
        else if ((flag === "--from" || flag === "--with-editable") && v) source(v, cwd)
        // uv's settings in place of the discovered ones (`--python-preference`, indexes): held, present or not.
        else if (flag === "--config-file" && v) add(path.resolve(cwd, v))
      }
      if (!sub) {
        for (; i < words.length && words[i].startsWith("-"); i++) option(words[i])
        sub = words[i++]
        if (sub === "tool" && words[i] === "run") i++
        else if (sub !== "run") return folder(cwd, true, env)
      }
      let command: string[] = []
      let module: string | undefined
      for (; i < words.length; i++) {
        const w = words[i]
        if (w === "--") {
          command = words.slice(i + 1)
          break
        }
        const flag = split(w)[0]
        if (flag === "-m" || flag === "--module") {
          module = split(w)[1] ?? words[++i]
          break
        }
        if (w.startsWith("-")) {
          option(w)
          continue
        }
        command = words.slice(i)
        break
      }
      // A tool runs in its own environment from the cache; `uv run` the project's `.venv`, and what it holds.
      if (sub === "tool") return
      venvs(project)
      if (project !== cwd) venvs(cwd)
      if (module !== undefined) {
        const paths = pythonModulePaths(cwd, module)
        if (paths.length) for (const p of paths) add(p)
        else folder(cwd, true)
        sysPath(cwd, "module", "", env)
      } else if (command.length && /\.pyw?$/.test(command[0])) python(command, cwd, env)
      else if (command.length && PYTHON_LAUNCHERS.test(programName(command[0])))
        await launch(command, cwd, depth + 1, env)
      // A console script of the project (installed editable) or another program: not understood.
      else folder(cwd, true, env)
    }
    /** `poetry [global options] run <command>`: the command in the project's environment. */
    const poetry = async (words: string[], cwd: string, depth: number, env: Env) => {
      let i = 1
      for (; i < words.length && words[i].startsWith("-"); i++) {
        const [flag, value] = split(words[i])
        const v = value ?? (POETRY_VALUE_OPTIONS.has(flag) ? words[++i] : undefined)
        if ((flag === "-C" || flag === "--directory") && v) cwd = path.resolve(cwd, v)
      }
      venvs(cwd)
      if (words[i] !== "run") return folder(cwd, true, env)
      const command = words.slice(i + 1)
      if (command[0] === "--") command.shift()
      if (command.length && PYTHON_LAUNCHERS.test(programName(command[0]))) await launch(command, cwd, depth + 1, env)
      else folder(cwd, true, env)
    }
    /** `sh [options] -c "<script>"`: every command of the script, read by the shell guard's parser. */
    const shell = async (words: string[], cwd: string, depth: number, env: Env) => {
      let script: string | undefined
      let command = false
      for (let i = 1; i < words.length; i++) {
        const w = words[i]
        if (/^--(login|noprofile|norc|posix|restricted|verbose|noediting)$/.test(w)) continue
        if (w === "--rcfile" || w === "--init-file") {
          i++
          continue
        }
        if (/^[-+][a-zA-Z]+$/.test(w)) {
          if (w.includes("c")) command = true
          // `-o pipefail`, `-O extglob`: the value is the next word.
          if (/[oO]/.test(w)) i++
          continue
        }
        if (command) script = w
        break
      }
      // `sh script.sh` runs a file (held by `localFiles`); `sh` alone reads standard input.
      if (!command) return
      if (script === undefined) return folder(cwd, true, env)
      const parser = await SecurityShell.parser()
      const ctx = ShellContext.create(parser, { cwd })
      const tree = parser.parse(script)
      if (!tree) return folder(cwd, true, env)
      const state: ShellContext.State = { cwd, vars: new Map() }
      const commands: { words: string[]; cwd: string; env: Env }[] = []
      /** The script's environment: `export NAME=value` and `NAME=value` statements of plain words change it. */
      let scriptEnv = { ...env }
      const assign = (node: Node, into: Env) => {
        const m = /^(\w+)=(?:'([^']*)'|"([^"$`\\]*)"|([^'"$`\\\s]*))$/.exec(node.text)
        // A value built at run time: what it names cannot be known (Limits); the folders it had stay held.
        if (m) into[m[1]] = m[2] ?? m[3] ?? m[4] ?? ""
      }
      const walk = (node: Node) => {
        if (node.type === "variable_assignment") return assign(node, scriptEnv)
        if (node.type === "command") {
          const name = node.childForFieldName("name")
          const own = { ...scriptEnv }
          for (const child of node.namedChildren) if (child?.type === "variable_assignment") assign(child, own)
          if (!name) return
          const parts = [
            ShellWords.evaluate(ctx, name.namedChildren[0] ?? name, state, false),
            ...ShellWords.args(ctx, node, state),
          ]
          const list = parts.map((p) => p.values[0] ?? "")
          const known = parts.every((p) => !p.dynamic && p.values.length === 1)
          if (known && list[0] === "cd") state.cwd = list[1] ? path.resolve(state.cwd ?? cwd, list[1]) : undefined
          else if (known && state.cwd) commands.push({ words: list, cwd: state.cwd, env: own })
          // Built at run time, or after a `cd` to a folder not known: not understood.
          else if (LAUNCHER_TEXT.test(node.text)) folder(state.cwd ?? cwd, true, own)
          return
        }
        for (const child of node.namedChildren) if (child) walk(child)
      }
      try {
        if (tree.rootNode.hasError && LAUNCHER_TEXT.test(script)) folder(cwd, true, env)
        walk(tree.rootNode)
      } finally {
        tree.delete()
      }
      for (const c of commands) await launch(c.words, c.cwd, depth + 1, c.env)
    }
    /** One command as a server (or a wrapper of one) starts it in `cwd`. */
    const launch = async (words: string[], cwd: string, depth: number, env: Env): Promise<void> => {
      // `PYTHONPATH=lib python3 …` in a script: the variable for that command.
      if (words.length && /^\w+=/.test(words[0])) env = { ...env }
      for (; words.length && /^\w+=/.test(words[0]); words = words.slice(1))
        env[words[0].slice(0, words[0].indexOf("="))] = words[0].slice(words[0].indexOf("=") + 1)
      if (!words.length) return
      const program = programName(words[0])
      const mentions = () =>
        words.some((w) => w.split(/[\s;&|()`'"]+/).some((t) => PYTHON_LAUNCHERS.test(programName(t))))
      if (depth > 8) return mentions() ? folder(cwd, true, env) : undefined
      if (program === "env") {
        const inner = unwrapEnv(words, cwd, env)
        if (inner) return launch(inner.words, inner.cwd, depth + 1, inner.env)
        return mentions() ? folder(cwd, true, env) : undefined
      }
      // `exec python3 …`, `command python3 …`, `nohup python3 …` in a script.
      if (/^(exec|command|nohup)$/.test(program)) {
        let i = 1
        for (; i < words.length && words[i].startsWith("-"); i++) if (words[i] === "-a") i++
        return launch(words.slice(i), cwd, depth + 1, env)
      }
      if (SHELLS.test(program)) return shell(words, cwd, depth, env)
      if (PYTHON.test(program)) {
        if (words[0].includes("/") || words[0].includes("\\")) venvOf(words[0], cwd)
        return python(words.slice(1), cwd, env)
      }
      if (program === "uv" || program === "uvx") return uv(words, cwd, depth, env)
      if (program === "poetry") return poetry(words, cwd, depth, env)
      if (PYTHON_LAUNCHERS.test(program)) return folder(cwd, true, env)
      if (program === "go") return go(words, cwd, env)
      if (program === "cargo") return cargo(words, cwd, env)
      // Another wrapper (`timeout 10 python3 …`, `nice -n 5 uv run …`, `sudo -u me python3 …`, `timeout 60 cargo run`,
      // `rustup run stable cargo run`): its options are not read; the first known launcher it names (Python's, `go`,
      // `cargo`) is followed as if it started there, and for a Python one its folder is held too.
      const at = words.findIndex((w, i) => i > 0 && LAUNCHER.test(programName(w)))
      if (at > 0) {
        if (PYTHON_LAUNCHERS.test(programName(words[at]))) folder(cwd, true, env)
        return launch(words.slice(at), cwd, depth + 1, env)
      }
    }
    /** `go [-C dir] run [build options] <package | files>`. */
    const go = (words: string[], start: string, env: Env) => {
      // Whatever the subcommand: the go command's user configuration (`GOFLAGS=-toolexec=…`) and its installation.
      for (const p of toolchainFiles("go", env)) add(p)
      let cwd = start
      let at = 1
      for (; at < words.length && words[at].startsWith("-"); at++)
        if (words[at] === "-C" && words[at + 1]) cwd = path.resolve(cwd, words[++at])
        else if (words[at].startsWith("-C=")) cwd = path.resolve(cwd, words[at].slice(3))
      if (words[at] !== "run") return
      const packages: string[] = []
      for (let i = at + 1; i < words.length; i++) {
        const w = words[i]
        if (w === "--") break
        // Go takes `-flag` and `--flag`, its value glued with `=` or as the next word.
        const bare = w.replace(/^--/, "-")
        const [flag, value] = bare.includes("=")
          ? [bare.slice(0, bare.indexOf("=")), bare.slice(bare.indexOf("=") + 1)]
          : [bare, undefined]
        if (w.startsWith("-")) {
          const v = value ?? (GO_VALUE_OPTIONS.has(flag) ? words[++i] : undefined)
          if (flag === "-C" && v) cwd = path.resolve(cwd, v)
          // A program `-exec` names by path; one by name is found on PATH.
          else if (v && GO_FILE_OPTIONS.has(flag) && (!/exec$/.test(flag) || /[/\\]/.test(v))) add(path.resolve(cwd, v))
          continue
        }
        // `go run main.go util.go`: the files; `go run ./cmd/mcp args…`: one package, the rest are its arguments.
        if (w.endsWith(".go")) {
          packages.push(w)
          continue
        }
        if (!packages.length) packages.push(w)
        break
      }
      for (const pkg of packages) {
        // An import path (`example.com/x/cmd@v1`) is fetched into the module cache, outside the project.
        if (!/^(\.|\/)/.test(pkg) && !pkg.endsWith(".go")) continue
        const target = path.resolve(cwd, pkg.replace(/\/\.\.\.$/, ""))
        const folder = pkg.endsWith(".go") ? path.dirname(target) : target
        if (pkg.endsWith(".go")) add(target)
        // The project folder itself (`go run .`) cannot be held whole: its `.go` files as they are now (Limits).
        else if (SecurityPath.isInside(directory, folder)) for (const f of listGo(folder)) add(path.join(folder, f))
        else add(folder + path.sep)
        let root: string | undefined
        for (const dir of upTo(folder, "/")) {
          for (const f of ["go.mod", "go.sum", "go.work", "go.work.sum"]) add(path.join(dir, f))
          if (!root && fs.existsSync(path.join(dir, "go.mod"))) root = dir
        }
        add(path.join(root ?? cwd, "vendor") + path.sep)
      }
    }
    /**
     * `cargo [+toolchain] [global options] run [options] [-- args]`, as cargo reads it (doc.rust-lang.org/cargo:
     * commands/cargo-run, reference/config, reference/workspaces, reference/manifest): what it builds and runs on the
     * host, present or not.
     */
    const cargo = (words: string[], start: string, env: Env) => {
      for (const p of toolchainFiles("cargo", env)) add(p)
      let cwd = start
      let manifest: string | undefined
      let targetDir: string | undefined
      let example = false
      // `--config 'alias.mcp="run"'`: an alias set on the command line, not read (fail closed below).
      let inlineAlias = false
      const packages: string[] = []
      let i = 1
      if (words[i]?.startsWith("+")) i++
      const option = (w: string) => {
        const [flag, value] = split(w)
        const v = value ?? (CARGO_VALUE_OPTIONS.has(flag) ? words[++i] : undefined)
        if (v === undefined) return
        if (flag === "-C") cwd = path.resolve(cwd, v)
        else if (flag === "--manifest-path") manifest = v
        else if (flag === "-p" || flag === "--package") packages.push(v.replace(/[@:].*$/, ""))
        else if (flag === "--example") example = true
        else if (flag === "--target-dir") targetDir = v
        // `--config <file>`: settings in place of the discovered ones (`--config KEY=VALUE` is not a file).
        else if (flag === "--config" && !v.includes("=")) add(path.resolve(cwd, v))
        else if (flag === "--config" && /^\s*["']?alias\b/.test(v)) inlineAlias = true
      }
      for (; i < words.length && words[i].startsWith("-"); i++) option(words[i])
      // The configuration files cargo reads, nearest first, then `$CARGO_HOME`'s (held below and by `toolchainFiles`).
      const config = cargoConfig(cwd, env)
      let sub = words[i++]
      // `[alias] mcp = "run --manifest-path srv/Cargo.toml"` (or an array of words): `cargo mcp` is that run, and an
      // alias may name another. A built-in subcommand cannot be aliased. An alias (or a configuration file) that cannot
      // be read is taken as `cargo run` in that folder: fail closed.
      for (let n = 0; n < 8 && sub !== undefined && !CARGO_BUILTINS.has(sub); n++) {
        if (config.unreadable || inlineAlias) {
          sub = "run"
          break
        }
        const alias = config.alias(sub)
        if (alias === undefined) break
        if (alias === null || !alias.length) {
          sub = "run"
          break
        }
        words = [...words.slice(0, i - 1), ...alias, ...words.slice(i)]
        for (i--; i < words.length && words[i].startsWith("-"); i++) option(words[i])
        sub = words[i++]
      }
      // Another subcommand (`cargo mcp`: a `cargo-mcp` program on PATH) still reads the configuration below.
      const run = sub === "run" || sub === "r"
      if (run) for (; i < words.length && words[i] !== "--"; i++) if (words[i].startsWith("-")) option(words[i])
      // The configuration of the folder cargo starts in and every folder above it (`build.rustc-wrapper`,
      // `target.<triple>.runner`, `[alias]`, `build.target-dir`), and rustup's toolchain file there (a `path` toolchain
      // is a program run), present or not.
      for (const d of upTo(cwd, "/")) {
        for (const f of CARGO_CONFIG_FILES) add(path.join(d, ".cargo", f))
        for (const f of RUSTUP_TOOLCHAIN_FILES) add(path.join(d, f))
      }
      if (!run) return
      // The manifest: the one named, else the first `Cargo.toml` from the folder cargo starts in upward (a new one
      // nearer would be another package).
      let found: string | undefined
      if (manifest) add((found = path.resolve(cwd, manifest)))
      else
        for (const d of upTo(cwd, "/")) {
          add(path.join(d, "Cargo.toml"))
          if (!found && fs.existsSync(path.join(d, "Cargo.toml"))) found = path.join(d, "Cargo.toml")
        }
      const manifestPath = found ?? path.join(cwd, "Cargo.toml")
      const packageDir = path.dirname(manifestPath)
      const own = readManifest(manifestPath)
      // The workspace root is the first folder above with a `[workspace]` manifest (or `package.workspace`); a new one
      // would bring its `[patch]` and profiles: every `Cargo.toml` from the package to `/` is held, present or not.
      // A package whose own manifest declares `[workspace]` is its own root: cargo looks no further up.
      if (!own?.workspace) for (const d of upTo(path.dirname(packageDir), "/")) add(path.join(d, "Cargo.toml"))
      let root = packageDir
      if (!own?.workspace) {
        const named = typeof own?.package?.workspace === "string" ? path.resolve(packageDir, own.package.workspace) : ""
        root =
          named ||
          (upTo(path.dirname(packageDir), "/").find((d) => readManifest(path.join(d, "Cargo.toml"))?.workspace) ??
            packageDir)
        if (packageDir === path.dirname(packageDir)) root = packageDir
      }
      const rootManifest = path.join(root, "Cargo.toml")
      // Cargo reads the lock file of the workspace root only (which the manifests held above decide).
      add(rootManifest)
      add(path.join(root, "Cargo.lock"))
      const ws = readManifest(rootManifest)
      // The packages it builds: the manifest's own, or with `-p` (or a virtual manifest) the workspace members named.
      let built: string[] = []
      // The folders a member glob reads when cargo builds what the glob picks (every member, the default members): a
      // folder created there later is built at the next start (its `build.rs` run).
      let globs: string[] = []
      // A root package with `default-members` builds those, as a virtual manifest does.
      const defaultMembers = root === packageDir && Array.isArray(ws?.workspace?.["default-members"])
      if (own?.package && !packages.length && !defaultMembers) built = [packageDir]
      else {
        const memberGlobs: string[] = []
        const members = workspaceMembers(root, ws?.workspace, memberGlobs)
        const named = members.filter((m) =>
          packages.includes(String(readManifest(path.join(m, "Cargo.toml"))?.package?.name)),
        )
        const defaultGlobs: string[] = []
        const defaults = Array.isArray(ws?.workspace?.["default-members"])
          ? workspaceMembers(root, { members: ws.workspace["default-members"] }, defaultGlobs)
          : members
        // A package not found among them (a dependency's name, a manifest not readable): every member, fail closed.
        // One `-p` names and finds: a new member cannot be it (cargo refuses two packages of one name).
        if (packages.length) [built, globs] = named.length ? [named, []] : [members, memberGlobs]
        else [built, globs] = defaults === members ? [members, memberGlobs] : [defaults, defaultGlobs]
        if (!built.length) built = [packageDir]
      }
      // Held whole when inside the project and not the project folder itself (which cannot be held whole: there only
      // the members present now are held, Limits).
      for (const g of globs) if (g !== directory && SecurityPath.isInside(g, directory)) add(g + path.sep)
      // Each built package, its path dependencies (and theirs), and those the workspace root patches in.
      const seen = new Set<string>()
      const queue = [...built, ...pathDependencies(root, ws)]
      while (queue.length) {
        const dir = path.resolve(queue.shift()!)
        if (seen.has(dir)) continue
        seen.add(dir)
        // Past the cap, a package folder is held whole without reading its manifest (its own path dependencies are
        // then not followed): closed, never left unheld.
        if (seen.size > MAX_CARGO_PACKAGES) {
          if (!SecurityPath.isInside(directory, dir)) add(dir + path.sep)
          continue
        }
        const m = readManifest(path.join(dir, "Cargo.toml"))
        queue.push(...pathDependencies(dir, m))
        if (!SecurityPath.isInside(directory, dir)) {
          // Its own folder (sources, `build.rs`, `examples/`, a `target/` of its own): held whole.
          add(dir + path.sep)
          continue
        }
        // The project folder itself (`cargo run` at the root) cannot be held whole: what cargo compiles of it.
        for (const f of ["Cargo.toml", "build.rs"]) add(path.join(dir, f))
        add(path.join(dir, "src") + path.sep)
        if (example) add(path.join(dir, "examples") + path.sep)
        for (const t of targetPaths(m)) add(path.resolve(dir, t))
      }
      // The built programs and build scripts cargo runs again when they look up to date.
      const target = targetDir ?? env.CARGO_TARGET_DIR ?? env.CARGO_BUILD_TARGET_DIR
      add((target ? path.resolve(cwd, target) : (config.targetDir ?? path.join(root, "target"))) + path.sep)
    }
    for (const { words, cwd, env } of localServers(mcp, directory, false, input.env ?? process.env))
      await launch(words, cwd, 0, env)
    return { paths: [...out], modules: [...modules] }
  }

  /**
   * The `package.json` files whose own `bin` npm exec would run for a server started as `npx <name>` or `npm exec
   * <name>` (no `--package`): npm first asks the nearest folder above the server's folder that holds a `package.json`
   * or `node_modules` whether its package declares a bin of that name, and runs it (npm 11). Those files stay the
   * agent's to edit; only a `bin` of one of these names they gain is undone (`SecurityGuard.watchPackageBins`).
   * System folders are left out.
   *
   * @example
   * SecurityMcp.packageBins({ s: { command: ["npx", "-y", "my-mcp"] } }, { directory: "/home/me/repo" })
   * // [{ file: "/home/me/repo/package.json", bins: ["my-mcp"] }, { file: "/home/me/package.json", … }, …]
   */
  export function packageBins(mcp: unknown, input: { directory: string }): { file: string; bins: string[] }[] {
    if (!mcp || typeof mcp !== "object") return []
    const out = new Map<string, Set<string>>()
    for (const { words, cwd } of localServers(mcp, input.directory, true)) {
      const program = programName(words[0])
      let rest: string[] | undefined
      if (program === "npx" || program === "npm-exec") rest = words.slice(1)
      else if (program === "npm") {
        const at = words.findIndex((w, i) => i > 0 && !w.startsWith("-"))
        if (at > 0 && RUNNER_SUBCOMMANDS.npm.test(words[at])) rest = words.slice(at + 1)
      }
      if (!rest) continue
      let command: string | undefined
      let named = false
      for (let i = 0; i < rest.length; i++) {
        const w = rest[i]
        if (w === "--") {
          command = rest[i + 1]
          break
        }
        const flag = w.includes("=") ? w.slice(0, w.indexOf("=")) : w
        if (flag === "-p" || flag === "--package") named = true
        if (w.startsWith("-")) {
          if (!w.includes("=") && VALUE_OPTIONS.has(flag)) i++
          continue
        }
        command = w
        break
      }
      // With `--package`, npm exec looks for the package, not a bin of the local one.
      if (!command || named) continue
      for (const dir of upTo(cwd, "/")) {
        const file = path.join(dir, "package.json")
        if (SecurityPath.SYSTEM.some((d) => SecurityPath.isInside(file, d))) continue
        const bins = out.get(file) ?? new Set<string>()
        bins.add(command)
        out.set(file, bins)
      }
    }
    return [...out].map(([file, bins]) => ({ file, bins: [...bins] }))
  }

  /**
   * The bins of `names` a `package.json` text declares, as npm reads them (a string `bin` is named after the package,
   * without its scope); none for text that is not a package.
   *
   * @example
   * SecurityMcp.declaredBins('{"name":"@a/x","bin":"cli.js"}', ["x", "y"]) // ["x"]
   */
  export function declaredBins(text: string, names: readonly string[]): string[] {
    let pkg: unknown
    try {
      pkg = JSON.parse(text)
    } catch {
      return []
    }
    if (!pkg || typeof pkg !== "object") return []
    const { bin, name } = pkg as { bin?: unknown; name?: unknown }
    const keys =
      typeof bin === "string" && typeof name === "string"
        ? [name.split("/").pop()!]
        : bin && typeof bin === "object"
          ? Object.keys(bin)
          : []
    return names.filter((n) => keys.includes(n))
  }

  /**
   * The files a configured local MCP server runs, which OpenCode starts at every start outside the sandbox: its
   * program when given as a path, a program the project's `node_modules/.bin` provides (`npx`/`bunx` packages too),
   * every argument naming an existing file (`bun mcp/server.ts`, `uv run server.py`), and `-m` modules
   * (`python -m proj.mcp`), resolved against the server's `cwd` (OpenCode's: the project folder), and for a server
   * Bun starts, the `bunfig.toml` and `.env` files of that folder (present or not). System folders are left out.
   * Disabled servers and remote ones have none.
   *
   * @example
   * SecurityMcp.localFiles({ proj: { type: "local", command: ["bun", "mcp/server.ts"] } }, { directory: "/repo" })
   * // ["/repo/mcp/server.ts"] when it exists
   */
  export async function localFiles(mcp: unknown, input: { directory: string }): Promise<string[]> {
    if (!mcp || typeof mcp !== "object") return []
    const out = new Set<string>()
    const file = (p: string) => {
      try {
        if (fs.statSync(p).isFile() && !SecurityPath.SYSTEM.some((d) => SecurityPath.isInside(p, d))) out.add(p)
      } catch {
        // Not there: nothing to hold.
      }
    }
    for (const { words, cwd } of localServers(mcp, input.directory, false)) {
      const bins = [...new Set([cwd, path.resolve(input.directory)])].map((d) => path.join(d, "node_modules", ".bin"))
      const [program, ...args] = words
      // `sh -c "cd mcp && node server.js"`: the files the script runs or reads, as the shell guard reads commands.
      const script = SHELLS.test(path.basename(program)) ? args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a)) : -1
      if (script >= 0 && args[script + 1]) {
        const analysis = await SecurityShell.analyze(args[script + 1], { cwd })
        for (const access of analysis.accesses) {
          file(access.path)
          if (/^bunx?$/.test(access.command))
            for (const name of ["bunfig.toml", ...BUN_ENV_FILES]) out.add(path.join(path.dirname(access.path), name))
        }
      }
      if (program.includes("/")) file(path.resolve(cwd, program))
      else for (const bin of bins) file(path.join(bin, program))
      // npm (npx, npm run) takes `.npmrc` from the folder it starts in and those above it (`node-options`,
      // `script-shell` run programs), up to the project.
      for (const dir of upTo(cwd, path.resolve(input.directory))) out.add(path.join(dir, ".npmrc"))
      // Bun reads `bunfig.toml` (a `preload` runs first) and loads `.env` files from the folder it starts in (or the
      // one `--cwd` names), whether they exist yet or not; Bun may be named `bun.exe`, by path, or through `env`.
      if (words.slice(0, 3).some((w) => /^bunx?(\.exe)?$/.test(path.basename(w)))) {
        const at = args.indexOf("--cwd")
        const folders = [cwd, ...(at >= 0 && args[at + 1] ? [path.resolve(cwd, args[at + 1])] : [])]
        for (const folder of folders)
          for (const name of ["bunfig.toml", ...BUN_ENV_FILES]) out.add(path.join(folder, name))
      }
      for (const [i, arg] of args.entries()) {
        // `--require=./setup.cjs`, `--env-file=.env.x`: the value is a file the server runs or reads.
        const value = /^--?[\w-]+=(.+)$/.exec(arg)?.[1]
        if (value) file(path.resolve(cwd, value))
        if (FILE_FLAGS.has(arg) && args[i + 1]) file(path.resolve(cwd, args[i + 1]))
        if (arg.startsWith("-") || !arg) continue
        file(path.resolve(cwd, arg))
        // `npx pkg`, `bunx pkg`: the project's own copy first.
        if (/^(npx|bunx|pnpx)$/.test(path.basename(program)) && args.slice(0, i).every((a) => a.startsWith("-")))
          for (const bin of bins) file(path.join(bin, path.basename(arg.replace(/(.)@[^/]*$/, "$1"))))
        if (args[i - 1] === "-m") {
          const module = path.join(cwd, ...arg.split("."))
          file(module + ".py")
          file(path.join(module, "__main__.py"))
        }
      }
    }
    return [...out]
  }

  /**
   * The local servers of OpenCode's `mcp` configuration (enabled, with a command): each one's command words, the
   * folder it starts in, and its environment (OpenCode's own, `base`, with the entry's `environment` over it). With
   * `program`, the words start at the program `env` starts (`env FOO=1 npx pkg` → npx).
   */
  function localServers(
    mcp: unknown,
    directory: string,
    program: boolean,
    base: Record<string, string | undefined> = {},
  ): { words: string[]; cwd: string; env: Record<string, string | undefined> }[] {
    if (!mcp || typeof mcp !== "object") return []
    const out: { words: string[]; cwd: string; env: Record<string, string | undefined> }[] = []
    for (const entry of Object.values(mcp as Record<string, unknown>)) {
      if (!entry || typeof entry !== "object") continue
      const e = entry as { type?: unknown; command?: unknown; cwd?: unknown; enabled?: unknown; environment?: unknown }
      if (e.type !== undefined && e.type !== "local") continue
      if (e.enabled === false || !Array.isArray(e.command)) continue
      let words = e.command.filter((w): w is string => typeof w === "string")
      let cwd = typeof e.cwd === "string" ? path.resolve(directory, e.cwd) : path.resolve(directory)
      let env: Record<string, string | undefined> = { ...base }
      if (e.environment && typeof e.environment === "object")
        for (const [k, v] of Object.entries(e.environment)) if (typeof v === "string") env[k] = v
      while (program && words.length && (programName(words[0]) === "env" || /^\w+=/.test(words[0]))) {
        const inner = programName(words[0]) === "env" ? unwrapEnv(words, cwd, env) : undefined
        if (inner) ({ words, cwd, env } = inner)
        else words = words.slice(1)
      }
      if (!words.length) continue
      out.push({ words, cwd, env })
    }
    return out
  }
}
