import { describe, expect, test } from "bun:test"
import { createOpencodeClient } from "@opencode-ai/sdk"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const HEADER = "README from: "
const FILES: Record<string, string> = {
  "README.md": "# Root\nROOT-README\n",
  "AGENTS.md": "ROOT-AGENTS\n",
  "pkg/README.md": "# pkg\nPKG-README\n",
  "pkg/a/README.md": "# a\nA-README\n",
  "pkg/a/AGENTS.md": "A-AGENTS\n",
  "pkg/b/README.md": "# b\nB-README\n",
  "pkg/secret/README.md": "# secret\nSECRET-README\n",
  "pkg/secret/s.ts": "export const s = 1\n",
  "pkg/big/README.md": Array.from({ length: 3000 }, (_, i) => `BIG line ${i} of a very long README`).join("\n"),
  "pkg/big/g.ts": "export const g = 1\n",
  ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`pkg/a/f${i}.ts`, `export const f${i} = ${i}\n`])),
  ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`pkg/b/g${i}.ts`, `export const g${i} = ${i}\n`])),
  ".opencode-security.json": JSON.stringify({
    version: "1.0",
    rules: [{ pattern: "pkg/secret/README.md", type: "file", deniedOperations: ["read", "llm"] }],
  }),
}
const TIMEOUT = { timeout: 240_000 }

const count = (text: string, needle: string) => text.split(needle).length - 1
const read = (dir: string, rel: string, extra: { offset?: number; limit?: number } = {}) => ({
  name: "read",
  args: { filePath: path.join(dir, rel), ...extra },
})
/** The system messages of a request, as sent. */
const system = (r: ModelServer.RecordedRequest) =>
  JSON.stringify(r.body.messages.filter((m: any) => m.role === "system"))

