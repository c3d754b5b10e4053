// Red team of the product's OWN features as routes around the security layer: every tool and hook a feature adds
// (AST search and replace, lsp, look_at, README and knowledge injection, the resource loader, discovery, capture,
// learnings, crash recovery, the comment checker, the MCP server) is called the way OpenCode calls it, over the real
// composition root (`Builtins.create`, which the plugin returns as its hooks; `BuiltinsSeams`, which the fork's seams
// call), in a real temporary project with a real policy. Each attack asserts what the model would be given: the
// tool's result after every hook, or the parts a hook adds to a prompt.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import type { HostChildCall } from "../../host"
import { BuiltinsMcp } from "../../mcp/server"
import { Logger } from "../../util/log"
import { PNG } from "../look/fixtures"
import { TSCONFIG, processesIn } from "../lsp/fixtures"
import { POLICY, project } from "./fixture"
import { isolateHome } from "./redteam-helpers"
import { ROUTES, open, type Result, type Route } from "./own-session"

/** Phrases of protected content in the project below: none may reach the model. */
const PHRASES = [
  "the confidential pricing algorithm", // src/seg.ts, inside a read-protected segment
  "line two of the api key file", // secrets/api.key (fixture)
  "launch on the fourth of july", // secrets/plan.ts
  "readme segment phrase alpha", // pkg/README.md, inside a segment
  "svg segment phrase charlie", // pkg/diagram.svg, inside a segment
  "AKIAIOSFODNN7EXAMPLE", // a secret by its format, in a resource's description
]

const leaked = (text: string) => PHRASES.filter((p) => text.includes(p))

const FILES: Record<string, string> = {
  "src/seg.ts": [
    "export const a = 1",
    "// @secure-start",
    'export const pricing = "the confidential pricing algorithm"',
    "// @secure-end",
    "export const b = 2",
    "",
  ].join("\n"),
  "secrets/plan.ts": 'export const launch = "launch on the fourth of july"\n',
  "pkg/README.md": "# pkg\n<!-- @secure-start -->\nreadme segment phrase alpha\n<!-- @secure-end -->\nok\n",
  "pkg/x.ts": "export const x = 1\n",
  "pkg/diagram.svg":
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">\n<!-- @secure-start -->\n<text>svg segment phrase charlie</text>\n<!-- @secure-end -->\n<text>API gateway</text>\n</svg>\n',
  ".opencode/knowledge-base/payroll-guide.md":
    "---\ntitle: Payroll guide\ndescription: How payroll exports work, key AKIAIOSFODNN7EXAMPLE\ntags: [payroll]\n---\nPayroll exports go through the finance pipeline.\n",
}

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

describe.each(ROUTES)("route %s: AST tools", (route) => {
  test("ast_grep_replace cannot move a read-protected segment's text out of its markers (dry run or live)", async () => {
    await using dir = await project(FILES)
    const session = await open(route, dir.path)
    try {
      const before = fs.readFileSync(dir.file("src/seg.ts"), "utf8")
      // The rewrite closes the segment early and repeats the captured value after it.
      const rewrite = "export const pricing = $V\n// @secure-end\nexport const leak = $V\n// @secure-start"
      for (const dryRun of [true, false]) {
        const result = await session.call("ast_grep_replace", {
          pattern: "export const pricing = $V",
          rewrite,
          lang: "typescript",
          paths: ["src/seg.ts"],
          dryRun,
        })
        expect(leaked(result.output + (result.failed ?? ""))).toEqual([])
        expect(result.output).toContain("No matches")
      }
      expect(fs.readFileSync(dir.file("src/seg.ts"), "utf8")).toBe(before)
      // A match around the whole segment (a rewrite of the statement list would carry it out too) is skipped alike.
      const around = await session.call("ast_grep_replace", {
        pattern: "export const a = 1",
        rewrite: "export const a = 1 // ok",
        lang: "typescript",
        paths: ["src/seg.ts"],
      })
      expect(around.output).toContain("Dry run: would replace 1 match")
    } finally {
      await session.close()
    }
  }, 60_000)
})

