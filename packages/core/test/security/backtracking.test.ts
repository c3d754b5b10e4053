import { describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityEdit } from "../../security/edit"
import { SecurityOutput } from "../../security/output"
import { SecurityPluginTool } from "../../security/plugin-tool"
import { SecuritySecrets } from "../../security/secrets"
import { SecuritySegments } from "../../security/segments"
import { SecurityShell } from "../../security/shell"

// Text the security layer reads on every call (shell commands up to SecurityShell.MAX_COMMAND, tool outputs, file
// contents, plugin tool arguments) shaped so that a backtracking pattern retries at every position. Each of these
// took seconds to hours before its pattern was rewritten (a 2 KB sed script 7.4 s and growing with the cube of its
// length; 100 KB of "eyJ-" 11 s); written linearly they take milliseconds. The explicit timeout is the only limit:
// nothing here measures time.
const HEAVY = 30_000
const MAX = SecurityShell.MAX_COMMAND - 64
const analyse = (command: string) =>
  SecurityShell.analyze(command, { cwd: "/repo", home: "/home/me", env: { TMPDIR: "/tmp" } })
const touched = async (command: string) => (await analyse(command)).accesses.map((a) => a.path)
const reads = async (command: string) =>
  (await analyse(command)).accesses.filter((a) => a.op === "read").map((a) => a.path)

