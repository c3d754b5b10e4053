// The patch series: pin file, series file and patch files, read and checked statically (no upstream checkout needed).
import fs from "fs"
import path from "path"

/**
 * Reading and validating `patches/`: `UPSTREAM.json` (the pin), `series` (the order), and `*.patch` files, each a
 * header (`What:`, `Why:`, `Upstream:` lines) followed by a git diff.
 *
 * @example
 * const report = Series.validate("patches")
 * if (report.errors.length) console.error(report.errors.join("\n"))
 */
export namespace Series {
  /**
   * The upstream release the series is for, and the git blob id of every upstream file the series changes (what
   * `npm run apply` checks before changing anything).
   */
  export type Pin = { repository: string; version: string; commit: string; tag: string; files: Record<string, string> }

  export type FileChange = {
    path: string
    kind: "modify" | "add" | "delete"
    hunks: number
    added: number
    removed: number
  }

  export type Patch = {
    name: string
    file: string
    header: { what: string; why: string; upstream: string }
    files: FileChange[]
    lines: number
  }

  export type Report = { pin?: Pin; patches: Patch[]; errors: string[] }

  export const PIN = "UPSTREAM.json"
  export const SERIES = "series"
  /** Real files of this repository that patches add to the checkout: `glue/<rel>` becomes `packages/opencode/<rel>`. */
  export const GLUE = "glue"
  export const GLUE_TARGET = "packages/opencode"
  const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)+\.patch$/
  /** Header text that points outside the repository (document ids, shared notes) instead of stating the requirement. */
  const OUTSIDE = /\b(?:PRD|NFR|FR-?\d+|US-?\d+)\b|\.\.\/shared|port map/i

  /**
   * Git's blob id of a file's content (`git hash-object`), computed without git.
   *
   * @example
   * Series.blobId(Buffer.from("hello\n")) // "ce013625030ba8dba906f756967f9e9ca394464a"
   */
  export function blobId(content: Uint8Array | string): string {
    const bytes = typeof content === "string" ? Buffer.from(content) : content
    const hash = new Bun.CryptoHasher("sha1")
    hash.update(`blob ${bytes.byteLength}\0`)
    hash.update(bytes)
    return hash.digest("hex")
  }

  /**
   * The diff that adds a glue file to the checkout, exactly as the glue patches carry it.
   *
   * @example
   * Series.glueDiff("src/builtins/a.ts", "export {}\n") // "diff --git a/packages/opencode/src/builtins/a.ts …"
   */
  export function glueDiff(rel: string, content: string): string {
    const target = `${GLUE_TARGET}/${rel}`
    const lines = content.split("\n")
    const trailing = lines.at(-1) === ""
    if (trailing) lines.pop()
    return [
      `diff --git a/${target} b/${target}`,
      "new file mode 100644",
      "--- /dev/null",
      `+++ b/${target}`,
      `@@ -0,0 +1${lines.length === 1 ? "" : `,${lines.length}`} @@`,
      ...lines.map((l) => `+${l}`),
      ...(trailing ? [] : ["\\ No newline at end of file"]),
      "",
    ].join("\n")
  }

  /** Glue files (relative to `glue/`), sorted. */
  export function glueFiles(dir: string): string[] {
    const root = path.join(dir, GLUE)
    if (!fs.existsSync(root)) return []
    return (fs.readdirSync(root, { recursive: true }) as string[])
      .filter((rel) => fs.statSync(path.join(root, rel)).isFile())
      .map((rel) => rel.split(path.sep).join("/"))
      .sort()
  }

  /** A glue patch's text regenerated from its file: the patch's header, then the file's diff. */
  export function regenerate(patchText: string, rel: string, content: string): string {
    const at = patchText.indexOf("diff --git ")
    const header = at < 0 ? patchText : patchText.slice(0, at)
    return header + glueDiff(rel, content)
  }

  export function readPin(dir: string): Pin {
    const file = path.join(dir, PIN)
    let data: any
    try {
      data = JSON.parse(fs.readFileSync(file, "utf8"))
    } catch (error) {
      throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`)
    }
    const problems: string[] = []
    if (typeof data?.repository !== "string" || !/^https:\/\/\S+$/.test(data.repository))
      problems.push("repository must be an https URL")
    if (typeof data?.version !== "string" || !/^\d+\.\d+\.\d+$/.test(data.version))
      problems.push("version must look like 1.2.15")
    if (typeof data?.commit !== "string" || !/^[0-9a-f]{40}$/.test(data.commit))
      problems.push("commit must be a full 40-character hex sha")
    if (typeof data?.tag !== "string" || !data.tag) problems.push("tag must be a non-empty string")
    const files = data?.files
    if (!files || typeof files !== "object" || Array.isArray(files))
      problems.push("files must map every upstream file the series changes to its git blob id")
    else
      for (const [rel, blob] of Object.entries(files))
        if (typeof blob !== "string" || !/^[0-9a-f]{40}$/.test(blob)) problems.push(`files['${rel}'] must be a blob id`)
    if (problems.length) throw new Error(`${file}: ${problems.join("; ")}`)
    return {
      repository: data.repository,
      version: data.version,
      commit: data.commit,
      tag: data.tag,
      files: { ...files },
    }
  }

  /** Series entries in order (blank lines and `#` comments ignored). */
  export function readSeries(dir: string): string[] {
    return fs
      .readFileSync(path.join(dir, SERIES), "utf8")
      .split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean)
  }

  /** Parses one patch file; throws with the line number on anything that is not a well-formed header + git diff. */
  export function parse(text: string, name: string): Patch {
    const lines = text.split("\n")
    if (lines.at(-1) === "") lines.pop()
    const first = lines.findIndex((l) => l.startsWith("diff --git "))
    if (first < 0) throw new Error(`${name}: no 'diff --git' section`)
    const header: Record<string, string> = {}
    for (const line of lines.slice(0, first)) {
      const m = /^(What|Why|Upstream):\s*(.*)$/.exec(line)
      if (m) header[m[1].toLowerCase()] = m[2].trim()
      else if (line.trim() && !/^\s/.test(line) && line !== "---")
        throw new Error(`${name}: unexpected header line '${line}' (expected What:, Why:, Upstream:)`)
      else if (/^\s/.test(line) && line.trim()) {
        const last = Object.keys(header).at(-1)
        if (!last) throw new Error(`${name}: continuation line before any header field`)
        header[last] += " " + line.trim()
      }
    }
    for (const key of ["what", "why", "upstream"])
      if (!header[key])
        throw new Error(`${name}: header field '${key[0].toUpperCase()}${key.slice(1)}:' is missing or empty`)
    const outside = OUTSIDE.exec(`${header.what} ${header.why}`)
    if (outside)
      throw new Error(
        `${name}: the header points outside the repository ('${outside[0]}'); state the requirement instead`,
      )

    const files: FileChange[] = []
    let i = first
    while (i < lines.length) {
      const diff = /^diff --git a\/(\S+) b\/(\S+)$/.exec(lines[i])
      if (!diff) throw new Error(`${name}:${i + 1}: expected 'diff --git a/… b/…', found '${lines[i]}'`)
      const change: FileChange = { path: diff[2], kind: "modify", hunks: 0, added: 0, removed: 0 }
      i++
      while (i < lines.length && !lines[i].startsWith("--- ") && !lines[i].startsWith("diff --git ")) {
        if (lines[i].startsWith("new file mode")) change.kind = "add"
        else if (lines[i].startsWith("deleted file mode")) change.kind = "delete"
        else if (!/^(index |old mode|new mode|similarity|rename|copy)/.test(lines[i]))
          throw new Error(`${name}:${i + 1}: unexpected line in file header '${lines[i]}'`)
        i++
      }
      if (!lines[i]?.startsWith("--- ") || !lines[i + 1]?.startsWith("+++ "))
        throw new Error(`${name}:${i + 1}: missing ---/+++ lines for ${change.path}`)
      const from = lines[i].slice(4)
      const to = lines[i + 1].slice(4)
      if (change.kind === "add" ? from !== "/dev/null" : from !== `a/${diff[1]}`)
        throw new Error(`${name}:${i + 1}: '--- ${from}' does not match the diff header`)
      if (change.kind === "delete" ? to !== "/dev/null" : to !== `b/${diff[2]}`)
        throw new Error(`${name}:${i + 2}: '+++ ${to}' does not match the diff header`)
      i += 2
      while (i < lines.length && lines[i].startsWith("@@")) {
        const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(lines[i])
        if (!h) throw new Error(`${name}:${i + 1}: malformed hunk header '${lines[i]}'`)
        const oldCount = h[2] === undefined ? 1 : Number(h[2])
        const newCount = h[4] === undefined ? 1 : Number(h[4])
        let seenOld = 0
        let seenNew = 0
        const start = i + 1
        i++
        while (i < lines.length && (seenOld < oldCount || seenNew < newCount || lines[i].startsWith("\\"))) {
          const line = lines[i]
          if (line.startsWith("\\")) {
            i++
            continue
          }
          const mark = line[0]
          if (mark === " " || line === "") {
            seenOld++
            seenNew++
          } else if (mark === "-") {
            seenOld++
            change.removed++
          } else if (mark === "+") {
            seenNew++
            change.added++
          } else break
          i++
        }
        if (seenOld !== oldCount || seenNew !== newCount)
          throw new Error(
            `${name}:${start}: hunk for ${change.path} declares -${oldCount} +${newCount} lines but has -${seenOld} +${seenNew}`,
          )
        change.hunks++
      }
      if (change.hunks === 0 && change.kind !== "delete") throw new Error(`${name}: ${change.path} has no hunks`)
      files.push(change)
    }
    return {
      name,
      file: name,
      header: { what: header.what, why: header.why, upstream: header.upstream },
      files,
      lines: lines.length,
    }
  }

  /** Every static check of the series; never throws. */
  export function validate(dir: string): Report {
    const report: Report = { patches: [], errors: [] }
    try {
      report.pin = readPin(dir)
    } catch (error) {
      report.errors.push(error instanceof Error ? error.message : String(error))
    }
    let series: string[] = []
    try {
      series = readSeries(dir)
    } catch (error) {
      report.errors.push(`${path.join(dir, SERIES)}: ${error instanceof Error ? error.message : String(error)}`)
    }
    const seen = new Set<string>()
    for (const entry of series) {
      if (seen.has(entry)) report.errors.push(`series: '${entry}' is listed twice`)
      seen.add(entry)
      if (!NAME.test(entry)) report.errors.push(`series: '${entry}' is not named <area>-<verb>-<object>.patch`)
      const file = path.join(dir, entry)
      if (!fs.existsSync(file)) {
        report.errors.push(`series: '${entry}' does not exist`)
        continue
      }
      try {
        report.patches.push({ ...parse(fs.readFileSync(file, "utf8"), entry), file: path.resolve(file) })
      } catch (error) {
        report.errors.push(error instanceof Error ? error.message : String(error))
      }
    }
    for (const file of fs.existsSync(dir) ? fs.readdirSync(dir) : [])
      if (file.endsWith(".patch") && !seen.has(file)) report.errors.push(`'${file}' is not listed in series`)
    // The pin names exactly the upstream files the series changes.
    if (report.pin) {
      const changed = new Set(report.patches.flatMap((p) => p.files.filter((f) => f.kind !== "add").map((f) => f.path)))
      for (const rel of changed)
        if (!report.pin.files[rel]) report.errors.push(`${PIN}: no blob id for ${rel}, which the series changes`)
      for (const rel of Object.keys(report.pin.files))
        if (!changed.has(rel)) report.errors.push(`${PIN}: ${rel} is pinned but no patch changes it`)
    }
    // Glue patches are generated from the repository's files and must agree with them.
    for (const rel of glueFiles(dir)) {
      const target = `${GLUE_TARGET}/${rel}`
      const adding = report.patches.filter((p) => p.files.some((f) => f.path === target && f.kind === "add"))
      if (adding.length !== 1) {
        report.errors.push(`${GLUE}/${rel}: ${adding.length} patches add ${target} (expected exactly one)`)
        continue
      }
      const text = fs.readFileSync(adding[0].file, "utf8")
      if (adding[0].files.length !== 1)
        report.errors.push(`${adding[0].name}: a glue patch adds ${target} and nothing else`)
      else if (text !== regenerate(text, rel, fs.readFileSync(path.join(dir, GLUE, rel), "utf8")))
        report.errors.push(`${adding[0].name} does not match ${GLUE}/${rel}: run npm run glue`)
    }
    return report
  }
}
