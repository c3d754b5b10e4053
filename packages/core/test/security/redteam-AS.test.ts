// Red team AS: content OpenCode itself reads into a prompt (an @-mention, an attachment, a command's file reference,
// a task prompt's file reference, an editor's embedded resource) reaches the model through `chat.message` only, with
// no tool hook. These cases give the hooks the parts OpenCode 1.2.15 / 1.18.x really build (recorded on the stock
// binaries, see test/e2e/redteam-AS.test.ts) and assert nothing of a protected file is left.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import path from "path"
import zlib from "zlib"
import { OpenCode } from "../../opencode"
import { REDTEAM_POLICY, ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"

setDefaultTimeout(60_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const SECRET = "launch on the fourth of july"

function crc32(buf: Buffer) {
  let crc = 0xffffffff
  for (let n = 0; n < buf.length; n++) {
    let c = (crc ^ buf[n]) & 0xff
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    crc = (crc >>> 8) ^ c
  }
  return (crc ^ 0xffffffff) >>> 0
}
function chunk(type: string, data: Buffer) {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const td = Buffer.concat([Buffer.from(type, "latin1"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(td))
  return Buffer.concat([len, td, crc])
}
function png(text: string) {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(1, 0)
  ihdr.writeUInt32BE(1, 4)
  ihdr[8] = 8
  ihdr[9] = 2
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("tEXt", Buffer.from(`Comment\0${text}`, "latin1")),
    chunk("IDAT", zlib.deflateSync(Buffer.from([0, 255, 0, 0]))),
    chunk("IEND", Buffer.alloc(0)),
  ])
}

/** Everything the parts hold, data URLs decoded. */
function textOf(parts: any[]) {
  const out: string[] = []
  for (const p of parts) {
    out.push(JSON.stringify(p))
    const url = typeof p.url === "string" ? p.url : ""
    const m = /^data:[^,]*;base64,(.*)$/s.exec(url)
    if (m) out.push(Buffer.from(m[1], "base64").toString("latin1"))
  }
  return out.join("\n")
}

for (const route of ROUTES) {
  describe(`AS route ${route}`, () => {
    async function session() {
      const dir = await redteamProject({ "secrets/pin.txt": `${SECRET}\n`, "docs/guide.md": "# Guide\nBe nice.\n" })
      fs.writeFileSync(path.join(dir.path, "secrets/board.png"), png(SECRET))
      fs.symlinkSync("../secrets/pin.txt", path.join(dir.path, "docs/AGENTS.md"))
      const s = await open(route, dir.path)
      return {
        dir: dir.path,
        s,
        async [Symbol.asyncDispose]() {
          await s.close()
          await dir[Symbol.asyncDispose]()
        },
      }
    }
    /** chat.message, then the messages transform, as OpenCode runs them before a request. */
    async function send(s: Awaited<ReturnType<typeof session>>["s"], parts: any[]) {
      await s.hooks["chat.message"]({}, { parts })
      const messages = [{ info: { role: "user", id: "msg_as" }, parts }]
      await s.hooks["experimental.chat.messages.transform"]({}, { messages })
      return messages[0].parts
    }

    test("AS1/AS2 an image OpenCode reads into a prompt from an llm-protected folder (@-mention, run -f, a command's @file) loses its bytes", async () => {
      await using box = await session()
      const file = path.join(box.dir, "secrets/board.png")
      const data = `data:image/png;base64,${png(SECRET).toString("base64")}`
      // 1.18.x: the read tool's attachment, marked synthetic, after the preamble and the read output.
      const synthetic = await send(box.s, [
        { type: "text", text: "Describe the board in @secrets/board.png" },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: file })}` },
        { type: "text", synthetic: true, text: "Image read successfully" },
        { type: "file", synthetic: true, mime: "image/png", filename: "board.png", url: data },
      ])
      expect(textOf(synthetic)).not.toContain(SECRET)
      // A file: part whose mime is not text/plain: the preamble, then the file part itself carrying the bytes.
      const plain = await send(box.s, [
        { type: "text", text: "Describe the board" },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}{"filePath":"${file}"}` },
        { type: "file", mime: "image/png", filename: "board.png", url: data, source: { type: "file", path: file } },
      ])
      expect(textOf(plain)).not.toContain(SECRET)
      // A source path as written in the mention (relative to the worktree, which may not be the project folder) that
      // names nothing here, beside a file: URL of the protected file: either name is enough.
      const mentioned = await send(box.s, [
        { type: "text", text: "Describe @board.png" },
        {
          type: "file",
          mime: "image/png",
          url: `file://${file}`,
          source: { type: "file", path: "elsewhere/board.png" },
        },
      ])
      expect(mentioned[1].mime).toBe("text/plain")
    })

    test("AS3 a text file of an llm-protected folder attached as a data URL (run --attach -f: only its base name) loses its content", async () => {
      await using box = await session()
      const parts = await send(box.s, [
        { type: "text", text: "summarise the attached notes" },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: "pin.txt" })}` },
        { type: "text", synthetic: true, text: `${SECRET}\n` },
        {
          type: "file",
          mime: "text/plain",
          filename: "pin.txt",
          url: `data:text/plain;base64,${Buffer.from(`${SECRET}\n`).toString("base64")}`,
        },
      ])
      expect(textOf(parts)).not.toContain(SECRET)
    })

    test("AS3b an editor's embedded resource (ACP) of an llm-protected file loses its content", async () => {
      await using box = await session()
      const parts = await send(box.s, [
        { type: "text", text: "summarise the attached notes" },
        { type: "text", text: `[${path.join(box.dir, "secrets/pin.txt")}]\n${SECRET}\n` },
      ])
      expect(textOf(parts)).not.toContain(SECRET)
      // OpenCode 1.2.15 passes the resource's text alone, with no path: a part that is the protected file's whole text.
      const bare = await send(box.s, [
        { type: "text", text: "summarise the attached notes" },
        { type: "text", text: `${SECRET}\n` },
      ])
      expect(textOf(bare)).not.toContain(SECRET)
      expect(bare[0].text).toBe("summarise the attached notes")
    })

    test("AS6/AS7 an instruction block of a linked AGENTS.md in the read output of an @-mentioned file leaves the prompt", async () => {
      await using box = await session()
      const guide = path.join(box.dir, "docs/guide.md")
      const parts = await send(box.s, [
        { type: "text", text: "Review @docs/guide.md" },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: guide })}` },
        {
          type: "text",
          synthetic: true,
          text: `<path>${guide}</path>\n<type>file</type>\n<content>\n1: # Guide\n2: Be nice.\n\n(End of file - total 2 lines)\n</content>\n\n<system-reminder>\nInstructions from: ${path.join(box.dir, "docs/AGENTS.md")}\n${SECRET}\n\n</system-reminder>`,
        },
        { type: "file", mime: "text/plain", filename: "docs/guide.md", url: `file://${guide}` },
      ])
      const text = textOf(parts)
      expect(text).toContain("Be nice.")
      expect(text).not.toContain(SECRET)
    })

    test("AS7b the read output of a file beside the user's own protected team/AGENTS.md loses that instruction block, the read kept", async () => {
      await using box = await session()
      const notes = path.join(box.dir, "team/notes.txt")
      const parts = await send(box.s, [
        { type: "text", text: "Review @team/notes.txt" },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: notes })}` },
        {
          type: "text",
          synthetic: true,
          text: `<path>${notes}</path>\n<content>\n1: team notes anyone may read\n</content>\n\n<system-reminder>\nInstructions from: ${path.join(box.dir, "team/AGENTS.md")}\n# Team rules\nThe team deploy password is Wm4Tq9Zs2Lp8Xv6N.\n\n</system-reminder>`,
        },
      ])
      const text = textOf(parts)
      expect(text).toContain("team notes anyone may read")
      expect(text).toContain("[REDACTED: instructions from")
      expect(text).not.toContain("Wm4Tq9Zs2Lp8Xv6N")
    })

    test("AS1/AS6 a prompt stored without chat.message (before the policy) is redacted by the messages transform alone, the stored parts left", async () => {
      await using box = await session()
      const guide = path.join(box.dir, "docs/guide.md")
      const file = path.join(box.dir, "secrets/board.png")
      const parts = [
        { type: "text", text: "Review @docs/guide.md and the board" },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: guide })}` },
        {
          type: "text",
          synthetic: true,
          text: `<content>\n1: # Guide\n</content>\n\n<system-reminder>\nInstructions from: ${path.join(box.dir, "docs/AGENTS.md")}\n${SECRET}\n\n</system-reminder>`,
        },
        {
          type: "file",
          mime: "image/png",
          url: `data:image/png;base64,${png(SECRET).toString("base64")}`,
          source: { type: "file", path: file },
        },
      ]
      const stored = structuredClone(parts)
      const messages: any[] = [{ info: { role: "user", id: "msg_old" }, parts }]
      await box.s.hooks["experimental.chat.messages.transform"]({}, { messages })
      expect(textOf(messages[0].parts)).not.toContain(SECRET)
      expect(textOf(messages[0].parts)).toContain("# Guide")
      expect(parts).toEqual(stored)
    })

    test("AS-controls what an ordinary file brings into a prompt is kept: its image, its base name, its embedded resource", async () => {
      await using box = await session()
      fs.writeFileSync(path.join(box.dir, "docs/logo.png"), png("an ordinary logo"))
      const logo = path.join(box.dir, "docs/logo.png")
      const data = `data:image/png;base64,${png("an ordinary logo").toString("base64")}`
      const parts = await send(box.s, [
        { type: "text", text: "look" },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: logo })}` },
        { type: "file", synthetic: true, mime: "image/png", filename: "logo.png", url: data },
        { type: "text", synthetic: true, text: `${OpenCode.READ_PREAMBLE}${JSON.stringify({ filePath: "guide.md" })}` },
        { type: "text", synthetic: true, text: "# Guide\nBe nice.\n" },
        {
          type: "file",
          mime: "text/plain",
          filename: "guide.md",
          url: `data:text/plain;base64,${Buffer.from("# Guide\nBe nice.\n").toString("base64")}`,
        },
        { type: "text", text: `[${path.join(box.dir, "docs/guide.md")}]\n# Guide\nBe nice.\n` },
      ])
      expect(parts[2].url).toBe(data)
      expect(parts[2].mime).toBe("image/png")
      expect(parts[4].text).toBe("# Guide\nBe nice.\n")
      expect(parts[6].text).toContain("Be nice.")
    })

    for (const [kind, file, name] of [
      ["command", ".opencode/command/vault-cmd.md", "vault-cmd"],
      ["skill", ".opencode/skill/vault/SKILL.md", "vault"],
    ] as const)
      test(`AS8 a viewer running an admin-only ${kind} (its file llm-denied) sends none of its text`, async () => {
        const policy = {
          ...REDTEAM_POLICY,
          rules: [
            ...REDTEAM_POLICY.rules,
            {
              pattern: ".opencode/command/vault-cmd.md",
              type: "file",
              deniedOperations: ["read", "llm"],
              allowedRoles: ["admin"],
            },
          ],
        }
        await using dir = await redteamProject(
          {
            ".opencode/command/vault-cmd.md": `---\ndescription: open the vault\n---\nThe vault phrase is: ${SECRET}.\n`,
          },
          policy,
        )
        const s = await open(route, dir.path)
        try {
          const text = fs.readFileSync(path.join(dir.path, file), "utf8").replace(/^---[\s\S]*?---\n/, "")
          const parts: any[] = [
            { type: "text", text },
            { type: "subtask", agent: "general", description: "vault", prompt: text },
          ]
          await s.hooks["command.execute.before"]({ command: name, sessionID: "ses_as8", arguments: "" }, { parts })
          const out = textOf(parts)
          expect(out).not.toContain(SECRET)
          expect(out).not.toContain("Sk7Vault3Qy9Lw2P")
          expect(out).toContain("REDACTED")
          // An ordinary command keeps its text.
          const plain: any[] = [{ type: "text", text: "Write notes as bullet points." }]
          await s.hooks["command.execute.before"](
            { command: "open-notes", sessionID: "ses_as8", arguments: "" },
            { parts: plain },
          )
          expect(plain[0].text).toBe("Write notes as bullet points.")
        } finally {
          await s.close()
        }
      })

    test("AS5 a command template the agent writes or changes to @-mention a read-denied file is moved aside; the user's own is kept", async () => {
      const policy = {
        ...REDTEAM_POLICY,
        rules: [
          ...REDTEAM_POLICY.rules,
          { pattern: "private/**", type: "directory", deniedOperations: ["read"], allowedRoles: [] },
        ],
      }
      await using dir = await redteamProject(
        {
          "private/plan.txt": `${SECRET}\n`,
          ".opencode/command/mine.md": "---\ndescription: the user's own\n---\nSummarise @private/plan.txt\n",
          ".opencode/command/notes.md": "---\ndescription: notes\n---\nSummarise @team/notes.txt\n",
        },
        policy,
      )
      const s = await open(route, dir.path)
      try {
        const file = path.join(dir.path, ".opencode/command/standup.md")
        const wrote = await s.call("write", {
          filePath: file,
          content: "---\ndescription: daily standup\n---\nSummarise today's plan from @private/plan.txt\n",
        })
        expect(wrote.output).toContain("gained an @file reference to private/plan.txt")
        expect(fs.existsSync(file)).toBe(false)
        // A change of an existing template: its previous content is put back.
        const notes = path.join(dir.path, ".opencode/command/notes.md")
        const changed = await s.call("edit", {
          filePath: notes,
          oldString: "@team/notes.txt",
          newString: "@private/plan.txt",
        })
        expect(changed.output).toContain("gained an @file reference")
        expect(fs.readFileSync(notes, "utf8")).toContain("@team/notes.txt")
        // The shell: a template written by a command is checked the same way.
        const shell = await s.bash(`printf 'Plan: @private/plan.txt\\n' > .opencode/command/plan.md`)
        expect(shell.output).toContain("gained an @file reference")
        expect(fs.existsSync(path.join(dir.path, ".opencode/command/plan.md"))).toBe(false)
        // What the agent may read, and the user's own template, stay.
        const fine = await s.call("write", {
          filePath: path.join(dir.path, ".opencode/command/ok.md"),
          content: "Summarise @team/notes.txt\n",
        })
        expect(fine.output).not.toContain("gained")
        expect(fs.existsSync(path.join(dir.path, ".opencode/command/ok.md"))).toBe(true)
        expect(fs.existsSync(path.join(dir.path, ".opencode/command/mine.md"))).toBe(true)
      } finally {
        await s.close()
      }
    })
  })
}
