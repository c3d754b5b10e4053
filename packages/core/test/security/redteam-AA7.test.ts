// Red team AA7 on both routes: grep's count and truncation note (and glob's) answered whether a regex matched a
// read-denied file or a read-protected segment, one guess per call; a search path spelled `/proc/self/root<project>`
// escaped ripgrep's exclusions. The tools run as the helpers run them (ripgrep with OpenCode's arguments); the after
// hook puts the layer's contained search in place of their output (`SecuritySearch`).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import { REDTEAM_POLICY, ROUTES, isolateHome, open, redteamProject, type RouteName } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

setDefaultTimeout(120_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

async function fresh(route: RouteName, publicFiles = 0, policy: unknown = REDTEAM_POLICY) {
  const extra: Record<string, string> = {}
  for (let i = 0; i < publicFiles; i++) extra[`p/f${String(i).padStart(3, "0")}.txt`] = "PUBX\n"
  const dir = await redteamProject(extra, policy)
  const s = await open(route, dir.path)
  return {
    dir,
    s,
    async [Symbol.asyncDispose]() {
      await s.close()
      await dir[Symbol.asyncDispose]()
    },
  }
}

for (const route of ROUTES) {
  describe(`route ${route}: AA7 file tool path spellings through /proc`, () => {
    test("(held) read of .env and secrets/ through /proc spellings is refused", async () => {
      await using box = await fresh(route)
      const p = box.dir.path
      const spellings = [
        `/proc/self/root${p}/.env`,
        `/proc/thread-self/root${p}/.env`,
        `/proc/${process.pid}/root${p}/.env`,
        `/proc/self/task/${process.pid}/root${p}/.env`,
        `/proc/self/root/proc/self/root${p}/secrets/api.key`,
        `/proc/self/root${p}//secrets/./api.key`,
        `../${path.basename(p)}/.env`,
      ]
      const leaked: string[] = []
      for (const filePath of spellings) {
        const r = await box.s.call("read", { filePath })
        if (/Hq83kfP2mZ0xQ7vB|Zx81Qp0vLk27mNb5Yt3RwE9u/.test(r.raw + r.output)) leaked.push(`read ${filePath}`)
      }
      expect(leaked).toEqual([])
    })

    test("grep whose path is /proc/self/root<project> (or /proc/<pid>/root…): ripgrep does not read .env, secrets/ or app/.env.production", async () => {
      await using box = await fresh(route)
      const p = box.dir.path
      const read: string[] = []
      for (const dir of [`/proc/self/root${p}`, `/proc/${process.pid}/root${p}/app`, `/proc/thread-self/root${p}`]) {
        const g = await box.s.call("grep", { pattern: "Hq83|Zx81|prodtoken", path: dir })
        // What the model gets is filtered (the lines are removed); what ripgrep read is the raw output.
        if (/Hq83kfP2mZ0xQ7vB|Zx81Qp0vLk27mNb5Yt3RwE9u|prodtoken99887766/.test(g.output))
          read.push(`model saw it: ${dir}`)
        if (/Hq83kfP2mZ0xQ7vB|Zx81Qp0vLk27mNb5Yt3RwE9u|prodtoken99887766/.test(g.raw))
          read.push(`ripgrep read it: ${dir}`)
      }
      expect(read).toEqual([])
    })
  })

  describe(`route ${route}: AA7 grep and glob answer a right and a wrong guess alike`, () => {
    for (const n of [99, 100]) {
      test(`grep, ${n} public matches: .env guessed from the project path and from /proc/self/root<project>`, async () => {
        await using box = await fresh(route, n)
        const p = box.dir.path
        for (const base of [p, `/proc/self/root${p}`]) {
          const right = await box.s.call("grep", { pattern: "PUBX|PASSWORD=Hq8", path: base })
          const wrong = await box.s.call("grep", { pattern: "PUBX|PASSWORD=Zz9", path: base })
          expect(right.output).not.toContain("Hq83kfP2mZ0xQ7vB")
          expect(right.output.split("\n")[0]).toBe(`Found ${n} matches`)
          expect(right.output).toBe(wrong.output)
          expect(right.metadata).toEqual(wrong.metadata)
        }
      })
    }

    test("grep: a read-protected segment guessed (the project path, no path at all)", async () => {
      await using box = await fresh(route, 99)
      for (const where of [{ path: box.dir.path }, {}]) {
        const right = await box.s.call("grep", { pattern: "PUBX|confidential pricing", ...where })
        const wrong = await box.s.call("grep", { pattern: "PUBX|nonfidential pricing", ...where })
        expect(right.output).not.toContain("confidential pricing")
        expect(right.output).toBe(wrong.output)
      }
    })

    test("glob: a name in secrets/ guessed at the 100-result limit", async () => {
      await using box = await fresh(route, 100)
      const right = await box.s.call("glob", { pattern: "{p/*,secrets/api*}" })
      const wrong = await box.s.call("glob", { pattern: "{p/*,secrets/zz*}" })
      expect(right.refused).toBe(false)
      expect(right.output).not.toContain("api.key")
      expect(right.output).toBe(wrong.output)
    })

    test("batch (OpenCode 1.2.15 runs its calls past the after hook): a grep or glob reaching protected content is refused", async () => {
      await using box = await fresh(route, 3, { ...REDTEAM_POLICY, segments: undefined })
      const batch = (calls: { tool: string; parameters: Record<string, unknown> }[]) =>
        box.s.call("batch", { tool_calls: calls })
      const grep = await batch([{ tool: "grep", parameters: { pattern: "PUBX|PASSWORD=Hq8" } }])
      const glob = await batch([{ tool: "glob", parameters: { pattern: "{p/*,secrets/api*}" } }])
      const proc = await batch([
        { tool: "grep", parameters: { pattern: "PUBX", path: `/proc/self/root${box.dir.path}` } },
      ])
      const plain = await batch([{ tool: "grep", parameters: { pattern: "PUBX", path: "p" } }])
      expect([grep.refused, glob.refused, proc.refused, plain.refused]).toEqual([true, true, true, false])
      expect(grep.reason).toContain("call grep directly")
    })

    test("control: without read-protected segments, a grep in a folder holding nothing protected keeps OpenCode's own output", async () => {
      await using box = await fresh(route, 3, { ...REDTEAM_POLICY, segments: undefined })
      const g = await box.s.call("grep", { pattern: "PUBX", path: "p" })
      expect(g.output).toBe(g.raw)
    })
  })
}

// OpenCode's own grep and glob as each version runs them (read from the binaries; see docs/security.md), for the
// shapes of their results at the 100-result limit.
type Run = (dir: string, args: Record<string, unknown>) => string
const rg = (cwd: string, args: string[]) =>
  spawnSync("rg", args, { cwd, encoding: "utf8", env: process.env, maxBuffer: 64 * 1024 * 1024 }).stdout ?? ""
const base = (dir: string, args: Record<string, unknown>) =>
  typeof args.path === "string" ? path.resolve(dir, args.path) : dir
const mtime = (f: string) => fs.statSync(f).mtimeMs

/** 1.2.15: `rg -nH` on the path as given (RIPGREP_CONFIG_PATH read), every match counted, sorted by mtime, 100 shown. */
const grep1215: Run = (dir, args) => {
  const rows = rg(dir, [
    "-nH",
    "--hidden",
    "--no-messages",
    "--field-match-separator=|",
    "--regexp",
    String(args.pattern),
    base(dir, args),
  ])
    .split("\n")
    .filter(Boolean)
    .map((r) => {
      const [file, line, ...text] = r.split("|")
      return { file, line, text: text.join("|") }
    })
    .sort((a, b) => mtime(b.file) - mtime(a.file))
  if (!rows.length) return "No files found"
  const out = [`Found ${rows.length} matches${rows.length > 100 ? " (showing first 100)" : ""}`]
  blocks(out, rows.slice(0, 100))
  if (rows.length > 100)
    out.push(
      "",
      `(Results truncated: showing 100 of ${rows.length} matches (${rows.length - 100} hidden). Consider using a more specific path or pattern.)`,
    )
  return out.join("\n")
}

/** 1.18: `rg --no-config --json` from the folder, at most 100 results; exactly 100 is "more matches available". */
const grep118: Run = (dir, args) => {
  const cwd = base(dir, args)
  const rows = rg(cwd, [
    "--no-config",
    "--json",
    "--hidden",
    "--no-messages",
    "--glob=!**/.git/**",
    "--",
    String(args.pattern),
    ".",
  ])
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => r.type === "match")
    .slice(0, 100)
    .map((r) => ({
      file: path.resolve(cwd, r.data.path.text),
      line: r.data.line_number,
      text: r.data.lines.text.replace(/\n$/, ""),
    }))
  if (!rows.length) return "No files found"
  const full = rows.length === 100
  const out = [`Found ${rows.length} matches${full ? " (more matches available)" : ""}`]
  blocks(out, rows)
  if (full) out.push("", "(Results truncated. Consider using a more specific path or pattern.)")
  return out.join("\n")
}

