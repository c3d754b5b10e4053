// Red team CC: the product's own features as channels (README injection, …) — findings of round CC.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import { POLICY, project } from "./fixture"
import { isolateHome } from "./redteam-helpers"
import { ROUTES, open } from "./own-session"

const PHRASE = "readme segment phrase alpha"
const README = "# pkg\nPublic intro of the package.\n<!-- @secure-start -->\n" + PHRASE + "\n<!-- @secure-end -->\nok\n"
const le = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, "utf16le")])
const be = (s: string) => {
  const b = Buffer.from(s, "utf16le")
  b.swap16()
  return Buffer.concat([Buffer.from([0xfe, 0xff]), b])
}
/** What a model reads in a text: NULs and replacement characters mean nothing to it. */
const plain = (s: string) => s.replace(/[\u0000\uFFFD]/g, "")

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

describe.each(ROUTES)("route %s: CC1 README injection of a UTF-16 README", (route) => {
  for (const [name, bytes] of [
    ["UTF-8 (control)", Buffer.from(README)],
    ["UTF-16LE with BOM", le(README)],
    ["UTF-16BE with BOM", be(README)],
  ] as const) {
    test(`CC1 ${name}: a README's read-protected segment is not injected into a read result`, async () => {
      await using dir = await project({ "pkg/x.ts": "export const x = 1\n" }, POLICY)
      fs.writeFileSync(dir.file("pkg/README.md"), bytes)
      const session = await open(route, dir.path)
      try {
        const out = await session.read("pkg/x.ts")
        if (process.env.CC_SHOW) console.log(JSON.stringify(out))
        expect(plain(out)).toContain("README from:")
        expect(plain(out)).not.toContain(PHRASE)
      } finally {
        await session.close()
      }
    }, 60_000)
  }
})

// CC2 probe: the lsp tool and look_at over a UTF-16 file holding a read-protected segment.
const WIDE = [
  "export const open = 1",
  "// @secure-start",
  'export const vaultPin: number = "4711 the wide pin value"',
  "// @secure-end",
  "export const tail = 2",
  "",
].join("\n")
const WIDE_PHRASES = ["vaultPin", "wide pin value"]

describe.each(ROUTES)("route %s: CC2 lsp over a UTF-16 file with a read-protected segment", (route) => {
  test("CC2 no lsp operation shows the segment of a UTF-16 file", async () => {
    const { TSCONFIG } = await import("../lsp/fixtures")
    await using dir = await project(
      {
        "package.json": '{ "name": "p", "private": true, "type": "module" }\n',
        "tsconfig.json": TSCONFIG,
        "src/use.ts": 'import { vaultPin } from "./wide"\nexport const copy = vaultPin\n',
      },
      POLICY,
    )
    fs.writeFileSync(dir.file("src/wide.ts"), le(WIDE))
    const session = await open(route, dir.path)
    const outputs: string[] = []
    try {
      for (const args of [
        { operation: "documentSymbol", filePath: "src/wide.ts" },
        { operation: "hover", filePath: "src/wide.ts", line: 3, character: 15 },
        { operation: "diagnostics", filePath: "src/wide.ts" },
        { operation: "diagnostics", filePath: "src/use.ts" },
        { operation: "workspaceSymbol", filePath: "src/use.ts", query: "vaultPin" },
        { operation: "goToDefinition", filePath: "src/use.ts", line: 2, character: 22 },
        { operation: "hover", filePath: "src/use.ts", line: 2, character: 22 },
        { operation: "findReferences", filePath: "src/use.ts", line: 2, character: 22 },
      ]) {
        const r = await session.call("lsp", args)
        outputs.push(`${JSON.stringify(args)}\n${r.output}${r.failed ?? ""}${r.refused ?? ""}`)
      }
      const look = await session.call("look_at", { file_path: dir.file("src/wide.ts"), goal: "describe" })
      outputs.push(`look_at\n${look.output}${look.failed ?? ""}${look.refused ?? ""}`)
      if (process.env.CC_SHOW) console.log(outputs.map(plain).join("\n----\n"))
      // The segment's identifier on its own (used in src/use.ts) is fine; its value, or its declaration line, is not.
      for (const text of outputs)
        expect({ text: plain(text), leaked: plain(text).includes("wide pin value") }).toEqual({
          text: plain(text),
          leaked: false,
        })
    } finally {
      await session.close()
    }
  }, 120_000)
})