describe.each(ROUTES)("route %s: text our features add to a prompt", (route) => {
  test("discovery's suggestion and the knowledge block are stored redacted (a description holding a secret)", async () => {
    await using dir = await project(FILES)
    const session = await open(route, dir.path)
    try {
      const parts = await session.prompt("how do the payroll exports of the finance pipeline work?")
      const added = parts.slice(1).map((p) => p.text ?? "")
      // Both features answered: the suggestion names the resource, the knowledge block carries the article.
      expect(added.some((t) => t.includes("payroll-guide"))).toBe(true)
      expect(leaked(added.join("\n"))).toEqual([])
    } finally {
      await session.close()
    }
  }, 60_000)
})

/** A TypeScript project around the protected files: a file of ours importing from both. */
const TS_FILES: Record<string, string> = {
  "package.json": '{ "name": "p", "private": true, "type": "module" }\n',
  "tsconfig.json": TSCONFIG.replace('["src"]', '["src", "secrets"]'),
  "src/use.ts": [
    'import { launch } from "../secrets/plan"',
    'import { pricing } from "./seg"',
    "export const copyLaunch = launch",
    "export const copyPricing = pricing",
    "export const n: number = launch",
    "",
  ].join("\n"),
}

describe.each(ROUTES)("route %s: lsp", (route) => {
  // typescript-language-server reads every file the project and its imports name, by itself: under a policy it runs in
  // the kernel sandbox, where secrets/ is unreadable and src/seg.ts shows its segment redacted, and the client sends
  // segment lines blank.
  test("no operation gives the model a protected file's or a protected segment's content", async () => {
    await using dir = await project({ ...FILES, ...TS_FILES })
    const session = await open(route, dir.path)
    const outputs: string[] = []
    const lsp = async (args: Record<string, unknown>) => {
      const result = await session.call("lsp", args)
      outputs.push(`${JSON.stringify(args)}\n${result.output}${result.failed ?? ""}${result.refused ?? ""}`)
      return result
    }
    try {
      // Hover on the segment's own line, and on copies of both values in a file the agent may read and write.
      await lsp({ operation: "hover", filePath: "src/seg.ts", line: 3, character: 15 })
      const copy = await lsp({ operation: "hover", filePath: "src/use.ts", line: 3, character: 15 })
      await lsp({ operation: "hover", filePath: "src/use.ts", line: 4, character: 15 })
      // A type error quoting the protected literal, symbols, references and definitions into both.
      const diagnostics = await lsp({ operation: "diagnostics", filePath: "src/use.ts" })
      const symbols = await lsp({ operation: "documentSymbol", filePath: "src/seg.ts" })
      await lsp({ operation: "workspaceSymbol", filePath: "src/use.ts", query: "launch" })
      await lsp({ operation: "findReferences", filePath: "src/use.ts", line: 4, character: 28 })
      await lsp({ operation: "goToDefinition", filePath: "src/use.ts", line: 3, character: 28 })
      // Project diagnostics (no filePath): protected files are neither read nor named.
      const project = await lsp({ operation: "diagnostics" })
      for (const text of outputs) expect({ text, leaked: leaked(text) }).toEqual({ text, leaked: [] })
      expect(outputs.join("\n")).not.toContain("secrets/plan.ts")
      // The operations answered.
      expect(copy.output).toContain("copyLaunch")
      expect(diagnostics.output).toContain("status: ok")
      expect(symbols.output).toContain("constant b")
      expect(symbols.output).not.toContain("pricing")
      expect(project.refused).toBeUndefined()
      expect(project.output).toContain("[NOTE] 1 file not checked: protected by the security policy.")
      expect(project.output.split("\n").filter((l) => l.startsWith("secrets"))).toEqual([])
      // A rename still works inside the sandbox, around the segment it cannot see, and leaves the segment as it was.
      const segment = fs.readFileSync(dir.file("src/seg.ts"), "utf8").split("\n").slice(1, 4).join("\n")
      const renamed = await session.call("lsp", {
        operation: "rename",
        filePath: "src/seg.ts",
        line: 5,
        character: 14,
        newName: "bee",
      })
      expect(renamed.output).toContain("All files were written")
      const after = fs.readFileSync(dir.file("src/seg.ts"), "utf8")
      expect(after).toContain("export const bee = 2")
      expect(after).toContain(segment)
    } finally {
      await session.close()
    }
    expect(await processesIn(dir.path)).toEqual([])
  }, 120_000)

  test("without the sandbox (mode off) answers located in protected files or segments are still left out", async () => {
    const policy = { ...POLICY, sandbox: { mode: "off" } }
    await using dir = await project({ ...FILES, ...TS_FILES }, policy)
    const session = await open(route, dir.path)
    try {
      const symbols = await session.call("lsp", { operation: "documentSymbol", filePath: "src/seg.ts" })
      expect(symbols.output).toContain("constant b")
      expect(symbols.output).not.toContain("pricing")
      const hover = await session.call("lsp", { operation: "hover", filePath: "src/seg.ts", line: 3, character: 15 })
      expect(leaked(hover.output)).toEqual([])
      const workspace = await session.call("lsp", {
        operation: "workspaceSymbol",
        filePath: "src/use.ts",
        query: "launch",
      })
      expect(workspace.output).not.toContain("secrets/plan.ts")
      const definition = await session.call("lsp", {
        operation: "goToDefinition",
        filePath: "src/use.ts",
        line: 3,
        character: 28,
      })
      expect(definition.output).not.toContain("secrets/plan.ts")
      const references = await session.call("lsp", {
        operation: "findReferences",
        filePath: "src/use.ts",
        line: 4,
        character: 28,
      })
      expect(leaked(references.output)).toEqual([])
      // The server reads secrets/plan.ts here: a rename whose edit reaches it is refused, nothing written.
      const plan = fs.readFileSync(dir.file("secrets/plan.ts"), "utf8")
      const use = fs.readFileSync(dir.file("src/use.ts"), "utf8")
      const renamed = await session.call("lsp", {
        operation: "rename",
        filePath: "src/use.ts",
        line: 1,
        character: 10,
        newName: "liftoff",
      })
      expect(renamed.failed).toContain("security policy")
      expect(leaked(renamed.failed ?? "")).toEqual([])
      expect(fs.readFileSync(dir.file("secrets/plan.ts"), "utf8")).toBe(plan)
      expect(fs.readFileSync(dir.file("src/use.ts"), "utf8")).toBe(use)
    } finally {
      await session.close()
    }
    expect(await processesIn(dir.path)).toEqual([])
  }, 120_000)
})