function blocks(out: string[], rows: { file: string; line: unknown; text: string }[]) {
  let current = ""
  for (const r of rows) {
    if (r.file !== current) {
      if (current) out.push("")
      current = r.file
      out.push(`${r.file}:`)
    }
    out.push(`  Line ${r.line}: ${r.text}`)
  }
}

/** glob: `rg --files --glob=<pattern>` from the folder; 1.2.15 reads the config and stops at a 101st file, 1.18 takes 100. */
const glob =
  (version: "1.2.15" | "1.18"): Run =>
  (dir, args) => {
    const cwd = base(dir, args)
    const flags =
      version === "1.18"
        ? ["--no-config", "--files", "--hidden", `--glob=${args.pattern}`, "--glob=!**/.git/**", "."]
        : ["--files", "--glob=!.git/*", "--hidden", `--glob=${args.pattern}`]
    const files = rg(cwd, flags)
      .split("\n")
      .filter(Boolean)
      .slice(0, version === "1.18" ? 100 : 101)
    const truncated = version === "1.18" ? files.length === 100 : files.length > 100
    if (!files.length) return "No files found"
    const out = files.slice(0, 100).map((f) => path.resolve(cwd, f))
    if (truncated)
      out.push(
        "",
        "(Results are truncated: showing first 100 results. Consider using a more specific path or pattern.)",
      )
    return out.join("\n")
  }