// CC3 probe: knowledge injection of an article holding a read-protected segment.
describe.each(ROUTES)("route %s: CC3 knowledge injection", (route) => {
  for (const [name, marker] of [
    ["html comment", ["<!-- @secure-start -->", "<!-- @secure-end -->"]],
    ["alone on its line", ["@secure-start", "@secure-end"]],
    ["hash comment", ["# @secure-start", "# @secure-end"]],
  ] as const) {
    test(`CC3 ${name}: the knowledge block carries no read-protected segment of an article`, async () => {
      await using dir = await project(
        {
          ".opencode/knowledge-base/payroll-guide.md":
            "---\ntitle: Payroll guide\ndescription: How payroll exports work\ntags: [payroll]\n---\nPayroll exports go through the finance pipeline.\n" +
            `${marker[0]}\n${PHRASE}\n${marker[1]}\nThe end.\n`,
        },
        POLICY,
      )
      const session = await open(route, dir.path)
      try {
        const parts = await session.prompt("how do the payroll exports of the finance pipeline work?")
        const added = parts
          .slice(1)
          .map((p) => p.text ?? "")
          .join("\n")
        if (process.env.CC_SHOW) console.log(added)
        expect(added).toContain("finance pipeline")
        expect(added).not.toContain(PHRASE)
        const loaded = await session.call("resource-load", { id: "payroll-guide" })
        if (process.env.CC_SHOW) console.log(loaded.output)
        expect(`${loaded.output}${loaded.failed ?? ""}`).not.toContain(PHRASE)
      } finally {
        await session.close()
      }
    }, 60_000)
  }
})

// CC4 probe: hard links (made by the user) to protected files, through our own features.
describe.each(ROUTES)("route %s: CC4 hard links to protected files", (route) => {
  test("CC4 ast_grep_search, README injection and resource-load over hard links show nothing protected", async () => {
    await using dir = await project(
      {
        "secrets/plan.ts": 'export const launch = "launch on the fourth of july"\n',
        "secrets/notes.md": "---\ntitle: Notes\ndescription: payroll notes\n---\nlaunch on the fourth of july\n",
        "pkg/x.ts": "export const x = 1\n",
      },
      POLICY,
    )
    fs.linkSync(dir.file("secrets/plan.ts"), dir.file("src/h.ts"))
    fs.linkSync(dir.file("secrets/notes.md"), dir.file("pkg/README.md"))
    fs.mkdirSync(dir.file(".opencode/knowledge-base"), { recursive: true })
    fs.linkSync(dir.file("secrets/notes.md"), dir.file(".opencode/knowledge-base/notes.md"))
    const session = await open(route, dir.path)
    const outs: string[] = []
    try {
      const s = await session.call("ast_grep_search", { pattern: "export const $A = $B", lang: "typescript" })
      outs.push(`${s.output}${s.failed ?? ""}${s.refused ?? ""}`)
      outs.push(await session.read("pkg/x.ts").catch((e) => String(e)))
      const l = await session.call("resource-load", { id: "notes" })
      outs.push(`${l.output}${l.failed ?? ""}${l.refused ?? ""}`)
      outs.push(
        (await session.prompt("payroll notes please"))
          .slice(1)
          .map((p) => p.text ?? "")
          .join("\n"),
      )
      if (process.env.CC_SHOW) console.log(outs.join("\n-----\n"))
      for (const o of outs) expect(o).not.toContain("fourth of july")
    } finally {
      await session.close()
    }
  }, 60_000)
})

// CC5: capture-list over MCP shows a line a segment protects now (the file's path is not protected: only its lines).
import { BuiltinsMcp } from "../../mcp/server"
import { Logger } from "../../util/log"

describe("CC5 the MCP server's capture-list and a segment added since", () => {
  test("CC5 capture-list withholds a captured call's text that a read-protected segment covers now", async () => {
    const SECRET = "launch on the fourth of july"
    await using dir = await project(
      { "notes/plan.ts": `export const a = 1\nexport const launch = "${SECRET}"\n` },
      POLICY,
    )
    // A session reads the file while no segment covers the line; capture stores the call.
    const session = await open("plugin", dir.path)
    const out = await session.read("notes/plan.ts")
    expect(out).toContain(SECRET)
    await session.close()
    // The user puts the line in a read-protected segment (the policy's own markers; the policy file is unchanged).
    fs.writeFileSync(
      dir.file("notes/plan.ts"),
      `export const a = 1\n// @secure-start\nexport const launch = "${SECRET}"\n// @secure-end\n`,
    )
    // Control: the read tool now hides it.
    const again = await open("plugin", dir.path)
    try {
      expect(await again.read("notes/plan.ts")).not.toContain(SECRET)
    } finally {
      await again.close()
    }
    const mcp = await BuiltinsMcp.create({ directory: dir.path, log: Logger.silent })
    try {
      const list = await mcp.call("capture-list", {})
      if (process.env.CC_SHOW) console.log(list.text)
      // Held: the whole (one-line JSON) answer is redacted, as it holds a line of today's segment.
      const one = ""
      if (process.env.CC_SHOW) console.log(one)
      expect(list.text + one).not.toContain(SECRET)
    } finally {
      await mcp.close()
    }
  }, 60_000)
})

