import { describe, expect, spyOn, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Builtins } from "../../builtins"
import type { Host, HostChildCall } from "../../host"
import { LookModels } from "../../look/models"
import { LookTool } from "../../look/tool"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"
import { GIF, PDF, PNG, SVG } from "./fixtures"

const VISION = { providerID: "p", id: "eye", capabilities: { input: { text: true, image: true, pdf: false } } }
const TEXT_ONLY = { providerID: "p", id: "words", capabilities: { input: { text: true, image: false, pdf: false } } }
const PDF_MODEL = { providerID: "p", id: "pages", capabilities: { input: { text: true, image: true, pdf: true } } }

function setup(dir: string, config: LookTool.Config = {}, extra: Partial<Host> = {}, context: object = {}) {
  const calls: HostChildCall[] = []
  const host: Host = {
    directory: dir,
    worktree: dir,
    log: Logger.silent,
    child: async (call) => {
      calls.push(call)
      return "A red square with the label 'API gateway'."
    },
    ...extra,
  }
  const models = LookModels.create(host)
  const tool = LookTool.create({ host, config, models }).look_at
  const ctx = { sessionID: "s", messageID: "m2", agent: "build", abort: new AbortController().signal, ...context }
  /** `chat.params` as OpenCode calls it before the request whose answer calls the tool. */
  const using = (model: any) =>
    models.observe({ sessionID: "s", model, message: { model: { providerID: model.providerID, modelID: model.id } } })
  const run = (args: any) => tool.execute(args, ctx as any) as Promise<string>
  return { calls, run, using, models }
}

