import { Exit, parseCommand, type CliIO } from "../util/cli"
import { errorMessage } from "../util/error"
import { PluginAnalysis } from "./analyze"
import { PluginAudit } from "./audit"
import { AuditTarget } from "./resolve"

const USAGE = `usage:
  opencode-builtins audit <npm-package | directory> [--json] [--include-dependencies]
      Static analysis of a plugin's JavaScript/TypeScript by syntax tree: code injection (eval, Function,
      constructor.constructor, computed spellings), dynamic import()/require(), sensitive path literals, direct
      fs / Bun / child_process / network use, environment reads — followed through aliases, constants and
      imports between modules. A package name (name, @scope/name, name@version) is fetched with
      npm pack (your npm configuration: ~/.npmrc, npm's global file, npm_config_*; never a project's
      .npmrc) into a private folder of the built-ins' cache and never installed or run; the registry
      it came from is printed.
      --json                  print the report as JSON
      --include-dependencies  also audit the packages the plugin loads (its dependencies and what its code
                              imports, found as Node finds them: from the plugin's folder upward) — of an
                              installed plugin folder; a package fetched by name has none installed
Severity: critical = code injection; high = sensitive paths, dynamic imports, vm; medium = direct API use;
low = informational. Exit: 0 no critical finding, 1 critical findings, 2 bad usage or target not found.
`

/** What the command takes (`parseCommand`); the help text lists the same (util/cli.test.ts). */
export const SPEC = {
  options: { json: { type: "boolean" }, "include-dependencies": { type: "boolean" } },
  positionals: { min: 1, max: 1, what: "npm package name or plugin directory" },
} as const

/**
 * `opencode-builtins audit …` (and, in the fork, `opencode plugin audit …`).
 *
 * @example
 * await run(["opencode-pty", "--json"], io) // prints the PluginAudit.Report, exit 0 or 1
 */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const args = parseCommand("audit", argv, io, SPEC, USAGE)
  if (typeof args === "number") return args
  if (!args.positionals[0].trim()) {
    io.err(`audit: takes exactly one npm package name or plugin directory\n\n${USAGE}`)
    return Exit.usage
  }
  let report: PluginAudit.Report
  let packed: AuditTarget.Target["packed"]
  try {
    await using target = await AuditTarget.resolve(args.positionals[0], { cwd: io.cwd, env: io.env })
    packed = target.packed
    report = await PluginAudit.run(target.dir, {
      label: target.label,
      includeDependencies: args.values["include-dependencies"],
      fromRegistry: target.packed !== undefined,
    })
    if (packed) report.fetched = { registry: packed.registry, tarball: packed.tarball }
  } catch (error) {
    io.err(`audit: ${errorMessage(error)}\n`)
    return Exit.usage
  }
  if (args.values.json) io.out(JSON.stringify(report, null, 2) + "\n")
  else io.out(format(report, { packed }))
  return report.counts.critical > 0 ? Exit.findings : Exit.ok
}

const RISK = {
  critical: "CRITICAL: code injection patterns found",
  high: "HIGH: sensitive paths, dynamically loaded or native code, or install scripts",
  medium: "MEDIUM: direct file system, process or network access",
  low: "LOW: informational findings only",
} as const

/**
 * The human-readable report: summary, then findings by severity (medium and low grouped by rule). With `packed` (a
 * package fetched from npm, only unpacked), the way to get its dependencies audited is said: the flag finds none.
 *
 * @example
 * io.out(format(report)) // "Plugin audit: x@1.0.0 (3 files scanned)\ncritical 0 · high 1 …"
 */
