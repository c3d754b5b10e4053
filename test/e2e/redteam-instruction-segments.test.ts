/**
 * Text OpenCode copies from a file into model-bound text outside the read tool's own output (red team GA1, GA4):
 * the instruction files it appends to a read and puts in the system prompt (`Instructions from: <path>`), here an
 * `AGENTS.md` the agent made a link to a file with a `read`-only segment, and a user's selection (a file part with a
 * line range) inside a segment, read with offset/limit so the text holds no marker line. The segment's lines must not
 * reach the model; the rest of the block keeps its shape (the instruction block is still there, the lines outside the
 * segment too).
 */
import { describe, expect, test } from "bun:test"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { Serve } from "./serve"
import { SEGMENTED_CONFIG as CONFIG, segmentPolicy as policy } from "./segment-policy"
import { targets } from "./targets"

for (const target of targets()) {
  describe(`instruction blocks and selections on stock opencode ${target.label}`, () => {
    test("the root AGENTS.md linked to a file with a read-only segment: the system prompt keeps the block without the segment", async () => {
      const server = ModelServer.start([
        ModelServer.call("bash", {
          command: 't=$(printf "src/con%sfig.ts" ""); ln -s "$t" AGENTS.md && ls -la',
          description: "link the rules",
        }),
        ModelServer.text("Linked."),
        ModelServer.text("Hello."),
      ])
      await using project = await Harness.project({
        bin: target.bin,
        files: { ".opencode-security.json": JSON.stringify(policy(["read"]), null, 2), "src/config.ts": CONFIG },
      })
      try {
        await Harness.run(project, server, "link the rules")
        await Harness.run(project, server, "hello")
        const last = server.requests.at(-1)!.raw
        // The block is in the last request's system prompt, its lines outside the segment too: placed, not removed.
        expect(last).toContain("Instructions from: ")
        expect(last).toContain("export const b = 2")
        expect(last).toContain("[REDACTED: protected segment]")
        const all = server.requests.map((r) => r.raw).join("\n")
        expect(all).not.toContain("Q7x9W")
        expect(all).not.toContain("cost plus nine")
      } finally {
        server.stop()
      }
    }, 240_000)

    test("a folder AGENTS.md linked to a file with a read-only segment, appended to a read beside it", async () => {
      const dirOf = (raw: string) => raw.match(/Working directory: ([^\\"]+)/)![1]
      const server = ModelServer.start([
        ModelServer.call("bash", {
          command: 't=$(printf "../src/con%sfig.ts" ""); ln -s "$t" notes/AGENTS.md',
          description: "link the notes rules",
        }),
        ModelServer.dynamic((r) => ModelServer.call("read", { filePath: dirOf(r.raw) + "/notes/guide.md" })),
        ModelServer.text("Done."),
      ])
      await using project = await Harness.project({
        bin: target.bin,
        files: {
          ".opencode-security.json": JSON.stringify(policy(["read"]), null, 2),
          "notes/guide.md": "# Guide\nBe nice.\n",
          "src/config.ts": CONFIG,
        },
      })
      try {
        await Harness.run(project, server, "read the notes guide")
        const last = server.requests.at(-1)!.raw
        expect(last).toContain("Be nice.")
        expect(last).toContain("export const b = 2")
        const all = server.requests.map((r) => r.raw).join("\n")
        expect(all).not.toContain("Q7x9W")
        expect(all).not.toContain("cost plus nine")
      } finally {
        server.stop()
      }
    }, 240_000)

    test("GD1 an AGENTS.md in a folder named with a line break (src<newline>q), linked to that file: the block goes whole", async () => {
      const dirOf = (raw: string) => raw.match(/Working directory: ([^\\"]+)/)![1]
      const server = ModelServer.start([
        ModelServer.call("bash", {
          command: `d=$(printf 'src\\nq'); mkdir "$d"; echo guide-text > "$d/guide.md"; t=$(printf "../src/con%sfig.ts" ""); ln -s "$t" "$d/AGENTS.md"; ls`,
          description: "make notes",
        }),
        ModelServer.dynamic((r) => ModelServer.call("read", { filePath: dirOf(r.raw) + "/src\nq/guide.md" })),
        ModelServer.text("Done."),
      ])
      await using project = await Harness.project({
        bin: target.bin,
        files: { ".opencode-security.json": JSON.stringify(policy(["read"]), null, 2), "src/config.ts": CONFIG },
      })
      try {
        await Harness.run(project, server, "read the guide")
        const all = server.requests.map((r) => r.raw).join("\n")
        // The read itself reached the model; the block OpenCode appended for the linked AGENTS.md did not.
        expect(all).toContain("guide-text")
        expect(all).not.toContain("Q7x9W")
        expect(all).not.toContain("cost plus nine")
      } finally {
        server.stop()
      }
    }, 240_000)

    test("a selection inside a read + llm segment, attached as a file part with a line range", async () => {
      const server = ModelServer.start([ModelServer.text("It sets a pin."), ModelServer.text("ok")])
      await using project = await Harness.project({
        bin: target.bin,
        files: {
          ".opencode-security.json": JSON.stringify(policy(["read", "llm"]), null, 2),
          "src/config.ts": "export const a = 1\n// @secure-start\npin=Q7x9W\n// @secure-end\nexport const b = 2\n",
        },
      })
      try {
        await using serve = await Serve.start(project, server)
        const id = await serve.createSession()
        const file = path.join(project.dir, "src/config.ts")
        const res = await fetch(`${serve.url}/session/${id}/prompt_async`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            parts: [
              { type: "text", text: "what does this line do?" },
              { type: "file", mime: "text/plain", url: `file://${file}?start=3&end=4`, filename: "config.ts" },
            ],
          }),
        })
        expect(res.ok).toBe(true)
        await serve.waitFor(
          async () => server.requests.some((r) => r.raw.includes("what does this line do")) && !(await serve.busy(id)),
          60_000,
        )
        const all = server.requests.map((r) => r.raw).join("\n")
        expect(all).toContain("what does this line do")
        expect(all).toContain("// @secure-end")
        expect(all).not.toContain("Q7x9W")
      } finally {
        server.stop()
      }
    }, 240_000)
  })
}
