// Text OpenCode takes from a file and puts in model-bound text outside the read tool's own output: the instruction
// files it appends to a read and to the system prompt (`Instructions from: <path>`), and the synthetic read of a file
// attached to a prompt (a selection: `offset`/`limit`). The lines of segments the role may not read (`read` alone, or
// `read` + `llm`) go by number there too, whether the text holds the segment's marker lines or not (red team GA1, GA4).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import { OpenCode } from "../../opencode"
import { REDTEAM_POLICY, ROUTES, SHORT_TS, isolateHome, open, redteamProject } from "./redteam-helpers"

setDefaultTimeout(60_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

/** The red-team policy with its @secure segments denied for `read` only (not `llm`: the scanner does not look). */
const READ_ONLY = {
  ...REDTEAM_POLICY,
  segments: {
    markers: REDTEAM_POLICY.segments.markers.map((m: any) =>
      m.start === "@secure-start" ? { ...m, deniedOperations: ["read"] } : m,
    ),
  },
}
const OPS_AGENTS = "# Ops rules\nBe careful.\n<!-- @secure-start -->\npin=Qv7Lm2\n<!-- @secure-end -->\nEnd.\n"
const REDACTED = "[REDACTED: protected segment]"
/** The red-team policy with `ops/pins.txt` protected whole (a file rule, read + llm). */
const PINS_POLICY = {
  ...REDTEAM_POLICY,
  rules: [
    ...REDTEAM_POLICY.rules,
    { pattern: "ops/pins.txt", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
  ],
}

/** The parts OpenCode (1.18) builds for a `text/plain` file part with a line range (an editor's selection). */
function selection(file: string, from: number, lines: string[]) {
  const to = from + lines.length - 1
  return [
    { type: "text", text: "what does this do?" },
    {
      type: "text",
      synthetic: true,
      text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: file, offset: from, limit: lines.length })}`,
    },
    {
      type: "text",
      synthetic: true,
      text: `<path>${file}</path>\n<type>file</type>\n<content>\n${lines.map((l, i) => `${from + i}: ${l}`).join("\n")}\n\n(Showing lines ${from}-${to} of 5. Use offset=${to + 1} to continue.)\n</content>`,
    },
    { type: "file", mime: "text/plain", url: `file://${file}?start=${from}&end=${to}`, filename: path.basename(file) },
  ] as any[]
}

