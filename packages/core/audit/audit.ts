import fs from "fs/promises"
import path from "path"
import { errorMessage } from "../util/error"
import { PluginAnalysis } from "./analyze"

/**
 * Audits every JavaScript/TypeScript file of a plugin directory (see analyze.ts). Declaration files (`.d.ts`),
 * `.git` and — unless `includeDependencies` — `node_modules` are skipped; symbolic links are not followed; files over
 * `maxFileBytes` are skipped and listed. A file that cannot be read or parsed is listed, never fatal.
 *
 * @example
 * const report = await PluginAudit.run("/tmp/pkg")
 * report.counts.critical // 0
 */
export namespace PluginAudit {
  export const MAX_FILE_BYTES = 20 * 1024 * 1024

  export type Report = {
    target: string
    dir: string
    filesScanned: number
    findings: PluginAnalysis.Finding[]
    counts: Record<PluginAnalysis.Severity, number>
    skipped: { file: string; reason: string }[]
  }

  /**
   * Audits `dir`; `label` names the target in the report.
   *
   * @example
   * const report = await PluginAudit.run("/tmp/plugin", { includeDependencies: true })
   */
  export async function run(
    dir: string,
    options: { label?: string; includeDependencies?: boolean; maxFileBytes?: number } = {},
  ): Promise<Report> {
    const files: string[] = []
    const skipped: Report["skipped"] = []
    const maxBytes = options.maxFileBytes ?? MAX_FILE_BYTES
    const walk = async (current: string) => {
      const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => [])
      for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const full = path.join(current, entry.name)
        if (entry.isDirectory()) {
          if (entry.name === ".git" || (entry.name === "node_modules" && !options.includeDependencies)) continue
          await walk(full)
        } else if (entry.isFile() && PluginAnalysis.languageOf(entry.name)) files.push(full)
      }
    }
    await walk(dir)

    const findings: PluginAnalysis.Finding[] = []
    for (const file of files) {
      const rel = path.relative(dir, file).split(path.sep).join("/")
      try {
        const stat = await fs.stat(file)
        if (stat.size > maxBytes) {
          skipped.push({ file: rel, reason: `over ${Math.round(maxBytes / 1024 / 1024)} MB` })
          continue
        }
        findings.push(...PluginAnalysis.analyze(rel, await fs.readFile(file, "utf8")))
      } catch (error) {
        skipped.push({ file: rel, reason: errorMessage(error) })
      }
    }
    const counts = { critical: 0, high: 0, medium: 0, low: 0 }
    for (const f of findings) counts[f.severity]++
    const order = (s: PluginAnalysis.Severity) => PluginAnalysis.SEVERITIES.indexOf(s)
    findings.sort((a, b) => order(a.severity) - order(b.severity) || a.file.localeCompare(b.file) || a.line - b.line)
    return { target: options.label ?? dir, dir, filesScanned: files.length - skipped.length, findings, counts, skipped }
  }
}
