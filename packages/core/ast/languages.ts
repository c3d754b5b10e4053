import { registerDynamicLanguage, type DynamicLangRegistrations } from "@ast-grep/napi"
import fs from "fs"
import { createRequire } from "module"
import path from "path"
import z from "zod"
import { NamedError, errorMessage } from "../util/error"
import type { Logger } from "../util/log"
import { Grammar } from "./grammar"

const require = createRequire(import.meta.url)

/**
 * The 25 languages of the AST tools and where each parser comes from: the five built into `@ast-grep/napi`, the
 * prebuilt `@ast-grep/lang-*` packages, and three grammars compiled from npm sources (see grammar.ts). Dynamic
 * languages are registered with napi once per process (napi ignores later registrations), on the first request
 * for any of them, so a search in TypeScript never pays for them.
 *
 * @example
 * const id = await AstLanguage.load("python") // "python", usable with napi's parse/findInFiles
 * AstLanguage.extensions("typescript") // ["ts", "mts", "cts"]
 */
export namespace AstLanguage {
  export const NAMES = [
    "bash",
    "c",
    "cpp",
    "csharp",
    "css",
    "elixir",
    "go",
    "haskell",
    "html",
    "java",
    "javascript",
    "json",
    "kotlin",
    "lua",
    "nix",
    "php",
    "python",
    "ruby",
    "rust",
    "scala",
    "solidity",
    "swift",
    "typescript",
    "tsx",
    "yaml",
  ] as const
  export type Name = (typeof NAMES)[number]
  export const Schema = z.enum(NAMES)

  type Spec =
    | { kind: "builtin"; napi: string; extensions: string[] }
    | { kind: "package"; pkg: string; extensions: string[]; expando?: string }
    | { kind: "grammar"; source: Grammar.Source; extensions: string[]; expando?: string }

  /**
   * Extensions are exactly the ast-grep CLI 0.51.1's, compared letter case included (measured on the CLI itself:
   * `languages.test.ts › each language takes exactly the CLI's extensions`): bash takes `.env`, `.cgi`, `.tool`…
   * files, python Bazel's `.bzl` and `BUILD.bazel`, css `.scss`. Expando characters (what `$` becomes before a pattern is parsed, for languages where `$` cannot
   * start an identifier) follow the CLI: PHP and nix differ from their packages' defaults.
   */
  const SPECS: Record<Name, Spec> = {
    bash: {
      kind: "package",
      pkg: "@ast-grep/lang-bash",
      extensions: ["sh", "bash", "zsh", "ksh", "bats", "cgi", "command", "env", "fcgi", "tmux", "tool"],
    },
    c: { kind: "package", pkg: "@ast-grep/lang-c", extensions: ["c", "h"] },
    cpp: {
      kind: "package",
      pkg: "@ast-grep/lang-cpp",
      extensions: ["cc", "cpp", "cxx", "c++", "hh", "hpp", "cu", "ino"],
    },
    csharp: { kind: "package", pkg: "@ast-grep/lang-csharp", extensions: ["cs"] },
    css: { kind: "builtin", napi: "Css", extensions: ["css", "scss"] },
    elixir: { kind: "package", pkg: "@ast-grep/lang-elixir", extensions: ["ex", "exs"] },
    go: { kind: "package", pkg: "@ast-grep/lang-go", extensions: ["go"] },
    haskell: { kind: "package", pkg: "@ast-grep/lang-haskell", extensions: ["hs"] },
    html: { kind: "builtin", napi: "Html", extensions: ["html", "htm", "xhtml"] },
    java: { kind: "package", pkg: "@ast-grep/lang-java", extensions: ["java"] },
    javascript: { kind: "builtin", napi: "JavaScript", extensions: ["js", "mjs", "cjs", "jsx"] },
    json: { kind: "package", pkg: "@ast-grep/lang-json", extensions: ["json"] },
    kotlin: { kind: "package", pkg: "@ast-grep/lang-kotlin", extensions: ["kt", "kts", "ktm"] },
    lua: { kind: "package", pkg: "@ast-grep/lang-lua", extensions: ["lua"] },
    nix: { kind: "grammar", source: Grammar.SOURCES.nix, extensions: ["nix"], expando: "_" },
    php: { kind: "grammar", source: Grammar.SOURCES.php, extensions: ["php"], expando: "µ" },
    python: { kind: "package", pkg: "@ast-grep/lang-python", extensions: ["py", "py3", "pyi", "bzl", "bazel"] },
    ruby: { kind: "package", pkg: "@ast-grep/lang-ruby", extensions: ["rb", "rbw", "gemspec"] },
    rust: { kind: "package", pkg: "@ast-grep/lang-rust", extensions: ["rs"] },
    scala: { kind: "package", pkg: "@ast-grep/lang-scala", extensions: ["scala", "sc", "sbt"] },
    solidity: { kind: "grammar", source: Grammar.SOURCES.solidity, extensions: ["sol"] },
    swift: { kind: "package", pkg: "@ast-grep/lang-swift", extensions: ["swift"] },
    typescript: { kind: "builtin", napi: "TypeScript", extensions: ["ts", "mts", "cts"] },
    tsx: { kind: "builtin", napi: "Tsx", extensions: ["tsx"] },
    yaml: { kind: "package", pkg: "@ast-grep/lang-yaml", extensions: ["yaml", "yml"] },
  }