describe.each(ROUTES)("route %s: look_at", (route) => {
  test("the child model gets an SVG without its protected segment; protected images are refused", async () => {
    await using dir = await project(FILES)
    fs.writeFileSync(dir.file("secrets/shot.png"), PNG)
    fs.symlinkSync("../secrets/shot.png", dir.file("pkg/shot.png"))
    const sent: HostChildCall[] = []
    // A child model that transcribes every text it is given.
    const child = async (call: HostChildCall) => {
      sent.push(call)
      return call.parts.map((p) => (p.type === "text" ? p.text : `[${p.mime}]`)).join("\n")
    }
    const models = async () => [{ providerID: "p", modelID: "m", input: { image: true, pdf: true } }]
    const session = await open(route, dir.path, { child, models, childDeniesTools: true })
    try {
      await session.hook("chat.params", {
        sessionID: "ses_own",
        model: { providerID: "p", id: "m", capabilities: { input: { image: true, pdf: true } } },
        message: { model: { providerID: "p", modelID: "m" } },
      })
      const svg = await session.call("look_at", { file_path: "pkg/diagram.svg", goal: "transcribe every text" })
      expect(svg.output).toContain("API gateway")
      expect(leaked(JSON.stringify(sent))).toEqual([])
      expect(leaked(svg.output)).toEqual([])
      sent.length = 0
      // The path as written, with `..`, through a symbolic link, as a file URL.
      for (const file_path of [
        "secrets/shot.png",
        `${dir.path}/src/../secrets/shot.png`,
        "pkg/shot.png",
        `file://${dir.path}/secrets/shot.png`,
      ]) {
        const image = await session.call("look_at", { file_path, goal: "describe it" })
        expect({ file_path, refusal: image.refused ?? image.failed }).toEqual({
          file_path,
          refusal: expect.stringContaining("security policy"),
        })
      }
      expect(sent).toEqual([])
    } finally {
      await session.close()
    }
  }, 60_000)
})

