// UTF-16 files (with a byte-order mark) holding protected segments, next to the same text in UTF-8 (red team Z4-1..3):
// ripgrep transcodes UTF-16 with a BOM, so the security layer must find the markers in the decoded text too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityOutput } from "../../security/output"
import { SecuritySegments } from "../../security/segments"
import { tmpdir } from "../fixture"
import { ROUTES, open, redteamProject, type Session } from "./redteam-helpers"

const TEXT = [
  "export const open = 1",
  "// @secure-start",
  'const vaultPin = "4711"',
  "// @secure-end",
  "# @locked-start",
  'OWNER = "Jose"',
  "# @locked-end",
  "export const tail = 2",
  "",
].join("\n")
const le = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, "utf16le")])
const be = (s: string) => {
  const b = Buffer.from(s, "utf16le")
  b.swap16()
  return Buffer.concat([Buffer.from([0xfe, 0xff]), b])
}
const DBG = !!process.env.UTF16DEBUG

for (const route of ROUTES) {
  for (const [name, bytes] of [
    ["UTF-8 (control)", Buffer.from(TEXT)],
    ["UTF-16LE", le(TEXT)],
    ["UTF-16BE", be(TEXT)],
    ["UTF-16LE odd length", Buffer.concat([le(TEXT), Buffer.from([0x41])])],
  ] as const) {
    describe(`UTF-16 segments [${route}] ${name} file with a read-protected segment`, () => {
      let s: Session
      let dispose: () => Promise<void>
      beforeAll(async () => {
        const dir = await redteamProject()
        fs.writeFileSync(path.join(dir.path, "src/wide.ts"), bytes)
        s = await open(route, dir.path)
        dispose = async () => {
          await s.close()
          await dir[Symbol.asyncDispose]?.()
        }
      })
      afterAll(async () => dispose?.())

      test("ast_grep_search: right vs wrong guess answered the same", async () => {
        const right = await s.call("ast_grep_search", { pattern: 'const vaultPin = "4711"', lang: "typescript" })
        const wrong = await s.call("ast_grep_search", { pattern: 'const vaultPin = "0000"', lang: "typescript" })
        if (DBG) console.log(right.raw, "\n--\n", wrong.raw)
        expect(right.output).not.toContain("wide.ts")
        const same = (raw: string) => raw.replace(/\d+(\.\d+)?\s*ms/g, "").replace(/4711|0000/g, "N")
        expect(same(right.raw)).toBe(same(wrong.raw))
      })

      test("ast_grep_replace live: right guess neither names nor refuses; file unchanged", async () => {
        const r = await s.call("ast_grep_replace", {
          pattern: 'const vaultPin = "4711"',
          rewrite: "const x = 1",
          lang: "typescript",
          dryRun: false,
        })
        if (DBG) console.log(r.raw, r.reason, r.error)
        expect(`${r.output} ${String(r.error ?? "")}`).not.toContain("wide.ts")
        expect(fs.readFileSync(path.join(s.dir, "src/wide.ts")).equals(bytes)).toBe(true)
      })

      test("grep (ripgrep transcodes UTF-16 with a BOM): the hidden segment's line is not shown", async () => {
        const r = await s.call("grep", { pattern: "vaultPin", path: s.dir })
        if (DBG) console.log("RAW", r.raw, "\nOUT", r.output)
        expect(r.output).not.toContain("4711")
      })

      test("read: the hidden segment's line is not shown", async () => {
        const r = await s.call("read", { filePath: path.join(s.dir, "src/wide.ts") })
        if (DBG) console.log("READ", r.refused, r.reason, r.output)
        expect(`${r.output ?? ""}`).not.toContain("4711")
      })

      test("bash rg: the hidden segment's line is not shown", async () => {
        const r = await s.bash("rg -n vaultPin src")
        if (DBG) console.log("BASH", r.refused, r.reason, r.output)
        expect(`${r.output ?? ""}`).not.toContain("4711")
      })

      test("edit: a right and a wrong guess of the hidden line, as OpenCode reads the bytes, answer alike", async () => {
        const file = path.join(s.dir, "src/wide.ts")
        // What OpenCode's edit sees of a line of the file: its bytes read as UTF-8 (NULs between the characters).
        const seen = (line: string) =>
          name === "UTF-16BE"
            ? be(line).subarray(2).toString("utf8")
            : name.startsWith("UTF-16")
              ? Buffer.from(line, "utf16le").toString("utf8")
              : line
        const right = await s.call("edit", {
          filePath: file,
          oldString: seen('const vaultPin = "4711"'),
          newString: "x",
        })
        const wrong = await s.call("edit", {
          filePath: file,
          oldString: seen('const vaultPin = "0000"'),
          newString: "x",
        })
        if (DBG) console.log("EDIT", right.refused, right.reason, "|", wrong.refused, wrong.reason)
        expect(fs.readFileSync(file).equals(bytes)).toBe(true)
        expect(right.refused).toBe(wrong.refused)
        expect(String(right.reason ?? right.output)).toBe(String(wrong.reason ?? wrong.output))
        if (name.startsWith("UTF-16")) expect(right.refused).toBe(true)
      })

      test("write: the write-locked segment of the UTF-16 file is not removed", async () => {
        const file = path.join(s.dir, "src/wide.ts")
        const r = await s.call("write", { filePath: file, content: "export const open = 1\n" })
        if (DBG) console.log(r.refused, r.reason, r.output)
        const after = fs.readFileSync(file)
        fs.writeFileSync(file, bytes)
        expect(after.equals(bytes)).toBe(true)
      })
    })
  }
}

describe("UTF-16 segments: markers found in the decoded text protect every line", () => {
  const pairs = [{ start: "@secure-start", end: "@secure-end" }]
  for (const [name, bytes] of [
    ["UTF-16LE", le(TEXT)],
    ["UTF-16BE", be(TEXT)],
    ["UTF-16LE odd length", Buffer.concat([le(TEXT), Buffer.from([0x41])])],
  ] as const)
    test(`${name}: read whole, and streamed in chunks when too large to read whole`, async () => {
      await using dir = await tmpdir()
      const file = path.join(dir.path, "wide.ts")
      fs.writeFileSync(file, bytes)
      expect(SecurityOutput.fileRanges(file, pairs, "lf")).toEqual([{ from: 1, to: Infinity }])
      expect(SecuritySegments.scanFile(file, pairs, 16)).toEqual([0])
      expect(SecurityOutput.fileRanges(file, pairs, "lf", 8)).toEqual([{ from: 1, to: Infinity }])
    })

  test("UTF-8 (control): the segment's own lines, as before", async () => {
    await using dir = await tmpdir()
    const file = path.join(dir.path, "narrow.ts")
    fs.writeFileSync(file, TEXT)
    expect(SecurityOutput.fileRanges(file, pairs, "lf")).toEqual([{ from: 3, to: 3 }])
    expect(SecuritySegments.scanFile(file, pairs, 16)).toEqual([0])
  })
})
