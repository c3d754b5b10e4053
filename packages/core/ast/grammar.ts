import { execFile } from "child_process"
import { createHash } from "crypto"
import { createRequire } from "module"
import fs from "fs"
import os from "os"
import path from "path"
import { promisify } from "util"
import z from "zod"
import { NamedError } from "../util/error"

const run = promisify(execFile)
const require = createRequire(import.meta.url)

/**
 * Tree-sitter grammars that no `@ast-grep/lang-*` package ships prebuilt (nix, solidity, php without the HTML
 * wrapper), compiled once from the C sources their npm packages publish into a shared library that
 * `registerDynamicLanguage` loads. The build needs a C compiler (`$CC`, else `cc`); the result is cached under
 * `packages/core/ast/.cache/grammars/` (or the user cache directory when that is read-only), keyed by package
 * version, platform and architecture, and written atomically so concurrent processes never load a half-written file.
 *
 * @example
 * const lib = await Grammar.build(Grammar.SOURCES.nix)
 * // "/…/ast/.cache/grammars/tree-sitter-nix@0.0.2-linux-x64.so"
 */
export namespace Grammar {
  export type Source = {
    /** npm package publishing the generated parser. */
    pkg: string
    /** Directory of `parser.c` (and `scanner.c`) inside the package. */
    dir: string
    /** Exported symbol returning the TSLanguage. */
    symbol: string
  }

  export const SOURCES = {
    nix: { pkg: "tree-sitter-nix", dir: "src", symbol: "tree_sitter_nix" },
    solidity: { pkg: "tree-sitter-solidity", dir: "src", symbol: "tree_sitter_solidity" },
    php: { pkg: "tree-sitter-php", dir: "php_only/src", symbol: "tree_sitter_php_only" },
  } as const satisfies Record<string, Source>

  export const BuildFailed = NamedError.create(
    "GrammarBuildFailed",
    z.object({ pkg: z.string(), reason: z.string() }),
    (d) => `could not build the ${d.pkg} grammar: ${d.reason}`,
  )

  /**
   * Where compiled grammars go: next to this module when writable, else the user's cache directory.
   *
   * @example
   * Grammar.cacheDirs({ XDG_CACHE_HOME: "/c" }) // [".../ast/.cache/grammars", "/c/opencode-builtins/grammars"]
   */
  export function cacheDirs(env: Record<string, string | undefined> = process.env): string[] {
    const local = path.join(import.meta.dir, ".cache", "grammars")
    const user = path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "opencode-builtins", "grammars")
    return env.OPENCODE_BUILTINS_GRAMMAR_DIR ? [env.OPENCODE_BUILTINS_GRAMMAR_DIR] : [local, user]
  }

  const pending = new Map<string, Promise<string>>()

  /** True for a path inside a compiled Bun binary (its virtual file system), which `dlopen` cannot open. */
  export function embedded(file: string): boolean {
    return file.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(file)
  }

  /**
   * A real file for a library that may live inside a compiled binary: an embedded one is copied to
   * `<cache>/embedded/<content hash>-<name>` (written atomically; an existing copy is used only when its content
   * still has that hash); any other path is returned as it is.
   *
   * @example
   * await Grammar.materialize("/$bunfs/root/python-a1b2.so") // "~/.cache/opencode-builtins/grammars/embedded/3f…-python-a1b2.so"
   */
  export async function materialize(file: string, env: Record<string, string | undefined> = process.env) {
    if (!embedded(file)) return file
    const bytes = new Uint8Array(await Bun.file(file).arrayBuffer())
    const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 32)
    const name = `${hash}-${path.basename(file)}`
    const digest = (f: string) => createHash("sha256").update(fs.readFileSync(f)).digest("hex").slice(0, 32)
    let lastError = ""
    for (const dir of [...cacheDirs(env), path.join(os.tmpdir(), `opencode-builtins-${process.getuid?.() ?? 0}`)]) {
      if (embedded(dir)) continue
      const target = path.join(dir, "embedded", name)
      try {
        if (fs.existsSync(target) && digest(target) === hash) return target
        fs.mkdirSync(path.dirname(target), { recursive: true })
        const temp = `${target}.${process.pid}.${Date.now()}.tmp`
        fs.writeFileSync(temp, bytes, { mode: 0o755 })
        fs.renameSync(temp, target)
        return target
      } catch (error) {
        lastError = `cannot write ${target}: ${(error as Error).message}`
      }
    }
    throw new BuildFailed({ pkg: path.basename(file), reason: lastError || "no writable cache directory" })
  }

  /**
   * The shared library for `source`, compiling it on first use. Rejects with `BuildFailed` (never half-built).
   *
   * @example
   * const lib = await Grammar.build(Grammar.SOURCES.php) // ".../tree-sitter-php@0.24.2-tree_sitter_php_only-linux-x64.so"
   */
  export function build(source: Source, env: Record<string, string | undefined> = process.env): Promise<string> {
    const key = [source.pkg, source.dir, env.CC ?? "", ...cacheDirs(env)].join("|")
    let promise = pending.get(key)
    if (!promise) {
      promise = compile(source, env)
      pending.set(key, promise)
      // A failure is not cached: a compiler installed later makes the next call succeed.
      promise.catch(() => pending.delete(key))
    }
    return promise
  }

  async function compile(source: Source, env: Record<string, string | undefined>): Promise<string> {
    let pkgDir: string
    let version: string
    try {
      const manifest = require.resolve(`${source.pkg}/package.json`)
      pkgDir = path.dirname(manifest)
      version = JSON.parse(fs.readFileSync(manifest, "utf8")).version
    } catch {
      throw new BuildFailed({ pkg: source.pkg, reason: "the package is not installed (run npm install)" })
    }
    const src = path.join(pkgDir, source.dir)
    const inputs = ["parser.c", "scanner.c"].map((f) => path.join(src, f)).filter((f) => fs.existsSync(f))
    if (!inputs.some((f) => f.endsWith("parser.c"))) {
      throw new BuildFailed({ pkg: source.pkg, reason: `${path.join(src, "parser.c")} is missing` })
    }
    const name = `${source.pkg}@${version}-${source.symbol}-${process.platform}-${process.arch}.so`
    for (const dir of cacheDirs(env)) {
      const file = path.join(dir, name)
      if (fs.existsSync(file)) return file
    }
    const compiler = env.CC || "cc"
    let lastError = ""
    for (const dir of cacheDirs(env)) {
      try {
        fs.mkdirSync(dir, { recursive: true })
        fs.accessSync(dir, fs.constants.W_OK)
      } catch (error) {
        lastError = `cannot write ${dir}: ${(error as Error).message}`
        continue
      }
      const file = path.join(dir, name)
      const temp = `${file}.${process.pid}.${Date.now()}.tmp`
      try {
        await run(compiler, ["-shared", "-fPIC", "-O2", "-I", src, ...inputs, "-o", temp], { timeout: 120_000 })
        fs.renameSync(temp, file)
        return file
      } catch (error) {
        fs.rmSync(temp, { force: true })
        const e = error as NodeJS.ErrnoException & { stderr?: string }
        if (e.code === "ENOENT") {
          throw new BuildFailed({
            pkg: source.pkg,
            reason: `no C compiler found ('${compiler}'); install one (e.g. gcc) or set CC, then retry`,
          })
        }
        throw new BuildFailed({
          pkg: source.pkg,
          reason: (e.stderr || e.message).trim().split("\n").slice(-3).join(" "),
        })
      }
    }
    throw new BuildFailed({ pkg: source.pkg, reason: lastError || "no writable cache directory" })
  }
}
