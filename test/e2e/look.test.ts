import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

// A complete 1×1 PNG and GIF; their base64 is what a request carrying the image contains.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
)
// Trailing bytes after the GIF's end make image_data long enough (over 256 characters) for look_at to shorten.
const GIF = Buffer.concat([
  Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64"),
  Buffer.alloc(300, 0x3b),
])
const PDF = Buffer.from(
  "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n",
)
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><text>SVG-GATEWAY-LABEL</text></svg>\n'
const B64 = { png: PNG.toString("base64"), gif: GIF.toString("base64"), pdf: PDF.toString("base64") }
/** Requests without tools get the model server's fixed reply: the child call's answer. */
const CHILD_ANSWER = "Scripted session"
const TIMEOUT = { timeout: 240_000 }

/** A provider on the scripted server with a vision model and a text-only one (no modalities declared). */
function provider(server: ModelServer.Instance) {
  return {
    vision: {
      npm: "@ai-sdk/openai-compatible",
      name: "Vision test provider",
      options: { baseURL: server.url, apiKey: "scripted" },
      models: {
        eye: {
          name: "Eye",
          tool_call: true,
          attachment: true,
          modalities: { input: ["text", "image", "pdf"], output: ["text"] },
          limit: { context: 200_000, output: 8_192 },
        },
        blind: { name: "Blind", tool_call: true, limit: { context: 200_000, output: 8_192 } },
      },
    },
  }
}

const FILES = { "shots/screen.png": PNG, "docs/spec.pdf": PDF, "docs/arch.svg": SVG }
const carrying = (server: ModelServer.Instance, b64: string) => server.requests.filter((r) => r.raw.includes(b64))