describe("the MCP server (an external client calling our tools)", () => {
  test("capture-list withholds calls naming a path protected since they were captured", async () => {
    await using dir = await project({ ...FILES, "notes/plan.txt": "launch code is tango\n" })
    // A session reads the file and greps for its text while nothing protects it; capture stores both calls.
    const session = await open("plugin", dir.path)
    const input = { tool: "read", sessionID: "ses_own", callID: "call_read" }
    await session.hook("tool.execute.before", input, { args: { filePath: "notes/plan.txt" } })
    await session.hook(
      "tool.execute.after",
      { ...input, args: { filePath: "notes/plan.txt" } },
      { title: "notes/plan.txt", output: "<content>\n1: launch code is tango\n</content>", metadata: {} },
    )
    const grep = { tool: "bash", sessionID: "ses_own", callID: "call_grep" }
    await session.hook("tool.execute.before", grep, { args: { command: "grep -rn tango ." } })
    await session.hook(
      "tool.execute.after",
      { ...grep, args: { command: "grep -rn tango ." } },
      { title: "", output: "./notes/plan.txt:1:launch code is tango\n", metadata: {} },
    )
    await session.close()
    // Then the user protects the folder; a client asks the MCP server for the captured calls.
    const policy = {
      ...POLICY,
      rules: [...POLICY.rules, { pattern: "notes", type: "directory", deniedOperations: ["read", "llm"] }],
    }
    fs.writeFileSync(dir.file(".opencode-security.json"), JSON.stringify(policy))
    const mcp = await BuiltinsMcp.create({ directory: dir.path, log: Logger.silent })
    try {
      const list = await mcp.call("capture-list", {})
      expect(list.text).not.toContain("tango")
      expect(list.isError).toBe(false)
      expect(JSON.parse(list.text).total).toBe(2)
      const one = await mcp.call("capture-list", { callID: "call_read" })
      expect(one.text).not.toContain("tango")
      expect(JSON.parse(one.text).call.output).toContain("withheld")
    } finally {
      await mcp.close()
    }
  }, 60_000)

  // An admin session's output (allowed for admin, redacted for admin) was listed to an MCP client of the lowest role:
  // `cat s*/p*.txt` names no protected path and a short value is no copy the scanner knows (red-team helper, 1.18.33).
  test("capture-list withholds the texts of calls captured under another role (or before the policy)", async () => {
    await using dir = await project(FILES)
    process.env.OPENCODE_SECURITY_ROLE = "admin"
    try {
      const session = await open("plugin", dir.path)
      const call = { tool: "bash", sessionID: "ses_admin", callID: "call_admin" }
      await session.hook("tool.execute.before", call, { args: { command: "cat s*/p*.txt" } })
      await session.hook(
        "tool.execute.after",
        { ...call, args: { command: "cat s*/p*.txt" } },
        { title: "", output: 'export const launch = "launch on the fourth of july"\n', metadata: {} },
      )
      await session.close()
    } finally {
      delete process.env.OPENCODE_SECURITY_ROLE
    }
    const list = async (role?: string) => {
      if (role) process.env.OPENCODE_SECURITY_ROLE = role
      const mcp = await BuiltinsMcp.create({ directory: dir.path, log: Logger.silent })
      try {
        return [
          (await mcp.call("capture-list", {})).text,
          (await mcp.call("capture-list", { callID: "call_admin" })).text,
        ]
      } finally {
        delete process.env.OPENCODE_SECURITY_ROLE
        await mcp.close()
      }
    }
    const viewer = await list()
    expect(leaked(viewer.join("\n"))).toEqual([])
    expect(JSON.parse(viewer[1]).call.output).toContain("another security role or policy")
    expect(JSON.parse(viewer[1]).call.tool).toBe("bash")
    // The admin's own client, under the same policy, gets the call as captured.
    expect((await list("admin"))[1]).toContain("launch on the fourth of july")
    // A change of policy: what was redacted for the old one is withheld too.
    fs.writeFileSync(
      dir.file(".opencode-security.json"),
      JSON.stringify({ ...POLICY, rules: POLICY.rules.slice(0, 2) }),
    )
    expect((await list("admin"))[1]).not.toContain("launch on the fourth of july")
  }, 60_000)

  test("the policy applies, with the role of the server's environment (the lowest without one)", async () => {
    // A knowledge-base article that is a link into secrets/ (admin only), and a description holding a secret.
    await using dir = await project({
      ...FILES,
      "secrets/vault.md": "---\ntitle: Vault\ndescription: The vault\n---\nvault body\n",
    })
    fs.symlinkSync("../../secrets/vault.md", dir.file(".opencode/knowledge-base/vault.md"))
    const load = async (role?: string) => {
      if (role) process.env.OPENCODE_SECURITY_ROLE = role
      const mcp = await BuiltinsMcp.create({ directory: dir.path, log: Logger.silent })
      try {
        const texts = [
          (await mcp.call("resource-load", { id: "vault" })).text,
          (await mcp.call("resource-query", { query: "payroll exports" })).text,
          (await mcp.call("discover", { prompt: "how do the payroll exports work?" })).text,
        ]
        expect(leaked(texts.join("\n"))).toEqual([])
        return texts[0]
      } finally {
        delete process.env.OPENCODE_SECURITY_ROLE
        await mcp.close()
      }
    }
    expect(await load()).not.toContain("vault body")
    expect(await load("viewer")).not.toContain("vault body")
    expect(await load("admin")).toContain("vault body")
  }, 60_000)
})