for (const route of ROUTES)
  describe(`instruction blocks and selections, route ${route}`, () => {
    test("a folder's AGENTS.md the agent links to a file with a read-only segment: appended to a read, its segment lines go", async () => {
      await using dir = await redteamProject({ "notes/guide.md": "# Guide\nBe nice.\n" }, READ_ONLY)
      const s = await open(route, dir.path)
      try {
        const b = await s.bash(`t=$(printf "../src/sh%sort.ts" ""); ln -s "$t" notes/AGENTS.md`)
        expect(b.refused).toBe(false)
        const r = await s.call("read", { filePath: path.join(dir.path, "notes/guide.md") })
        expect(r.output).not.toContain("Qz7")
        expect(r.output).not.toContain("k=4")
        // The block keeps its shape: header, markers and the lines outside the segment.
        expect(r.output).toContain(
          `Instructions from: ${path.join(dir.path, "notes/AGENTS.md")}\n// @secure-start\n${REDACTED}\n${REDACTED}\n// @secure-end\nexport const after = 1`,
        )
        expect(r.output).toContain("Be nice.")
      } finally {
        await s.close()
      }
    })

    test("a user's folder AGENTS.md with a read-only segment, appended to the read of itself and of a file beside it", async () => {
      await using dir = await redteamProject(
        { "ops/AGENTS.md": OPS_AGENTS, "ops/readme.txt": "ops notes\n" },
        READ_ONLY,
      )
      const s = await open(route, dir.path)
      try {
        for (const file of ["ops/readme.txt", "ops/AGENTS.md"]) {
          const r = await s.call("read", { filePath: path.join(dir.path, file) })
          expect(r.output).not.toContain("Qv7Lm2")
          expect(r.output).toContain("Be careful.")
        }
      } finally {
        await s.close()
      }
    })

    test("the root AGENTS.md linked to a file with a read-only segment: the system prompt's block loses the segment's lines", async () => {
      await using dir = await redteamProject({}, READ_ONLY)
      fs.symlinkSync("src/short.ts", path.join(dir.path, "AGENTS.md"))
      const s = await open(route, dir.path)
      try {
        const header = `Instructions from: ${path.join(dir.path, "AGENTS.md")}`
        const output = { system: [`You are a helpful agent.\n${header}\n${SHORT_TS.trim()}\nInstructions from: ~/x`] }
        await s.hooks["experimental.chat.system.transform"]({}, output)
        const text = output.system.join("\n")
        expect(text).not.toContain("Qz7")
        expect(text).not.toContain("k=4")
        expect(text).toContain(
          `${header}\n// @secure-start\n${REDACTED}\n${REDACTED}\n// @secure-end\nexport const after = 1`,
        )
      } finally {
        await s.close()
      }
    })

    test("a block that does not match its file's text now (it changed, or a header inside cut it) goes whole", async () => {
      await using dir = await redteamProject({ "ops/AGENTS.md": OPS_AGENTS }, READ_ONLY)
      const s = await open(route, dir.path)
      try {
        const header = `Instructions from: ${path.join(dir.path, "ops/AGENTS.md")}`
        const output = { system: [`${header}\n# Old rules\npin=Qv7Lm2\n`] }
        await s.hooks["experimental.chat.system.transform"]({}, output)
        expect(output.system[0]).not.toContain("Qv7Lm2")
        expect(output.system[0]).toContain("[REDACTED: instructions from")
      } finally {
        await s.close()
      }
    })

    test("a synthetic read of a file with a segment: the older numbered form is filtered by number, text with no numbers goes whole", async () => {
      await using dir = await redteamProject({}, READ_ONLY)
      const s = await open(route, dir.path)
      try {
        const file = path.join(dir.path, "src/short.ts")
        const preamble = `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: file })}`
        const parts: any[] = [
          { type: "text", text: "look" },
          { type: "text", synthetic: true, text: preamble },
          { type: "text", synthetic: true, text: "<file>\n00002| Qz7\n00003| k=4\n00004| // @secure-end\n</file>" },
          { type: "text", synthetic: true, text: "Qz7\nk=4" },
          { type: "file", mime: "text/plain", url: `file://${file}`, filename: "short.ts" },
          { type: "text", text: "k=4 is what I typed" },
        ]
        await s.hooks["chat.message"]({}, { parts })
        expect(parts[2].text).toBe(`<file>\n00002| ${REDACTED}\n00003| ${REDACTED}\n00004| // @secure-end\n</file>`)
        expect(parts[3].text).toBe(REDACTED)
        // The user's own text after the mention is the user's.
        expect(parts[5].text).toBe("k=4 is what I typed")
      } finally {
        await s.close()
      }
    })

    for (const [name, policy] of [
      ["read + llm", REDTEAM_POLICY],
      ["read only", READ_ONLY],
    ] as const)
      test(`a selection inside a segment (${name}) attached to a prompt: its lines go by number`, async () => {
        await using dir = await redteamProject({}, policy)
        const s = await open(route, dir.path)
        try {
          const file = path.join(dir.path, "src/short.ts")
          const parts = selection(file, 2, ["Qz7", "k=4"])
          await s.hooks["chat.message"]({}, { parts })
          const text = parts.map((p) => p.text ?? "").join("\n")
          expect(text).not.toContain("Qz7")
          expect(text).not.toContain("k=4")
          expect(text).toContain(`<content>\n2: ${REDACTED}\n3: ${REDACTED}\n\n(Showing lines 2-3 of 5.`)
          // The same parts stored before the policy, sent again: the messages transform filters them too.
          const stored = selection(file, 3, ["k=4", "// @secure-end", "export const after = 1"])
          const messages: any[] = [{ info: { role: "user" }, parts: stored }]
          await s.hooks["experimental.chat.messages.transform"]({}, { messages })
          const sent = messages[0].parts.map((p: any) => p.text ?? "").join("\n")
          expect(sent).not.toContain("k=4")
          expect(sent).toContain(`3: ${REDACTED}\n4: // @secure-end\n5: export const after = 1`)
        } finally {
          await s.close()
        }
      })

    // Red team GD1: OpenCode's header names the file's path up to the line's end, so a folder named with a line break
    // (`src\nq`) lent its AGENTS.md block to the existing folder `src`, and the block went out unfiltered.
    for (const [name, target, policy, secrets] of [
      ["a file with a read-only segment", "../src/sh%sort.ts", READ_ONLY, ["Qz7", "k=4"]],
      ["a file the policy protects whole", "../ops/pi%sns.txt", PINS_POLICY, ["door pin 4242", "vault=73Q1"]],
    ] as const)
      test(`GD1 an AGENTS.md in a folder named with a line break, linked to ${name}: its block goes whole`, async () => {
        await using dir = await redteamProject({ "ops/pins.txt": "door pin 4242\nvault=73Q1\n" }, policy)
        const s = await open(route, dir.path)
        try {
          const b = await s.bash(
            `d=$(printf 'src\\nq'); mkdir "$d"; echo guide > "$d/guide.md"; t=$(printf "${target}" ""); ln -s "$t" "$d/AGENTS.md"; echo done`,
          )
          expect(b.refused).toBe(false)
          const r = await s.call("read", { filePath: path.join(dir.path, "src\nq/guide.md") })
          expect(r.refused).toBe(false)
          expect(r.output).toContain("guide")
          for (const secret of secrets) expect(r.output).not.toContain(secret)
          expect(r.output).toContain(`[REDACTED: instructions from ${path.join(dir.path, "src")}`)
        } finally {
          await s.close()
        }
      })

    test("GD2 a plain AGENTS.md holding a line that starts like a header keeps all its lines, in a read and in the system prompt", async () => {
      const agents = "# Team\nInstructions from: the team lead, Friday\nShip small changes.\nRun the tests first.\n"
      await using dir = await redteamProject({ "team2/AGENTS.md": agents, "team2/notes.md": "notes\n" }, READ_ONLY)
      const s = await open(route, dir.path)
      try {
        const r = await s.call("read", { filePath: path.join(dir.path, "team2/notes.md") })
        expect(r.output).toContain(
          "Instructions from: the team lead, Friday\nShip small changes.\nRun the tests first.",
        )
        const system = [`You are helpful.\nInstructions from: ${path.join(dir.path, "team2/AGENTS.md")}\n${agents}`]
        await s.hooks["experimental.chat.system.transform"]({}, { system })
        expect(system.join("\n")).toContain("Ship small changes.\nRun the tests first.")
        expect(system.join("\n")).not.toContain("REDACTED")
      } finally {
        await s.close()
      }
    })
  })