for (const target of targets()) {
  describe(`look_at on stock opencode ${target.label}`, () => {
    test(
      "a vision model: the image goes out in exactly one request (the child call, no tools); the conversation stays text-only",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("look_at", { file_path: "shots/screen.png", goal: "What does the screen show?" }),
          ModelServer.call("look_at", { image_data: `data:image/png;base64,${B64.gif}`, goal: "Which colour?" }),
          ModelServer.call("look_at", { file_path: "docs/arch.svg", goal: "Which labels?" }),
          ModelServer.call("look_at", { file_path: "docs/spec.pdf", goal: "Summarise the spec" }),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: FILES,
          config: { provider: provider(server), model: "vision/eye", small_model: "vision/eye" },
        })
        try {
          const result = await Harness.run(project, server, "Look at the screenshot")
          expect(result.exitCode).toBe(0)
          const looks = result.tools.filter((t) => t.tool === "look_at")
          // 1.2.15 and 1.18 differ in two ways seen here: the AI SDK's OpenAI-compatible provider of 1.2.15 cannot
          // send a PDF file part (1.18's sends it as file_data), and 1.2.15 stores the tool call's arguments as the
          // tool left them (see image_data below).
          const v12 = (await Harness.version(target.bin)).startsWith("1.2.")
          const pdfSupported = !v12
          expect(looks.map((t) => t.status)).toEqual([
            "completed",
            "completed",
            "completed",
            pdfSupported ? "completed" : "error",
          ])
          expect(looks[0].output).toBe(
            `look_at shots/screen.png (image/png, 0.1 KB), analysed by vision/eye:\n\n${CHILD_ANSWER}`,
          )
          expect(looks[1].output).toStartWith("look_at image_data (image/gif, ")
          expect(looks[2].output).toStartWith("look_at docs/arch.svg (image/svg+xml, ")

          // Exactly one request carried the PNG: the child call, made without tools, to the vision model.
          const png = carrying(server, B64.png)
          expect(png).toHaveLength(1)
          expect(png[0].agentTurn).toBe(false)
          expect(png[0].body.model).toBe("eye")
          expect(png[0].raw).toContain("What does the screen show?")
          expect(png[0].raw).toContain("image_url")
          // The SVG went as text to one child request.
          expect(server.requests.filter((r) => !r.agentTurn && r.raw.includes("SVG-GATEWAY-LABEL"))).toHaveLength(1)

          // The PDF: one child request carrying it (file_data), or the provider's clear refusal and none.
          const pdf = carrying(server, B64.pdf)
          if (pdfSupported) {
            expect(looks[3].output).toStartWith("look_at docs/spec.pdf (application/pdf, ")
            expect(pdf).toHaveLength(1)
            expect(pdf[0].agentTurn).toBe(false)
          } else {
            expect(looks[3].error).toContain("vision/eye failed: ")
            expect(looks[3].error).toContain("application/pdf")
            expect(pdf).toHaveLength(0)
          }

          // The parent conversation: text only, no image part, no PNG bytes, in any of its requests.
          const turns = server.turns()
          expect(turns).toHaveLength(5)
          expect(server.overruns).toBe(0)
          for (const turn of turns) {
            expect(turn.raw).not.toContain(B64.png)
            expect(turn.raw).not.toContain("image_url")
            expect(turn.raw).not.toContain(B64.pdf)
            expect(turn.raw).not.toContain("file_data")
          }
          expect(turns[1].raw).toContain(CHILD_ANSWER)
          // image_data came from the model itself, in its tool call. 1.2.15 stores the argument object look_at
          // shortened; 1.18 stores the call as the model sent it, and the layer's messages transform shortens it in
          // every later request (LookTool.forget). Either way later requests carry a short note, not the bytes.
          expect(carrying(server, B64.gif).filter((r) => !r.agentTurn)).toHaveLength(1)
          const later = turns.slice(2).map((t) => t.raw.includes(B64.gif))
          expect(later).toEqual(later.map(() => false))
          for (const turn of turns.slice(2))
            expect(turn.raw).toContain("[image/gif, 0.3 KB: given to look_at, not kept here]")
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    // Tester RX's RX3: a design tool's SVG export holds its pictures as base64 data URIs; they were sent as text.
    test(
      "an SVG's embedded raster images go to the vision model as image parts in the child call, not as text",
      async () => {
        const svg =
          '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n' +
          "  <text>BANNER-LABEL</text>\n" +
          `  <image width="10" height="10" xlink:href="data:image/png;base64,${B64.png}"/>\n` +
          `  <image width="10" height="10" href="data:image/gif;base64,${B64.gif}"/>\n</svg>\n`
        const server = ModelServer.start([
          ModelServer.call("look_at", { file_path: "img/banner.svg", goal: "What does the banner show?" }),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: { "img/banner.svg": svg },
          config: { provider: provider(server), model: "vision/eye", small_model: "vision/eye" },
        })
        try {
          const result = await Harness.run(project, server, "Look at the banner")
          expect(result.exitCode).toBe(0)
          const [look] = result.tools.filter((t) => t.tool === "look_at")
          expect(look.status).toBe("completed")
          expect(look.output).toStartWith("look_at img/banner.svg (image/svg+xml, ")
          expect(look.output).toContain("[SVG: 2 of 2 embedded images sent as images (image/png, image/gif)]")
          // One child request (no tools) carries the SVG's text with placeholders and both images as image parts.
          const child = server.requests.filter((r) => !r.agentTurn && r.raw.includes("BANNER-LABEL"))
          expect(child).toHaveLength(1)
          expect(child[0].raw).toContain("[embedded image 1: image/png, 0.1 KB, sent as an image part]")
          expect(child[0].raw).toContain("[embedded image 2: image/gif, 0.3 KB, sent as an image part]")
          const images = JSON.stringify(child[0].body.messages)
            .match(/"url":"data:image\/(png|gif);base64,[^"]*"/g)
            ?.map((u) => u.slice(7, 21))
          expect(images).toEqual(["data:image/png", "data:image/gif"])
          expect(carrying(server, B64.png)).toEqual(child)
          // The parent conversation: text only.
          for (const turn of server.turns()) {
            expect(turn.raw).not.toContain(B64.png)
            expect(turn.raw).not.toContain("image_url")
          }
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      "a text-only model: a clear error naming it and zero requests carrying the image; a configured fallback model is used instead",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("look_at", { file_path: "shots/screen.png", goal: "What does the screen show?" }),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: FILES,
          config: { provider: provider(server), model: "vision/blind", small_model: "vision/blind" },
        })
        try {
          const result = await Harness.run(project, server, "Look at the screenshot")
          expect(result.exitCode).toBe(0)
          const [look] = result.tools
          expect(look.tool).toBe("look_at")
          expect(look.status).toBe("error")
          expect(look.error).toContain(
            "look_at: the current model vision/blind does not accept image input, so no model was called.",
          )
          expect(carrying(server, B64.png)).toHaveLength(0)
          expect(server.requests.filter((r) => !r.agentTurn && r.raw.includes("What does the screen show?"))).toEqual(
            [],
          )
          expect(server.turns()).toHaveLength(2)
          const part = result.events.find((e) => e.part?.tool === "look_at" && e.part?.state?.status === "error")?.part
          const ms = part?.state?.time ? part.state.time.end - part.state.time.start : NaN
          console.log(`[look_at e2e ${target.label}] capability refusal, tool time as OpenCode recorded it: ${ms} ms`)
        } finally {
          server.stop()
        }

        const again = ModelServer.start([
          ModelServer.call("look_at", { file_path: "shots/screen.png", goal: "What does the screen show?" }),
          ModelServer.text("done"),
        ])
        await using fallback = await Harness.project({
          bin: target.bin,
          files: { ...FILES, ".opencode/opencode-builtins.json": JSON.stringify({ lookAt: { model: "vision/eye" } }) },
          config: { provider: provider(again), model: "vision/blind", small_model: "vision/blind" },
        })
        try {
          const result = await Harness.run(fallback, again, "Look at the screenshot")
          expect(result.exitCode).toBe(0)
          expect(result.tools[0].output).toBe(
            `look_at shots/screen.png (image/png, 0.1 KB), analysed by vision/eye:\n\n${CHILD_ANSWER}`,
          )
          const png = carrying(again, B64.png)
          expect(png).toHaveLength(1)
          expect(png[0].body.model).toBe("eye")
          for (const turn of again.turns()) expect(turn.body.model).toBe("blind")
        } finally {
          again.stop()
        }
      },
      TIMEOUT,
    )
  })
}