/**
 * Routes that hold: one row per feature and way in, each run on both routes. `call` rows name a tool and its
 * arguments; `prompt`/`read` rows run the hook a feature acts in. Every answer is checked for every protected phrase.
 */
type Row = { name: string; run: (session: Awaited<ReturnType<typeof open>>, dir: string) => Promise<string> }

const text = (r: Result) => `${r.output}${r.failed ?? ""}${r.refused ?? ""}`

const ROWS: Row[] = [
  ...[
    "secrets",
    "secrets/api.key",
    "./src/../secrets",
    "<dir>/secrets",
    "/proc/self/root<dir>/secrets",
    "pkg/link-to-secrets",
    "pkg/link-to-secrets/plan.ts",
    ".opencode/builtins-local",
  ].map((given): Row => ({
    name: `ast_grep_search over ${given}`,
    run: async (s, dir) => {
      const paths = [given.replace("<dir>", dir)]
      return text(await s.call("ast_grep_search", { pattern: "export const $A = $B", lang: "typescript", paths }))
    },
  })),
  ...[["**/*.key"], ["secrets/**"], ["**/plan.ts"]].map((globs): Row => ({
    name: `ast_grep_search with globs ${globs[0]}`,
    run: async (s) => text(await s.call("ast_grep_search", { pattern: "$A", lang: "typescript", globs, context: 3 })),
  })),
  {
    name: "ast_grep_search context lines around a segment",
    run: async (s) =>
      text(await s.call("ast_grep_search", { pattern: "export const b = $V", lang: "typescript", context: 5 })),
  },
  {
    name: "ast_grep_search of a string inside a segment (a count is an answer too)",
    run: async (s) => {
      const r = await s.call("ast_grep_search", { pattern: '"the confidential pricing algorithm"', lang: "typescript" })
      expect(r.output).toContain("No matches")
      // The pattern is the agent's own guess, echoed back: what counts is that nothing matched.
      return text(r).replaceAll('"the confidential pricing algorithm"', "PATTERN")
    },
  },
  {
    name: "ast_grep_replace of a protected file (live)",
    run: async (s, dir) => {
      const before = fs.readFileSync(path.join(dir, "secrets/plan.ts"), "utf8")
      const r = await s.call("ast_grep_replace", {
        pattern: "export const launch = $V",
        rewrite: "export const launch = $V; console.log($V)",
        lang: "typescript",
        paths: ["secrets/plan.ts"],
        dryRun: false,
      })
      expect(fs.readFileSync(path.join(dir, "secrets/plan.ts"), "utf8")).toBe(before)
      return text(r)
    },
  },
  {
    name: "ast_grep_replace writing the policy (self-protection)",
    run: async (s, dir) => {
      const before = fs.readFileSync(path.join(dir, ".opencode-security.json"), "utf8")
      const r = await s.call("ast_grep_replace", {
        pattern: '"secrets/**"',
        rewrite: '"nothing/**"',
        lang: "json",
        paths: [".opencode-security.json"],
        dryRun: false,
      })
      expect(fs.readFileSync(path.join(dir, ".opencode-security.json"), "utf8")).toBe(before)
      return text(r)
    },
  },
  {
    name: "ast_grep_search of a path that does not exist under a protected folder",
    run: async (s) =>
      text(await s.call("ast_grep_search", { pattern: "$A", lang: "typescript", paths: ["secrets/none.ts"] })),
  },
  {
    name: "read: a README with a protected segment is injected redacted",
    run: async (s) => {
      const out = await s.read("pkg/x.ts")
      expect(out).toContain("README from:")
      return out
    },
  },
  {
    name: "read: a protected README is not injected",
    run: async (s) => {
      const out = await s.read("secrets/api.key").catch((e) => String(e))
      return out
    },
  },
  {
    name: "resource-load of an article that links to a protected file",
    run: async (s) => text(await s.call("resource-load", { id: "linked" })),
  },
  {
    name: "resource-query listing (descriptions scanned)",
    run: async (s) => text(await s.call("resource-query", { query: "payroll" })),
  },
  {
    name: "resource-load by a path instead of an id",
    run: async (s) => text(await s.call("resource-load", { id: "../../secrets/api.key" })),
  },
  {
    name: "discovery and knowledge: a protected agent and its symbolic link are never suggested",
    run: async (s) => {
      const parts = await s.prompt("audit the payroll exports for the finance team")
      const added = parts
        .slice(1)
        .map((p) => p.text ?? "")
        .join("\n")
      expect(added).not.toContain("spy")
      expect(added).not.toContain("alias")
      return added
    },
  },
  {
    name: "comment checker note on an edit of a file with a read-protected segment",
    run: async (s, dir) => {
      const file = path.join(dir, "src/seg.ts")
      const output = { title: "", output: "Edit applied successfully.", metadata: {} }
      const input = { tool: "edit", sessionID: "ses_own", callID: "call_edit" }
      const slop = "// Initialize the total\nlet total = 0\n// Add the price\ntotal += 2\n// Return the total\n"
      const args = { filePath: file, oldString: "export const b = 2", newString: `${slop}export const b = total` }
      await s.hook("tool.execute.before", input, { args })
      const before = fs.readFileSync(file, "utf8")
      fs.writeFileSync(file, before.replace(args.oldString, args.newString))
      await s.hook("tool.execute.after", { ...input, args }, output)
      expect(output.output).toContain("excessive comments")
      return output.output
    },
  },
  {
    name: "resource-load of an article with a protected segment",
    run: async (s) => {
      const r = await s.call("resource-load", { id: "segmented" })
      expect(r.output).toContain("visible part of the article")
      return text(r)
    },
  },
  {
    name: "learnings: a secret in the user's correction is stored and listed redacted",
    run: async (s) => {
      const parts = await s.prompt("no, use the deploy key AKIAIOSFODNN7EXAMPLE instead of the old one")
      await s.hook("event", { event: { type: "session.idle", properties: { sessionID: "ses_prompt_1" } } })
      const list = text(await s.call("learnings-list", {}))
      expect(list).toContain("deploy key")
      return `${list}\n${parts.map((p) => p.text).join("\n")}`
    },
  },
]