describe("no pattern backtracks on adversarial text", () => {
  test(
    "secrets: a run of eyJ- is no JWT, and a real JWT after it is still found",
    () => {
      const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
      expect(SecuritySecrets.find("eyJ-".repeat(250_000))).toEqual([])
      expect(SecuritySecrets.find("eyJ-".repeat(250_000) + " " + jwt).map((m) => m.id)).toEqual(["jwt"])
      // A failed candidate inside a word does not hide a token later in the same run.
      expect(SecuritySecrets.find("aeyJzzzzzzzzzz-" + jwt).map((m) => m.id)).toEqual(["jwt"])
    },
    HEAVY,
  )

  test(
    "segments: a long line of comment openers before a quote",
    () => {
      const pairs = [{ start: "@locked-start", end: "@locked-end" }]
      const shape = (n: number) => ";".repeat(n) + "'@locked-start\nsecret\n// @locked-end\n// @locked-start\nx\n"
      expect(SecuritySegments.find(shape(1_000_000), pairs).length).toBe(SecuritySegments.find(shape(10), pairs).length)
      // The opener rule itself: after an opener with no quote after it, a marker counts; after a quote it does not.
      expect(SecuritySegments.inComment("x = 1 // note @m", 15)).toBe(true)
      expect(SecuritySegments.inComment("s = '// not' + '@m", 17)).toBe(false)
      expect(SecuritySegments.inComment('doc = """@m', 9)).toBe(true)
    },
    HEAVY,
  )

  test(
    "git diff output: a header of ' b/' repeated, ending in a carriage return",
    () => {
      const text = "diff --git a/" + " b/".repeat(333_333) + "\r\n@@ -1 +1 @@\n+x\n"
      const out = SecurityOutput.patches(text, () => undefined, [{ start: "@s", end: "@e" }])
      expect(out.redacted).toBe(0)
      expect(out.text.endsWith("+x\n")).toBe(true)
    },
    HEAVY,
  )

  test(
    "shell: a sed script of blank lines and tabs, one long option, one long revision, one long mktemp template",
    async () => {
      const half = Math.floor(MAX / 2) - 20
      expect(await reads(`sed -e '${"\n".repeat(half)}\t\t${"\n".repeat(half)}' f`)).toEqual(["/repo/f"])
      expect(await reads(`sed -e ';${" ".repeat(MAX - 20)}x' f`)).toEqual(["/repo/f"])
      // sed's own w and r commands are still read.
      expect(
        (await analyse("sed -e '1,3 w out.txt' -e 'r in.txt' f")).accesses.map((a) => `${a.op} ${a.path}`),
      ).toEqual(expect.arrayContaining(["write /repo/out.txt", "read /repo/in.txt", "read /repo/f"]))
      expect((await analyse("git clean -" + "n".repeat(MAX - 20) + "1")).error).toBeUndefined()
      expect((await analyse("bash -" + "c".repeat(MAX - 20) + "1 x")).error).toBeUndefined()
      expect((await analyse("git show " + "a".repeat(MAX - 20))).error).toBeUndefined()
      expect((await analyse("cat $(mktemp " + "X".repeat(MAX - 30) + "a)")).error).toBeUndefined()
      // The rewritten readings still read what they did.
      expect(await reads("git show HEAD:src/a.ts")).toContain("/repo/src/a.ts")
      expect(await reads("git show :0:src/b.ts")).toContain("/repo/src/b.ts")
    },
    HEAVY,
  )

  test(
    "shell: an interpreter program with a '<' before a long run of blanks",
    async () => {
      const r = await analyse(`python3 <<'EOF'\n<${" ".repeat(MAX - 40)}x\nEOF\n`)
      expect(r.error).toBeUndefined()
    },
    HEAVY,
  )

  test(
    "shell: interpreter code and an awk program made of unterminated, escaped quotes",
    async () => {
      expect((await analyse(`python3 <<'EOF'\n${"'\\".repeat((MAX - 40) / 2)}\nEOF\n`)).error).toBeUndefined()
      expect((await analyse(`python3 <<'EOF'\nopen(x)\n"${'\\"'.repeat((MAX - 60) / 2)}\nEOF\n`)).error).toBeUndefined()
      expect((await analyse(`awk '"${'\\"'.repeat((MAX - 40) / 2)}' f`)).error).toBeUndefined()
      // What they read is still read: a literal path, a command awk runs.
      expect(await touched(`python3 -c "print(open('data/a.txt').read())"`)).toContain("/repo/data/a.txt")
      expect(await reads(`awk 'BEGIN { system("cat notes.txt") }'`)).toContain("/repo/notes.txt")
      expect(await reads(`awk 'BEGIN { while (("cat b.txt" | getline l) > 0) print l }'`)).toContain("/repo/b.txt")
    },
    // Bounded by the 64 KB command limit, the patterns before took 18 s here (measured once, not asserted); now ms.
    HEAVY,
  )

  test(
    "shell: a git alias whose configuration line is long and ends in a carriage return",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-backtrack-"))
      try {
        const line = "-=" + "\t".repeat(100_000) + "=" + "\t".repeat(100_000) + "\rx"
        fs.writeFileSync(path.join(dir, "config"), `[alias]\n${line}\n\tshow-it = show HEAD:src/c.ts\n`)
        expect((await analyse(`git --git-dir=${dir} foo`)).error).toBeUndefined()
        // An alias is still expanded.
        expect(await reads(`git --git-dir=${dir} show-it`)).toContain("/repo/src/c.ts")
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    HEAVY,
  )

  test(
    "edit replay: an oldString of many words whose whitespace differs from the file's, with near misses before",
    () => {
      // The whitespace-collapsed strategy, as OpenCode 1.2.15 replays an edit (100 KB took 4.7 s before).
      const k = 125_000
      const current = ("a ".repeat(k) + "b ").repeat(3) + "a ".repeat(k) + "c\n"
      const o = SecurityEdit.outcome(current, { oldString: "a  ".repeat(k) + "c", newString: "Z" }, "1.2.15")
      expect(o.kind).toBe("replace")
      expect(SecurityEdit.result(current, o, "1.2.15")?.endsWith("b Z\n")).toBe(true)
    },
    HEAVY,
  )

  test(
    "plugin tool arguments: a long run of dots",
    () => {
      const c = SecurityPluginTool.candidates({ a: ".".repeat(65_000) + "x" }, { directory: "/repo", home: "/h" })
      expect(Array.isArray(c)).toBe(true)
      expect(
        SecurityPluginTool.candidates({ a: "see src/app.ts." }, { directory: "/repo", home: "/h" }).map((x) => x.path),
      ).toContain("/repo/src/app.ts")
    },
    HEAVY,
  )
})