// Red team CE-5: OpenCode killed while look_at's child model call is in flight. The child session holds the image as
// a file part; LookClient deletes it in a `finally` that never runs after SIGKILL. The call's record in the project's
// local state (LookOrphans) lets the next start delete it.

/** A distinctive PNG: a valid header followed by a marker the storage can be searched for. */
const MARK = "CE5-IMAGE-BYTES-" + "Q".repeat(64)
const MARKED_PNG = Buffer.concat([
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    "base64",
  ),
  Buffer.from(MARK),
])

function grepTree(dir: string, needle: string): string[] {
  const hits: string[] = []
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) hits.push(p)
    }
  }
  if (fs.existsSync(dir)) walk(dir)
  return hits
}

/** Stored child sessions (those with a parent): OpenCode 1.18's SQLite database, or 1.2.15's JSON storage. */
function childSessions(data: string): string[] {
  const db = path.join(data, "opencode/opencode.db")
  if (fs.existsSync(db)) {
    const { Database } = require("bun:sqlite")
    const conn = new Database(db, { readonly: true })
    try {
      return conn
        .query("select id from session where parent_id is not null")
        .all()
        .map((r: any) => r.id)
    } finally {
      conn.close()
    }
  }
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (p.includes(`${path.sep}session${path.sep}`) && e.name.endsWith(".json")) {
        const info = JSON.parse(fs.readFileSync(p, "utf8"))
        if (info?.parentID && typeof info.id === "string" && info.id.startsWith("ses_")) out.push(info.id)
      }
    }
  }
  if (fs.existsSync(data)) walk(data)
  return out
}

for (const target of targets()) {
  describe(`look_at on stock opencode ${target.label}: a crash during the child call`, () => {
    test("CE-5 OpenCode killed during look_at's child call: the next start deletes the child session that held the image", async () => {
      // The vision model's server never answers: the child call is in flight when OpenCode is killed.
      const hung: Request[] = []
      const slow = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch(req) {
          hung.push(req)
          return new Promise<Response>(() => {})
        },
      })
      const server = ModelServer.start([
        ModelServer.call("look_at", { file_path: "shot.png", goal: "What is it?" }),
        ModelServer.text("done"),
      ])
      await using project = await Harness.project({
        bin: target.bin,
        files: {
          "shot.png": MARKED_PNG,
          ".opencode/opencode-builtins.json": JSON.stringify({ lookAt: { model: "slow/eye" } }),
        },
        config: {
          provider: {
            slow: {
              npm: "@ai-sdk/openai-compatible",
              name: "Slow vision",
              options: { baseURL: `http://127.0.0.1:${slow.port}/v1`, apiKey: "x" },
              models: {
                eye: {
                  name: "Eye",
                  tool_call: true,
                  attachment: true,
                  modalities: { input: ["text", "image"], output: ["text"] },
                  limit: { context: 200_000, output: 8_192 },
                },
              },
            },
          },
        },
      })
      try {
        const killed = await Harness.run(project, server, "look at shot.png", {
          timeoutMs: 120_000,
          killWhen: () => hung.length > 0,
        })
        expect(hung.length).toBeGreaterThan(0)
        expect(killed.exitCode).not.toBe(0)
        const data = project.env.XDG_DATA_HOME
        const b64 = MARKED_PNG.toString("base64")
        const before = grepTree(data, MARK).concat(grepTree(data, b64.slice(40, 120)))
        console.log(`${target.label}: after the kill, files holding the image: ${before.join(", ") || "none"}`)
        // The next start of OpenCode in the project (the recovery scan runs, a new turn is taken).
        const again = await Harness.run(project, server, "hello", { timeoutMs: 120_000 })
        expect(again.exitCode).toBe(0)
        const after = grepTree(data, MARK).concat(grepTree(data, b64.slice(40, 120)))
        console.log(`${target.label}: after the next run, files holding the image: ${after.join(", ") || "none"}`)
        const children = childSessions(data)
        console.log(`${target.label}: stored child sessions after the next run: ${children.join(", ") || "none"}`)
        // Before: the look_at child session (its user message carries the image as a file part) stayed stored.
        expect(children).toEqual([])
        expect(fs.readdirSync(path.join(project.dir, ".opencode/builtins-local/look-at"))).toEqual([])
      } finally {
        server.stop()
        slow.stop(true)
      }
    }, 300_000)
  })
}