// Learnings are redacted for the role in force when said: an admin's correction quoting an admin-only line was
// injected into the next session of the lowest role and listed to it (red-team helper, 1.18.33).
describe.each(ROUTES)("route %s: learnings across roles", (route) => {
  test("a learning said under the admin role is not given to a session or client of another role", async () => {
    await using dir = await project(FILES)
    process.env.OPENCODE_SECURITY_ROLE = "admin"
    try {
      const admin = await open(route, dir.path)
      await admin.prompt("no, always write launch on the fourth of july in the release notes")
      await admin.hook("event", { event: { type: "session.idle", properties: { sessionID: "ses_prompt_1" } } })
      expect(text(await admin.call("learnings-list", {}))).toContain("fourth of july")
      await admin.close()
    } finally {
      delete process.env.OPENCODE_SECURITY_ROLE
    }
    const viewer = await open(route, dir.path)
    try {
      const parts = await viewer.prompt("write the release notes for the fourth release")
      expect(leaked(parts.map((p) => p.text ?? "").join("\n"))).toEqual([])
      expect(leaked(text(await viewer.call("learnings-list", {})))).toEqual([])
    } finally {
      await viewer.close()
    }
    const mcp = await BuiltinsMcp.create({ directory: dir.path, log: Logger.silent })
    try {
      expect(leaked((await mcp.call("learnings-list", {})).text)).toEqual([])
      // Nor can it be forgotten (and so shown) by its id from a client of another role (red-team helper, round 2).
      const id = JSON.parse(
        await (async () => {
          process.env.OPENCODE_SECURITY_ROLE = "admin"
          const admin = await BuiltinsMcp.create({ directory: dir.path, log: Logger.silent })
          try {
            return (await admin.call("learnings-list", {})).text
          } finally {
            delete process.env.OPENCODE_SECURITY_ROLE
            await admin.close()
          }
        })(),
      ).learnings[0].id
      const forget = await mcp.call("learnings-forget", { id })
      expect(leaked(forget.text)).toEqual([])
      expect(forget.text).toContain("NotFound")
    } finally {
      await mcp.close()
    }
  }, 60_000)
})