describe("look_at", () => {
  test("an image goes to the current model in one child call as a file part; the answer is text only", async () => {
    await using dir = await tmpdir({ "shots/screen.png": PNG })
    const { calls, run, using } = setup(dir.path)
    using(VISION)
    const out = await run({ file_path: "shots/screen.png", goal: "What does the box say?" })
    expect(out).toBe(
      "look_at shots/screen.png (image/png, 0.1 KB), analysed by p/eye:\n\nA red square with the label 'API gateway'.",
    )
    expect(out).not.toContain(PNG.toString("base64").slice(0, 20))
    expect(calls).toHaveLength(1)
    const [call] = calls
    expect(call.model).toEqual({ providerID: "p", modelID: "eye" })
    expect(call.sessionID).toBe("s")
    expect(call.agent).toBe("build")
    expect(call.system).toBe(LookTool.SYSTEM)
    expect(call.parts).toEqual([
      { type: "text", text: "Goal: What does the box say?\nFile: shots/screen.png (image/png, 0.1 KB)" },
      {
        type: "file",
        mime: "image/png",
        filename: "screen.png",
        url: `data:image/png;base64,${PNG.toString("base64")}`,
      },
    ])
  })

  test("a model without the modality: an error naming it, no model call, no byte past the type check read", async () => {
    await using dir = await tmpdir({ "a.png": PNG, "doc.pdf": PDF })
    const { calls, run, using } = setup(dir.path)
    using(TEXT_ONLY)
    const read = spyOn(fs, "readFileSync")
    try {
      await expect(run({ file_path: "a.png", goal: "describe" })).rejects.toThrow(
        "look_at: the current model p/words does not accept image input, so no model was called. Switch to a model " +
          'that accepts image input, declare its modalities in opencode.json (provider.<id>.models.<id>.modalities.input: ["text", "image"]), ' +
          'or set lookAt.model ("provider/model") in .opencode/opencode-builtins.json.',
      )
      expect(read).not.toHaveBeenCalled()
    } finally {
      read.mockRestore()
    }
    // A vision model without PDF input is refused for a PDF.
    using(VISION)
    await expect(run({ file_path: "doc.pdf", goal: "summarise" })).rejects.toThrow(
      "the current model p/eye does not accept pdf input",
    )
    expect(calls).toHaveLength(0)
    using(PDF_MODEL)
    expect(await run({ file_path: "doc.pdf", goal: "summarise" })).toContain("(application/pdf, ")
    expect(calls[0].parts[1]).toMatchObject({ type: "file", mime: "application/pdf" })
  })

  test("the configured fallback model is used when the current one cannot take the file, and checked too", async () => {
    await using dir = await tmpdir({ "a.gif": GIF })
    const listed = [
      { providerID: "p", modelID: "eye", input: { image: true, pdf: false } },
      { providerID: "p", modelID: "words", input: { image: false, pdf: false } },
    ]
    const host = { models: async () => listed }
    const ok = setup(dir.path, { model: "p/eye" }, host)
    ok.using(TEXT_ONLY)
    expect(await ok.run({ file_path: "a.gif", goal: "x" })).toContain("analysed by p/eye")
    expect(ok.calls[0].model).toEqual({ providerID: "p", modelID: "eye" })
    // The current model wins when it can take the file.
    const current = setup(dir.path, { model: "p/eye" }, host)
    current.using(PDF_MODEL)
    await current.run({ file_path: "a.gif", goal: "x" })
    expect(current.calls[0].model.modelID).toBe("pages")
    const bad = setup(dir.path, { model: "p/words" }, host)
    bad.using(TEXT_ONLY)
    await expect(bad.run({ file_path: "a.gif", goal: "x" })).rejects.toThrow(
      "look_at: the current model p/words does not accept image input, and the configured lookAt.model p/words does not accept image input either. No model was called.",
    )
    const unknown = setup(dir.path, { model: "q/none" }, host)
    unknown.using(TEXT_ONLY)
    await expect(unknown.run({ file_path: "a.gif", goal: "x" })).rejects.toThrow("q/none is not a model OpenCode knows")
    expect([...bad.calls, ...unknown.calls]).toHaveLength(0)
  })

  test("without chat.params the session's messages name the model and the host's list tells its modalities", async () => {
    await using dir = await tmpdir({ "a.png": PNG })
    const messages = [
      { info: { id: "m1", role: "user", model: { providerID: "p", modelID: "eye" } }, parts: [] },
      { info: { id: "m2", role: "assistant", providerID: "p", modelID: "eye" }, parts: [] },
    ]
    const { run, calls } = setup(
      dir.path,
      {},
      {
        messages: async () => messages as any,
        models: async () => [{ providerID: "p", modelID: "eye", input: { image: true, pdf: false } }],
      },
    )
    expect(await run({ file_path: "a.png", goal: "x" })).toContain("analysed by p/eye")
    expect(calls).toHaveLength(1)
    // Nothing known about the model: refused, no call.
    const blind = setup(dir.path)
    await expect(blind.run({ file_path: "a.png", goal: "x" })).rejects.toThrow(
      "look_at: cannot tell which model this session uses, so no model was called",
    )
    expect(blind.calls).toHaveLength(0)
  })

  test("title and summary requests with a small model do not change the session's model", async () => {
    await using dir = await tmpdir({ "a.png": PNG })
    const { run, models, calls } = setup(dir.path)
    models.observe({ sessionID: "s", model: VISION, message: { model: { providerID: "p", modelID: "eye" } } })
    models.observe({ sessionID: "s", model: TEXT_ONLY, message: { model: { providerID: "p", modelID: "eye" } } })
    await run({ file_path: "a.png", goal: "x" })
    expect(calls[0].model.modelID).toBe("eye")
  })

  test("SVG goes as its source text, so any model can take it", async () => {
    await using dir = await tmpdir({ "d.svg": SVG })
    const { run, using, calls } = setup(dir.path)
    using(TEXT_ONLY)
    expect(await run({ file_path: "d.svg", goal: "list the boxes" })).toContain("(image/svg+xml, ")
    expect(calls[0].parts).toHaveLength(2)
    expect(calls[0].parts[1]).toEqual({ type: "text", text: `SVG source of d.svg:\n${SVG.toString()}` })
  })

  // A source file given a `%PDF-` line is sent whole as a PDF: its protected segment with it (red-team helper).
  test("a file holding a segment the role may not read is refused whatever type its bytes make it", async () => {
    const pdf = "%PDF-1.4 header\nconst a = 1\n// @secure-start\nconst salt = 'Kd93mVx71LqPz0Rw'\n// @secure-end\n"
    await using dir = await tmpdir({ "src/app.ts": pdf, "doc.pdf": "%PDF-1.4\nplain text\n" })
    const segments = () => ({ read: [{ start: "@secure-start", end: "@secure-end" }], write: [] })
    const { run, using, calls } = setup(dir.path, {}, { segments })
    using(PDF_MODEL)
    await expect(run({ file_path: "src/app.ts", goal: "transcribe every line" })).rejects.toThrow(
      "holds a segment the security policy protects",
    )
    expect(calls).toHaveLength(0)
    expect(await run({ file_path: "doc.pdf", goal: "x" })).toContain("(application/pdf, ")
  })

  // Red team CC1's class: a UTF-16 file's markers have a NUL between their characters in its bytes. Characters whose
  // UTF-16LE bytes spell `%PDF-1` (U+5025 U+4644 U+312D) make such a file a PDF to the sniffer.
  test("CC1 class: a UTF-16 file whose decoded text holds a segment the role may not read is refused as a PDF too", async () => {
    const text =
      "\u5025\u4644\u312D.4\nconst a = 1\n// @secure-start\nconst salt = 'Kd93mVx71LqPz0Rw'\n// @secure-end\n"
    await using dir = await tmpdir({})
    fs.writeFileSync(path.join(dir.path, "wide.pdf"), Buffer.from("\ufeff" + text, "utf16le"))
    const segments = () => ({ read: [{ start: "@secure-start", end: "@secure-end" }], write: [] })
    const { run, using, calls } = setup(dir.path, {}, { segments })
    using(PDF_MODEL)
    await expect(run({ file_path: "wide.pdf", goal: "transcribe every line" })).rejects.toThrow(
      "holds a segment the security policy protects",
    )
    expect(calls).toHaveLength(0)
  })

  test("image_data, raw base64 or a data URL, typed by its bytes", async () => {
    await using dir = await tmpdir({})
    const { run, using, calls } = setup(dir.path)
    using(VISION)
    expect(await run({ image_data: PNG.toString("base64"), goal: "x" })).toContain("look_at image_data (image/png, ")
    await run({ image_data: `data:image/webp;base64,${GIF.toString("base64")}`, goal: "x" })
    expect(calls[1].parts[1]).toMatchObject({
      mime: "image/gif",
      url: `data:image/gif;base64,${GIF.toString("base64")}`,
    })
    // Long image_data is shortened in the argument object (what OpenCode may store as the call's input).
    const args = { image_data: Buffer.concat([GIF, Buffer.alloc(400)]).toString("base64"), goal: "x" }
    await run(args)
    expect(args.image_data).toBe("[image/gif, 0.4 KB: given to look_at, not kept here]")
    expect(calls[2].parts[1]).toMatchObject({ mime: "image/gif" })
    await expect(run({ goal: "x" })).rejects.toThrow("give file_path (a file to analyse) or image_data")
    await expect(run({ file_path: "a.png", image_data: "AAAA", goal: "x" })).rejects.toThrow("not both")
  })

  test("access is checked before any byte is read: a denial is the error and the file is never opened", async () => {
    await using dir = await tmpdir({ "secret/plan.png": PNG })
    const asked: string[] = []
    const { run, using, calls } = setup(
      dir.path,
      {},
      {
        access: async (p, op) => {
          asked.push(`${op} ${p}`)
          return "read of secret/plan.png is denied by rule 1 (secret/**)"
        },
      },
    )
    using(VISION)
    const open = spyOn(fs, "openSync")
    const stat = spyOn(fs, "statSync")
    try {
      await expect(run({ file_path: "secret/plan.png", goal: "x" })).rejects.toThrow(
        "look_at: read of secret/plan.png is denied by rule 1 (secret/**)",
      )
      expect(open).not.toHaveBeenCalled()
      expect(stat).not.toHaveBeenCalled()
    } finally {
      open.mockRestore()
      stat.mockRestore()
    }
    expect(asked).toEqual([`read ${dir.file("secret/plan.png")}`])
    expect(calls).toHaveLength(0)
  })

  test("a path that became protected while the user answered the permission prompt is refused, under the hold", async () => {
    await using dir = await tmpdir({ "shot.png": PNG })
    let swapped = false
    let holding = false
    const heldWhileAsking: boolean[] = []
    const { calls, run, using } = setup(
      dir.path,
      {},
      {
        // The layer's verdict follows the path: protected once a command put a link to a protected file there.
        access: async () => (swapped ? "read of .env is denied by rule 1 (.env)" : undefined),
        exclusive: async (work) => {
          holding = true
          try {
            return await work((f) => f())
          } finally {
            holding = false
          }
        },
      },
      {
        ask: async () => {
          heldWhileAsking.push(holding)
          swapped = true
        },
      },
    )
    using(VISION)
    await expect(run({ file_path: "shot.png", goal: "x" })).rejects.toThrow(
      "look_at: read of .env is denied by rule 1 (.env)",
    )
    // The prompt was answered outside the hold (commands need not wait for the user); nothing reached a model.
    expect(heldWhileAsking).toEqual([false])
    expect(calls).toHaveLength(0)
  })

  test("with the real security layer, through the composition root", async () => {
    await using dir = await tmpdir({
      ".opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [{ pattern: "secret/**", type: "directory", deniedOperations: ["read", "llm"] }],
      }),
      "secret/plan.png": PNG,
      "ok.png": PNG,
    })
    const calls: HostChildCall[] = []
    const host: Host = {
      directory: dir.path,
      worktree: dir.path,
      log: Logger.silent,
      child: async (call) => (calls.push(call), "fine"),
    }
    const { hooks } = await Builtins.create(host, {
      options: {},
      logger: () => Logger.silent,
      only: ["builtin-tool-security", "look-at"],
    })
    await hooks["chat.params"]!(
      { sessionID: "s", model: VISION, message: { model: { providerID: "p", modelID: "eye" } } } as any,
      {} as any,
    )
    const ctx = { sessionID: "s", messageID: "m", agent: "build", abort: new AbortController().signal } as any
    await expect(hooks.tool!.look_at.execute({ file_path: "secret/plan.png", goal: "x" }, ctx)).rejects.toThrow(
      "secret/plan.png",
    )
    expect(await hooks.tool!.look_at.execute({ file_path: "ok.png", goal: "x" }, ctx)).toContain("fine")
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({ agent: "build", system: LookTool.SYSTEM })
    // Once the configuration holds look_at's own agent (no tools, its prompt), the child call runs as it.
    const config: any = { agent: { build: {} } }
    await hooks.config!(config)
    expect(config.agent["look-at"]).toEqual({ ...LookTool.AGENT_CONFIG, permission: { "*": "deny" } })
    expect(config.agent["look-at"].prompt).toBe(LookTool.SYSTEM)
    await hooks.tool!.look_at.execute({ file_path: "ok.png", goal: "x" }, ctx)
    expect(calls[1].agent).toBe("look-at")
    expect(calls[1].system).toBeUndefined()
  })

  test("the answer is capped; permissions are asked for files outside the project; an empty answer is an error", async () => {
    await using outside = await tmpdir({ "shot.png": PNG })
    await using dir = await tmpdir({})
    const asks: any[] = []
    const host: Host = {
      directory: dir.path,
      worktree: dir.path,
      log: Logger.silent,
      child: async () => "word ".repeat(5000),
    }
    const models = LookModels.create(host)
    models.observe({ sessionID: "s", model: VISION, message: { model: { providerID: "p", modelID: "eye" } } })
    const tool = LookTool.create({ host, config: { maxAnswerTokens: 200 }, models }).look_at
    const ctx = { sessionID: "s", messageID: "m", ask: async (a: any) => void asks.push(a) } as any
    const out = (await tool.execute({ file_path: `${outside.path}/shot.png`, goal: "x" }, ctx)) as string
    expect(out).toEndWith("[answer cut at ~200 tokens]")
    expect(out.length).toBeLessThan(200 * 4 + 200)
    expect(asks.map((a) => [a.permission, a.patterns])).toEqual([
      ["external_directory", [`${outside.path}/*`]],
      ["read", [`${outside.path}/shot.png`]],
    ])
    host.child = async () => "  "
    await expect(tool.execute({ file_path: `${outside.path}/shot.png`, goal: "x" }, ctx)).rejects.toThrow(
      "p/eye returned no answer",
    )
  })

  test("a host without a child model call offers no look_at tool", async () => {
    await using dir = await tmpdir({})
    const { hooks, built } = await Builtins.create(
      { directory: dir.path, worktree: dir.path, log: Logger.silent },
      { options: {}, logger: () => Logger.silent, only: ["look-at"] },
    )
    expect(built).toEqual(["look-at"])
    expect(hooks.tool?.look_at).toBeUndefined()
  })

  test("forget, run before every request, notes a failed look_at call's image_data at once (red team CE-2)", () => {
    // Text opening with 30 comments: the old SVG regex spent 2-4 s on each such call before every request.
    const xml =
      '<?xml version="1.0"?>\n' +
      Array.from({ length: 30 }, (_, k) => `<!-- Licensed line ${k} -->\n`).join("") +
      "<project>\n</project>\n"
    const messages: any[] = [
      {
        info: { id: "m1", role: "assistant" },
        parts: Array.from({ length: 5 }, (_, i) => ({
          type: "tool",
          tool: "look_at",
          callID: `c${i}`,
          state: { status: "error", input: { image_data: Buffer.from(xml).toString("base64"), goal: "x" }, error: "e" },
        })),
      },
    ]
    expect(LookTool.forget(messages)).toBe(5)
    expect(messages[0].parts[0].state.input.image_data).toStartWith("[image_data, ")
  }, 5_000)
})