// CC6 probe: what a read-protected agent file references, through resource-query's referencedBy.
describe.each(ROUTES)("route %s: CC6 references of a protected agent", (route) => {
  test("CC6 resource-query does not answer what a read-protected agent's text names", async () => {
    const policy = {
      ...POLICY,
      rules: [...POLICY.rules, { pattern: ".opencode/agent/spy.md", type: "file", deniedOperations: ["read", "llm"] }],
    }
    await using dir = await project(
      {
        ".opencode/knowledge-base/payroll-guide.md":
          "---\ntitle: Payroll guide\ndescription: How payroll exports work\ntags: [payroll]\n---\nPayroll body.\n",
        ".opencode/knowledge-base/layoff-plan.md":
          "---\ntitle: Layoff plan\ndescription: Workforce plan\ntags: [hr]\n---\nPlan body.\n",
        ".opencode/agent/spy.md":
          "---\ndescription: internal auditor\nmode: subagent\n---\nFirst read [[layoff-plan]] and then payroll-guide.\n",
        ".opencode/agent/open.md": "---\ndescription: ordinary agent\nmode: subagent\n---\nRead [[payroll-guide]].\n",
      },
      policy,
    )
    const session = await open(route, dir.path)
    try {
      const answers: string[] = []
      for (const args of [
        { referencedBy: "spy" },
        { query: "layoff" },
        { query: "payroll" },
        { referencedBy: "open" },
      ]) {
        const r = await session.call("resource-query", args)
        answers.push(`${JSON.stringify(args)} -> ${r.output}${r.failed ?? ""}${r.refused ?? ""}`)
      }
      const l = await session.call("resource-load", { id: "layoff-plan" })
      answers.push(`load -> ${l.output}`)
      if (process.env.CC_SHOW) console.log(answers.join("\n"))
      // Control: the ordinary agent's references are answered.
      expect(answers[3]).toContain("payroll-guide")
      // The protected agent's: none, and its name is not listed as a referrer.
      expect(answers[0]).not.toContain("layoff-plan")
      // (the query itself is echoed back; only the results count)
      expect(
        answers.map((a) => a.replace(/^[^\n]*? -> /, "").replace(/"query":\{[^}]*\}/g, "")).join("\n"),
      ).not.toMatch(/\bspy\b/)
    } finally {
      await session.close()
    }
  }, 60_000)
})

// CC2b: the same without the kernel sandbox (mode off), where the docs say the lsp tool's own filter still holds.
const WIDE2 = [
  "export const open = 1",
  "// @secure-start",
  'export const vaultPin = "4711 the wide pin value"',
  "// @secure-end",
  "export const tail = 2",
  "",
].join("\n")

describe.each(ROUTES)("route %s: CC2b lsp, sandbox off, UTF-16 file with a read-protected segment", (route) => {
  for (const [name, bytes] of [
    ["UTF-8 (control)", Buffer.from(WIDE2)],
    ["UTF-16LE with BOM", le(WIDE2)],
  ] as const) {
    test(`CC2b ${name}: no lsp answer located on the segment's line (definition, references, symbols) is shown`, async () => {
      const { TSCONFIG } = await import("../lsp/fixtures")
      await using dir = await project(
        {
          "package.json": '{ "name": "p", "private": true, "type": "module" }\n',
          "tsconfig.json": TSCONFIG,
          "src/use.ts": 'import { vaultPin } from "./wide"\nexport const copy = vaultPin\n',
        },
        { ...POLICY, sandbox: { mode: "off" } },
      )
      fs.writeFileSync(dir.file("src/wide.ts"), bytes)
      const session = await open(route, dir.path)
      const outputs: string[] = []
      try {
        for (const args of [
          { operation: "goToDefinition", filePath: "src/use.ts", line: 2, character: 22 },
          { operation: "findReferences", filePath: "src/use.ts", line: 2, character: 22 },
          { operation: "workspaceSymbol", filePath: "src/use.ts", query: "vaultPin" },
          // (a hover of the import would carry the value: documented for servers without the sandbox, not asserted)
        ]) {
          const r = await session.call("lsp", args)
          outputs.push(`${JSON.stringify(args)}\n${r.output}${r.failed ?? ""}${r.refused ?? ""}`)
        }
        if (process.env.CC_SHOW) console.log(outputs.map(plain).join("\n----\n"))
        for (const text of outputs)
          expect({ text: plain(text), leaked: /wide pin value|wide\.ts:3/.test(plain(text)) }).toEqual({
            text: plain(text),
            leaked: false,
          })
      } finally {
        await session.close()
      }
    }, 120_000)
  }
})