describe.each(ROUTES)("route %s: routes that hold", (route) => {
  test.each(ROWS.map((row) => [row.name, row] as const))(
    "%s",
    async (_name, row) => {
      await using dir = await project(
        {
          ...FILES,
          ".opencode/knowledge-base/segmented.md":
            "---\ntitle: Segmented\ndescription: An article with a segment\n---\nvisible part of the article\n<!-- @secure-start -->\nreadme segment phrase alpha\n<!-- @secure-end -->\n",
          ".opencode/agent/spy.md":
            "---\ndescription: Audits payroll exports for the finance team\nmode: subagent\n---\nThe spy agent prompt.\n",
        },
        {
          ...POLICY,
          rules: [
            ...POLICY.rules,
            { pattern: ".opencode/agent/spy.md", type: "file", deniedOperations: ["read", "llm"] },
          ],
        },
      )
      fs.symlinkSync("../secrets", dir.file("pkg/link-to-secrets"))
      fs.symlinkSync("spy.md", dir.file(".opencode/agent/alias.md"))
      fs.symlinkSync("../../secrets/api.key", dir.file(".opencode/knowledge-base/linked.md"))
      fs.mkdirSync(dir.file(".opencode/builtins-local"), { recursive: true })
      fs.writeFileSync(
        dir.file(".opencode/builtins-local/state.ts"),
        'export const s = "line two of the api key file"\n',
      )
      const session = await open(route, dir.path)
      try {
        const answer = await row.run(session, dir.path)
        if (process.env.OWN_FEATURES_SHOW) console.log(`--- ${row.name}\n${answer}`)
        expect({ row: row.name, leaked: leaked(answer) }).toEqual({ row: row.name, leaked: [] })
      } finally {
        await session.close()
      }
    },
    60_000,
  )
})