let calls = 0
/** One call through the real hooks with OpenCode's tool in between (the arguments as the before hook left them). */
async function through(
  s: { hooks: Record<string, (...args: any[]) => Promise<void>> },
  dir: string,
  tool: string,
  args: Record<string, unknown>,
  run: Run,
) {
  const input = { tool, sessionID: "ses_redteam", callID: `aa7-${++calls}` }
  const payload = { args: { ...args } }
  await s.hooks["tool.execute.before"](input, payload)
  const raw = run(dir, payload.args)
  const out = { title: "", output: raw, metadata: {} as Record<string, unknown> }
  await s.hooks["tool.execute.after"]({ ...input, args: payload.args }, out)
  return { raw, output: out.output }
}

for (const route of ROUTES) {
  for (const version of ["1.2.15", "1.18"] as const) {
    describe(`route ${route}: AA7 with OpenCode ${version}'s grep and glob at their 100-result limit`, () => {
      const n = version === "1.2.15" ? 100 : 99
      const grep = version === "1.2.15" ? grep1215 : grep118

      test(`grep: .env guessed (the raw results differ, what the model gets does not)`, async () => {
        await using box = await fresh(route, n)
        const p = box.dir.path
        for (const at of [p, `/proc/self/root${p}`]) {
          const right = await through(box.s, p, "grep", { pattern: "PUBX|PASSWORD=Hq8", path: at }, grep)
          const wrong = await through(box.s, p, "grep", { pattern: "PUBX|PASSWORD=Zz9", path: at }, grep)
          if (version === "1.18") expect(right.raw.split("\n")[0]).not.toBe(wrong.raw.split("\n")[0])
          expect(right.output).not.toContain("Hq83kfP2mZ0xQ7vB")
          expect(right.output).toBe(wrong.output)
        }
      })

      test(`grep: a read-protected segment guessed`, async () => {
        await using box = await fresh(route, n)
        const p = box.dir.path
        const right = await through(box.s, p, "grep", { pattern: "PUBX|confidential pricing" }, grep)
        const wrong = await through(box.s, p, "grep", { pattern: "PUBX|nonfidential pricing" }, grep)
        expect(right.raw.split("\n")[0]).not.toBe(wrong.raw.split("\n")[0])
        expect(right.output).not.toContain("confidential pricing")
        expect(right.output).toBe(wrong.output)
      })

      test(`glob: a name in secrets/ guessed`, async () => {
        await using box = await fresh(route, n)
        const p = box.dir.path
        const right = await through(box.s, p, "glob", { pattern: "{p/*,secrets/api*}" }, glob(version))
        const wrong = await through(box.s, p, "glob", { pattern: "{p/*,secrets/zz*}" }, glob(version))
        // 1.2.15 reads the exclusions from the project path (its ripgrep does not enter secrets/ there).
        if (version === "1.18") expect(right.raw.includes("truncated")).not.toBe(wrong.raw.includes("truncated"))
        expect(right.output).not.toContain("api.key")
        expect(right.output).toBe(wrong.output)
      })
    })
  }
}
