import fs from "fs/promises"
import path from "path"
import type picomatchType from "picomatch"

// Loaded when first needed, as in `ast/files.ts` (Bun's own require, which `bun build` follows).
const picomatch = (glob: string, options: picomatchType.PicomatchOptions) =>
  (require("picomatch") as typeof picomatchType)(glob, options)

/**
 * Why a server's configuration leaves a file out of the files it works on, when that is known. Only what a
 * configuration really says counts: pyright's `include` and `exclude` (`pyrightconfig.json`, or when there is none
 * the `[tool.pyright]` table of `pyproject.toml`, at the server's root). A project without such a configuration, or
 * one that includes the file, gives no reason: the server left the file out for a reason of its own.
 *
 * @example
 * await LspScope.excludedBy("pyright", "/repo", "/repo/tests/test_a.py")
 * // 'outside the `include` of pyproject.toml [tool.pyright]' (with include = ["src"]), or undefined
 */
export namespace LspScope {
  type Config = { source: string; dir: string; include?: string[]; exclude?: string[] }

  export async function excludedBy(server: string, root: string, file: string): Promise<string | undefined> {
    if (server !== "pyright") return undefined
    const config = await pyright(root)
    if (!config) return undefined
    const rel = path.relative(config.dir, file).split(path.sep).join("/")
    if (rel.startsWith("../") || path.isAbsolute(rel)) return `outside the folder of ${config.source}`
    if (config.include && !config.include.some((entry) => matches(entry, rel)))
      return `outside the \`include\` of ${config.source}`
    const excluded = config.exclude?.find((entry) => matches(entry, rel))
    if (excluded) return `excluded by ${JSON.stringify(excluded)} in the \`exclude\` of ${config.source}`
    return undefined
  }

  /** pyright's configuration at `root`: `pyrightconfig.json` first (pyright then ignores pyproject.toml). */
  async function pyright(root: string): Promise<Config | undefined> {
    const json = await fs.readFile(path.join(root, "pyrightconfig.json"), "utf8").catch(() => undefined)
    if (json !== undefined) {
      const { parse } = await import("jsonc-parser")
      const data = parse(json)
      if (!data || typeof data !== "object") return undefined
      return { source: "pyrightconfig.json", dir: root, include: strings(data.include), exclude: strings(data.exclude) }
    }
    const toml = await fs.readFile(path.join(root, "pyproject.toml"), "utf8").catch(() => undefined)
    if (toml === undefined) return undefined
    const { parse } = await import("smol-toml")
    let data: any
    try {
      data = parse(toml.replace(/\r\n?/g, "\n"))
    } catch {
      return undefined
    }
    const table = data?.tool?.pyright
    if (!table || typeof table !== "object") return undefined
    return {
      source: "pyproject.toml [tool.pyright]",
      dir: root,
      include: strings(table.include),
      exclude: strings(table.exclude),
    }
  }

  function strings(value: unknown): string[] | undefined {
    if (!Array.isArray(value)) return undefined
    const list = value.filter((v): v is string => typeof v === "string")
    return list.length ? list : undefined
  }

  /**
   * Whether the configuration entry `entry` (a path relative to the configuration's folder, with pyright's wildcards
   * `**`, `*`, `?`) names `rel` or a folder holding it.
   */
  function matches(entry: string, rel: string): boolean {
    const pattern = entry
      .replace(/\\/g, "/")
      .replace(/^\.\/+/, "")
      .replace(/\/+$/, "")
    if (pattern === "" || pattern === ".") return true
    const match = picomatch(pattern, { dot: true })
    const parts = rel.split("/")
    for (let n = 1; n <= parts.length; n++) if (match(parts.slice(0, n).join("/"))) return true
    return false
  }
}
