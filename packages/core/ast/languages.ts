import { registerDynamicLanguage, type DynamicLangRegistrations } from "@ast-grep/napi"
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
   * Extensions follow the ast-grep CLI's defaults, trimmed of ripgrep's catch-alls (`.env` and `.cgi` are not
   * parsed as bash). Expando characters (what `$` becomes before a pattern is parsed, for languages where `$` cannot
   * start an identifier) follow the CLI: PHP and nix differ from their packages' defaults.
   */
  const SPECS: Record<Name, Spec> = {
    bash: { kind: "package", pkg: "@ast-grep/lang-bash", extensions: ["sh", "bash", "zsh", "ksh", "bats"] },
    c: { kind: "package", pkg: "@ast-grep/lang-c", extensions: ["c", "h"] },
    cpp: {
      kind: "package",
      pkg: "@ast-grep/lang-cpp",
      extensions: ["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "cu", "ino"],
    },
    csharp: { kind: "package", pkg: "@ast-grep/lang-csharp", extensions: ["cs"] },
    css: { kind: "builtin", napi: "Css", extensions: ["css"] },
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
    python: { kind: "package", pkg: "@ast-grep/lang-python", extensions: ["py", "pyi"] },
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
   * AstLanguage.extensions("python") // ["py", "pyi"]
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
    if (spec.kind === "package") return (require(spec.pkg) as { expandoChar?: string }).expandoChar ?? "$"
    return "$"
  }

  /**
   * The language whose extensions include that of `file`, if any.
   *
   * @example
   * AstLanguage.fromPath("src/main.rs") // "rust"
   */
  export function fromPath(file: string): Name | undefined {
    const ext = path.extname(file).slice(1).toLowerCase()
    if (!ext) return undefined
    return NAMES.find((name) => SPECS[name].extensions.includes(ext))
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
          if (spec.kind === "package") {
            const mod = require(spec.pkg) as { libraryPath: string; languageSymbol: string; expandoChar?: string }
            entries[name] = {
              libraryPath: mod.libraryPath,
              extensions: spec.extensions,
              languageSymbol: mod.languageSymbol,
              expandoChar: spec.expando ?? mod.expandoChar,
            }
          } else {
            entries[name] = {
              libraryPath: await Grammar.build(spec.source),
              extensions: spec.extensions,
              languageSymbol: spec.source.symbol,
              ...(spec.expando ? { expandoChar: spec.expando } : {}),
            }
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