  export const Unavailable = NamedError.create(
    "LanguageUnavailable",
    z.object({ lang: z.string(), reason: z.string() }),
    (d) => `language '${d.lang}' is unavailable here: ${d.reason}`,
  )

  export const Unknown = NamedError.create(
    "UnknownLanguage",
    z.object({ lang: z.string() }),
    (d) => `unknown language '${d.lang}'; supported: ${NAMES.join(", ")}`,
  )

  /**
   * True for one of the 25 language names (exact, lower case).
   *
   * @example
   * AstLanguage.isName("rust") // true
   * AstLanguage.isName("Rust") // false
   */
  export function isName(value: string): value is Name {
    return (NAMES as readonly string[]).includes(value)
  }

  /**
   * File extensions (without the dot) searched for `lang` when no glob says otherwise.
   *
   * @example
   * AstLanguage.extensions("python") // ["py", "py3", "pyi", "bzl", "bazel"]
   */
  export function extensions(lang: Name): string[] {
    return SPECS[lang].extensions
  }

  /**
   * The character a `$` becomes before a pattern of `lang` is parsed ("$" when none).
   *
   * @example
   * AstLanguage.expando("php") // "µ"
   * AstLanguage.expando("typescript") // "$"
   */
  export function expando(lang: Name): string {
    const spec = SPECS[lang]
    if (spec.kind === "builtin") return "$"
    if (spec.expando) return spec.expando
    if (provided[lang]) return provided[lang].expando ?? "$"
    if (spec.kind === "package") return (require(spec.pkg) as { expandoChar?: string }).expandoChar ?? "$"
    return "$"
  }

  /**
   * The language whose extensions include that of `file`, if any (letter case counts, as in the CLI: `X.PY` is none).
   *
   * @example
   * AstLanguage.fromPath("src/main.rs") // "rust"
   */
  export function fromPath(file: string): Name | undefined {
    const ext = path.extname(file).slice(1)
    if (!ext) return undefined
    return NAMES.find((name) => SPECS[name].extensions.includes(ext))
  }

  /** A parser library built for this platform: the file, its exported language symbol, its expando character. */
  export type Prebuilt = { library: string; symbol: string; expando?: string }

  let provided: Partial<Record<Name, Prebuilt>> = {}

  /**
   * Parser libraries the host ships, used instead of the `@ast-grep/lang-*` packages and the compiled grammars (a
   * compiled OpenCode binary cannot resolve packages; the fork's build embeds every library, see `prebuilt`). A
   * library inside a compiled binary is copied out once (see `Grammar.materialize`). Call before the first `load`.
   *
   * @example
   * AstLanguage.provide({ python: { library: "/opt/grammars/python.so", symbol: "tree_sitter_python", expando: "µ" } })
   */
  export function provide(libraries: Partial<Record<Name, Prebuilt>>) {
    provided = { ...provided, ...libraries }
  }

  /** Names of the languages napi does not build in (those `provide` and `prebuilt` are about). */
  export const DYNAMIC = NAMES.filter((name) => SPECS[name].kind !== "builtin")