export function format(report: PluginAudit.Report, options: { packed?: AuditTarget.Target["packed"] } = {}): string {
  const { packed } = options
  // npm's `--ignore-scripts` covers the whole tree: no lifecycle script of any package runs.
  const howToAuditDependencies = packed
    ? "A package fetched from npm is only unpacked, never installed, so its dependencies are not there " +
      "(--include-dependencies finds none). To audit them, install it into a scratch folder without running any " +
      `script: npm install --ignore-scripts --prefix <folder> ${packed.name}@${packed.version}, then audit ` +
      `<folder>/node_modules/${packed.name} --include-dependencies`
    : undefined
  // Findings in files no entry point reaches are counted and listed apart, and left out of the risk line.
  const outside = report.notLoaded?.counts
  const counts = Object.fromEntries(
    PluginAnalysis.SEVERITIES.map((s) => [s, report.counts[s] - (outside?.[s] ?? 0)]),
  ) as PluginAudit.Report["counts"]
  const worst = (["critical", "high", "medium", "low"] as const).find((s) => counts[s] > 0)
  const summary = (c: PluginAudit.Report["counts"]) =>
    `critical ${c.critical} · high ${c.high} · medium ${c.medium} · low ${c.low}`
  const lines = [
    `Plugin audit: ${report.target} (${report.filesScanned} file${report.filesScanned === 1 ? "" : "s"} scanned)`,
    summary(counts),
    `Risk: ${worst ? RISK[worst] : "none found"}`,
  ]
  // npm's configuration decides where a name is fetched from: a registry the user does not install from shows here.
  if (packed?.registry)
    lines.push(
      `Fetched from ${packed.registry}${packed.tarball ? ` (tarball ${packed.tarball})` : ""}: ` +
        "check it is the registry you install from",
    )
  if (report.notLoaded && outside)
    lines.push(
      `Not loaded: ${summary(outside)} in ${report.notLoaded.files} file(s) that no entry point ` +
        `(${report.notLoaded.entries.slice(0, 4).join(", ")}${report.notLoaded.entries.length > 4 ? ", …" : ""}) ` +
        "imports (shipped tests, sources beside their build): listed under NOT LOADED, not in the risk" +
        (outside.critical ? "; the exit code still counts their critical findings" : ""),
    )
  if (report.dependencies) {
    const files = report.dependencies.reduce((n, d) => n + d.files, 0)
    lines.push(`Dependencies: ${report.dependencies.length} package(s), ${files} file(s) audited`)
    const native = report.dependencies.filter((d) => d.native > 0)
    if (native.length)
      lines.push(
        `  with native code (not analysed): ${native.map((d) => `${d.name} (${d.native} file(s))`).join(", ")}`,
      )
    const missing = (report.missing ?? []).filter((m) => !m.optional)
    if (missing.length) lines.push(`  not installed: ${missing.map((m) => `${m.name} (for ${m.from})`).join(", ")}`)
    if (missing.length && howToAuditDependencies) lines.push(`  ${howToAuditDependencies}`)
  }
  if (report.native?.length)
    lines.push(
      `Native code: ${report.native.length} compiled file(s) (.node addons, shared libraries, executables) run ` +
        "outside JavaScript and were not analysed (native-code findings)",
    )
  const unaudited = report.unaudited ?? []
  if (unaudited.length) {
    const names = unaudited.slice(0, 8).join(", ") + (unaudited.length > 8 ? ", …" : "")
    lines.push(
      `Not audited: ${unaudited.length} package(s) the code imports (${names}); what they do is not in these findings. ` +
        (howToAuditDependencies ?? "--include-dependencies audits them too"),
    )
  }
  const section = (findings: PluginAnalysis.Finding[], title: (severity: string) => string) => {
    for (const severity of ["critical", "high", "medium", "low"] as const) {
      const list = findings.filter((f) => f.severity === severity)
      if (!list.length) continue
      lines.push("", `${title(severity.toUpperCase())} (${list.length})`)
      const detailed = severity === "critical" || severity === "high"
      const byRule = new Map<string, PluginAnalysis.Finding[]>()
      for (const f of list) byRule.set(f.rule, [...(byRule.get(f.rule) ?? []), f])
      for (const [rule, group] of byRule) {
        const shown = detailed ? group.slice(0, 20) : group.slice(0, 5)
        lines.push(`  ${rule} ×${group.length}`)
        for (const f of shown) {
          lines.push(`    ${f.file}:${f.line}:${f.column}  ${f.message}${f.notLoaded ? ` (${f.notLoaded})` : ""}`)
          if (detailed && f.snippet) lines.push(`      > ${f.snippet}`)
        }
        if (group.length > shown.length) lines.push(`    … ${group.length - shown.length} more (--json lists all)`)
      }
    }
  }
  section(
    report.findings.filter((f) => !f.notLoaded),
    (s) => s,
  )
  section(
    report.findings.filter((f) => f.notLoaded),
    (s) => `NOT LOADED, ${s}`,
  )
  if (report.skipped.length) {
    lines.push("", `Skipped ${report.skipped.length} file(s):`)
    for (const s of report.skipped.slice(0, 10)) lines.push(`  ${s.file}: ${s.reason}`)
  }
  return lines.join("\n") + "\n"
}