for (const target of targets()) {
  describe(`README injection on stock opencode ${target.label}`, () => {
    test(
      "a 30-read session: one block per folder README (parallel reads included), the root README and AGENTS.md never through read, OpenCode's own AGENTS.md block once, protected README never, long README cut, system prompt byte-identical",
      async () => {
        await using project = await Harness.project({ bin: target.bin, files: FILES })
        const d = project.dir
        const steps: ModelServer.Step[] = [
          ModelServer.calls(read(d, "pkg/a/f0.ts"), read(d, "pkg/a/f1.ts")), // one step, two reads in parallel
          ...[2, 3, 4, 5, 6, 7, 8, 9].map((i) => ModelServer.calls(read(d, `pkg/a/f${i}.ts`))),
          ...[0, 1, 2, 3, 4].map((i) => ModelServer.calls(read(d, `pkg/b/g${i}.ts`))),
          ModelServer.calls(read(d, "pkg/secret/s.ts")),
          ModelServer.calls(read(d, "pkg/secret/s.ts")),
          ModelServer.calls(read(d, "pkg/big/g.ts")),
          ModelServer.calls(read(d, "pkg/big/g.ts")),
          ...Array.from({ length: 11 }, (_, i) =>
            ModelServer.calls(read(d, i % 2 ? `pkg/b/g${i % 5}.ts` : `pkg/a/f${i % 10}.ts`)),
          ),
          ModelServer.text("done"),
        ]
        const server = ModelServer.start(steps)
        try {
          const result = await Harness.run(project, server, "Read the package files", { timeoutMs: 200_000 })
          expect(result.exitCode).toBe(0)
          const reads = result.tools.filter((t) => t.tool === "read")
          expect(reads).toHaveLength(30)
          expect(reads.every((t) => t.status === "completed")).toBe(true)
          const outputs = reads.map((t) => t.output)
          const all = outputs.join("\n")

          // Our blocks: exactly one per folder README, in the first read of its folder.
          const a = path.join(d, "pkg/a/README.md")
          expect(count(all, HEADER + a + "\n")).toBe(1)
          expect(count(all, HEADER + path.join(d, "pkg/README.md") + "\n")).toBe(1)
          expect(count(all, HEADER + path.join(d, "pkg/b/README.md") + "\n")).toBe(1)
          expect(outputs[0].includes("A-README") !== outputs[1].includes("A-README")).toBe(true)
          expect(all).not.toContain("ROOT-README")
          expect(all).not.toContain("SECRET-README")
          expect(all).toContain(`[truncated at ~2000 tokens — read ${path.join(d, "pkg/big/README.md")} for the rest]`)
          expect(count(all, "BIG line 0 ")).toBe(1)

          // OpenCode's own instruction loader: pkg/a/AGENTS.md once through read, the root AGENTS.md never through
          // read (the system prompt carries it).
          expect(count(all, `Instructions from: ${path.join(d, "pkg/a/AGENTS.md")}\n`)).toBe(1)
          expect(all).not.toContain("ROOT-AGENTS")

          const turns = server.turns()
          expect(turns).toHaveLength(steps.length)
          expect(server.overruns).toBe(0)
          const last = turns.at(-1)!.raw
          // What the model is finally sent: every block once, never the protected or root README.
          expect(count(last, "A-README")).toBe(1)
          expect(count(last, "PKG-README")).toBe(1)
          expect(count(last, "B-README")).toBe(1)
          expect(count(last, "A-AGENTS")).toBe(1)
          for (const r of server.requests) {
            expect(r.raw).not.toContain("SECRET-README")
            expect(r.raw).not.toContain("ROOT-README")
          }
          // The system prompt carries the root AGENTS.md and is byte-identical on every agent turn.
          expect(system(turns[0])).toContain("ROOT-AGENTS")
          for (const turn of turns) expect(system(turn)).toBe(system(turns[0]))
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      "a README read only in part (a limit before its end, or cut by OpenCode) is injected on the next read in its folder, once; one read whole is not",
      async () => {
        await using project = await Harness.project({ bin: target.bin, files: FILES })
        const d = project.dir
        const steps: ModelServer.Step[] = [
          ModelServer.calls(read(d, "pkg/b/README.md", { offset: 1, limit: 1 })), // "# b" only
          ModelServer.calls(read(d, "pkg/b/g0.ts")),
          ModelServer.calls(read(d, "pkg/b/g1.ts")),
          ModelServer.calls(read(d, "pkg/big/README.md")), // 3,000 lines: OpenCode stops at its 50 KB cap
          ModelServer.calls(read(d, "pkg/big/g.ts")),
          ModelServer.calls(read(d, "pkg/a/README.md", { offset: 1, limit: 50 })), // all of its 2 lines
          ModelServer.calls(read(d, "pkg/a/f0.ts")),
          ModelServer.text("done"),
        ]
        const server = ModelServer.start(steps)
        try {
          const result = await Harness.run(project, server, "Read the package files", { timeoutMs: 200_000 })
          expect(result.exitCode).toBe(0)
          const reads = result.tools.filter((t) => t.tool === "read")
          expect(reads.map((t) => t.status)).toEqual(Array(7).fill("completed"))
          const outputs = reads.map((t) => t.output)
          // OpenCode showed part of each: one line of pkg/b's, the big one's up to its cap.
          expect(outputs[0]).toContain("Use offset=2 to continue.")
          expect(outputs[0]).not.toContain("B-README")
          expect(/Use offset=\d+ to continue\./.test(outputs[3])).toBe(true)
          expect(outputs[3]).not.toContain("BIG line 2999 ")
          const b = HEADER + path.join(d, "pkg/b/README.md") + "\n"
          const big = HEADER + path.join(d, "pkg/big/README.md") + "\n"
          expect(outputs.map((o) => count(o, b))).toEqual([0, 1, 0, 0, 0, 0, 0])
          expect(outputs.map((o) => count(o, big))).toEqual([0, 0, 0, 0, 1, 0, 0])
          expect(outputs[4]).toContain(
            `[truncated at ~2000 tokens — read ${path.join(d, "pkg/big/README.md")} for the rest]`,
          )
          // Read whole: never injected after.
          expect(outputs[5]).toContain("2: A-README")
          expect(outputs[6]).not.toContain(HEADER)
          const last = server.turns().at(-1)!.raw
          expect(count(last, "B-README")).toBe(1)
          expect(count(last, "A-README")).toBe(1)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      "after a compaction the next read in the subtree injects the README again, once; readme.enabled false injects none",
      async () => {
        await using project = await Harness.project({ bin: target.bin, files: FILES })
        const d = project.dir
        const server = ModelServer.start([
          ModelServer.calls(read(d, "pkg/a/f0.ts")),
          ModelServer.calls(read(d, "pkg/a/f1.ts")),
          ModelServer.text("first done"),
        ])
        await using opencode = await serve(project, server)
        try {
          const client = createOpencodeClient({ baseUrl: opencode.url })
          const model = { providerID: Harness.PROVIDER, modelID: Harness.MODEL }
          const session = (await client.session.create({ body: {} })).data!
          await client.session.prompt({
            path: { id: session.id },
            body: { model, parts: [{ type: "text", text: "a" }] },
          })
          const compacted = await client.session.summarize({ path: { id: session.id }, body: model })
          expect(compacted.error).toBeUndefined()
          server.push(
            ModelServer.calls(read(d, "pkg/a/f2.ts")),
            ModelServer.calls(read(d, "pkg/a/f3.ts")),
            ModelServer.text("second done"),
          )
          await client.session.prompt({
            path: { id: session.id },
            body: { model, parts: [{ type: "text", text: "b" }] },
          })
          const messages = (await client.session.messages({ path: { id: session.id } })).data!
          const reads = messages.flatMap((m) => m.parts).filter((p: any) => p.type === "tool" && p.tool === "read")
          const outputs = reads.map((p: any) => (p.state.status === "completed" ? p.state.output : ""))
          expect(outputs.map((o) => o.includes("A-README"))).toEqual([true, false, true, false])
          expect(messages.some((m) => m.parts.some((p) => p.type === "compaction"))).toBe(true)
          // OpenCode's own AGENTS.md block comes back after the compaction as well.
          expect(outputs.map((o) => o.includes("A-AGENTS"))).toEqual([true, false, true, false])
          const last = server.turns().at(-1)!.raw
          expect(count(last, HEADER + path.join(d, "pkg/a/README.md"))).toBe(1)
        } finally {
          server.stop()
        }

        await using off = await Harness.project({
          bin: target.bin,
          files: { ...FILES, ".opencode/opencode-builtins.json": JSON.stringify({ readme: { enabled: false } }) },
        })
        const quiet = ModelServer.start([ModelServer.calls(read(off.dir, "pkg/a/f0.ts")), ModelServer.text("done")])
        try {
          const result = await Harness.run(off, quiet, "Read")
          expect(result.exitCode).toBe(0)
          expect(result.tools[0].output).toContain("A-AGENTS") // OpenCode's own, unaffected
          expect(result.tools[0].output).not.toContain(HEADER)
        } finally {
          quiet.stop()
        }
      },
      TIMEOUT,
    )
  })
}

/** `opencode serve` on a free port of 127.0.0.1 in the project, stopped when disposed. */
async function serve(project: Harness.Project, server: ModelServer.Instance) {
  const file = path.join(project.dir, "opencode.json")
  const config = JSON.parse(await Bun.file(file).text())
  config.provider = { ...config.provider, ...Harness.provider(server) }
  await Bun.write(file, JSON.stringify(config, null, 2))
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  const proc = Bun.spawn([project.bin, "serve", "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd: project.dir,
    env: { ...project.env, PWD: project.dir },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  })
  const stop = async () => {
    Harness.stopGroup(proc)
    await proc.exited
  }
  try {
    const reader = proc.stdout.getReader()
    let seen = ""
    const deadline = Date.now() + 60_000
    while (!seen.includes("listening on")) {
      if (Date.now() > deadline) throw new Error(`opencode serve did not start: ${seen}`)
      const { value, done } = await reader.read()
      if (done) throw new Error(`opencode serve exited: ${seen}${await new Response(proc.stderr).text()}`)
      seen += new TextDecoder().decode(value)
    }
    // Keep draining both pipes so the server never blocks on a full one.
    void (async () => {
      while (!(await reader.read().catch(() => ({ done: true }))).done);
    })()
    void new Response(proc.stderr).text().catch(() => {})
  } catch (error) {
    await stop()
    throw error
  }
  return { url: `http://127.0.0.1:${port}`, [Symbol.asyncDispose]: stop }
}