  /**
   * The library of every dynamic language for this platform, resolved from the packages or compiled here: what a
   * build ships. Failures are returned by name, not thrown.
   *
   * @example
   * const { libraries, failures } = await AstLanguage.prebuilt() // libraries.python.library: ".../parser.so"
   */
  export async function prebuilt(): Promise<{
    libraries: Partial<Record<Name, Prebuilt>>
    failures: Map<Name, string>
  }> {
    const libraries: Partial<Record<Name, Prebuilt>> = {}
    const failures = new Map<Name, string>()
    await Promise.all(
      DYNAMIC.map(async (name) => {
        try {
          libraries[name] = await resolve(name)
        } catch (error) {
          failures.set(name, errorMessage(error))
        }
      }),
    )
    return { libraries, failures }
  }

  async function resolve(name: Name): Promise<Prebuilt> {
    const spec = SPECS[name]
    if (provided[name]) return { ...provided[name], library: await Grammar.materialize(provided[name].library) }
    if (spec.kind === "package") {
      const mod = require(spec.pkg) as { libraryPath: string; languageSymbol: string; expandoChar?: string }
      return {
        library: packaged(spec.pkg, mod.libraryPath),
        symbol: mod.languageSymbol,
        expando: spec.expando ?? mod.expandoChar,
      }
    }
    if (spec.kind === "grammar")
      return { library: await Grammar.build(spec.source), symbol: spec.source.symbol, expando: spec.expando }
    throw new Error(`${name} is built into napi`)
  }

  /**
   * A package's library. Older `@ast-grep/lang-*` releases point at `parser.so`, which their install script copies
   * from `prebuilds/`; installers that skip install scripts (Bun, for packages it does not trust) leave it there.
   */
  function packaged(pkg: string, libraryPath: string): string {
    if (fs.existsSync(libraryPath)) return libraryPath
    const os = ({ darwin: "macOS", linux: "Linux", win32: "Windows" } as Record<string, string>)[process.platform]
    const arch = ({ x64: "X64", arm64: "ARM64" } as Record<string, string>)[process.arch]
    const dir = path.dirname(require.resolve(`${pkg}/package.json`))
    const prebuilt = path.join(dir, "prebuilds", `prebuild-${os}-${arch}`, "parser.so")
    return fs.existsSync(prebuilt) ? prebuilt : libraryPath
  }

  let registration: Promise<Map<Name, string>> | undefined

  /**
   * The napi language id for `lang`, registering the dynamic languages on first use. Rejects with `Unavailable`
   * (naming the cause: a missing package, no C compiler) when that language cannot be loaded here; the other
   * languages stay usable.
   *
   * @example
   * await AstLanguage.load("go") // "go"
   * await AstLanguage.load("typescript") // "TypeScript" (built into napi)
   */
  export async function load(lang: string, log?: Logger): Promise<string> {
    if (!isName(lang)) throw new Unknown({ lang })
    const spec = SPECS[lang]
    if (spec.kind === "builtin") return spec.napi
    registration ??= register(log)
    const failures = await registration
    const failure = failures.get(lang)
    if (failure) throw new Unavailable({ lang, reason: failure })
    return lang
  }

  /** Registers every dynamic language in one call (napi honours only the first); returns the failures by name. */
  async function register(log?: Logger): Promise<Map<Name, string>> {
    const failures = new Map<Name, string>()
    const entries: DynamicLangRegistrations = {}
    await Promise.all(
      NAMES.map(async (name) => {
        const spec = SPECS[name]
        if (spec.kind === "builtin") return
        try {
          const lib = await resolve(name)
          entries[name] = {
            libraryPath: lib.library,
            extensions: spec.extensions,
            languageSymbol: lib.symbol,
            ...(lib.expando ? { expandoChar: lib.expando } : {}),
          }
        } catch (error) {
          failures.set(name, errorMessage(error))
          log?.warn(`ast-grep language ${name} unavailable`, { reason: errorMessage(error) })
        }
      }),
    )
    try {
      registerDynamicLanguage(entries)
    } catch (error) {
      for (const name of Object.keys(entries) as Name[]) failures.set(name, errorMessage(error))
    }
    return failures
  }
}
