// Red team AI: the product's own feature surfaces as routes to protected content.
import { LocalSeal } from "../../learning/seal"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import { POLICY, project } from "./fixture"
import path from "path"
import { ResourceCache } from "../../resource/cache"
import { isolateHome, open as openShell } from "./redteam-helpers"
import { ROUTES, open } from "./own-session"
import { TSCONFIG } from "../lsp/fixtures"

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

const SECRET = "launch on the fourth of july"
const TS_FILES: Record<string, string> = {
  "package.json": '{ "name": "p", "private": true, "type": "module" }\n',
  "tsconfig.json": TSCONFIG.replace('["src"]', '["src", "secrets"]'),
  "secrets/plan.ts": `export const launch = "${SECRET}"\n`,
  "src/use.ts": [
    'import { launch } from "../secrets/plan"',
    "export const copyLaunch = launch",
    "export const n: number = launch",
    "",
  ].join("\n"),
}

// AI1 with the sandbox off is a documented limit (docs/lsp.md), not tested here; with "optional" the server runs in the
// sandbox (bwrap is present) and shows nothing.
describe.each(ROUTES)("route %s: AI1 lsp with the sandbox optional", (route) => {
  test("AI1 hover and diagnostics of a file importing a protected constant do not show its value", async () => {
    await using dir = await project(TS_FILES, { ...POLICY, sandbox: { mode: "optional" } })
    const s = await open(route, dir.path)
    try {
      const hover = await s.call("lsp", { operation: "hover", filePath: "src/use.ts", line: 2, character: 15 })
      const diag = await s.call("lsp", { operation: "diagnostics", filePath: "src/use.ts" })
      expect(hover.output + (hover.failed ?? "")).not.toContain(SECRET)
      expect(diag.output + (diag.failed ?? "")).not.toContain(SECRET)
    } finally {
      await s.close()
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: AI2 lsp and an llm-only rule (sandbox required)", (route) => {
  test("AI2 hover of a file importing a constant of an llm-protected file does not show its value", async () => {
    const policy = {
      ...POLICY,
      rules: [
        ...POLICY.rules,
        { pattern: "private/**", type: "directory", deniedOperations: ["llm"], allowedRoles: [] },
      ],
    }
    const files = {
      ...TS_FILES,
      "tsconfig.json": TSCONFIG.replace('["src"]', '["src", "private"]'),
      "private/plan.ts": `export const launch = "${SECRET}"\n`,
      "src/use.ts": TS_FILES["src/use.ts"].replace("../secrets/plan", "../private/plan"),
    }
    await using dir = await project(files, policy)
    const s = await open(route, dir.path)
    try {
      const hover = await s.call("lsp", { operation: "hover", filePath: "src/use.ts", line: 2, character: 15 })
      const diag = await s.call("lsp", { operation: "diagnostics", filePath: "src/use.ts" })
      expect(hover.output + (hover.failed ?? "")).not.toContain(SECRET)
      expect(diag.output + (diag.failed ?? "")).not.toContain(SECRET)
    } finally {
      await s.close()
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: AI3 path spellings into a protected folder", (route) => {
  test("AI3 ast_grep_search, lsp and look_at given /proc, link, case and relative spellings show nothing protected", async () => {
    await using dir = await project(TS_FILES)
    fs.symlinkSync("secrets", dir.file("lnk"))
    fs.symlinkSync(dir.path, dir.file("self"))
    const s = await open(route, dir.path)
    const abs = dir.path
    const spellings = [
      `/proc/self/root${abs}/secrets/plan.ts`,
      `/proc/${process.pid}/root${abs}/secrets/plan.ts`,
      `/proc/thread-self/root${abs}/secrets/plan.ts`,
      `/proc/self/root/proc/self/root${abs}/secrets/plan.ts`,
      `${abs}//secrets///plan.ts`,
      `src/../secrets/plan.ts`,
      `lnk/plan.ts`,
      `self/secrets/plan.ts`,
      `self/lnk/plan.ts`,
      `./secrets/./plan.ts`,
      `secrets/plan.ts/`,
      `file://${abs}/secrets/plan.ts`,
      `${abs}/secrets/plan%2ets`,
    ]
    const out: string[] = []
    try {
      for (const p of spellings) {
        const folder = p.replace(/\/plan\.ts\/?$/, "")
        for (const paths of [[p], [folder]]) {
          const r = await s.call("ast_grep_search", { pattern: "export const $A = $B", lang: "typescript", paths })
          out.push(`ast ${paths}: ${r.output}${r.failed ?? ""}`)
        }
        const h = await s.call("lsp", { operation: "hover", filePath: p, line: 1, character: 15 })
        out.push(`hover ${p}: ${h.output}${h.failed ?? ""}`)
        const d = await s.call("lsp", { operation: "documentSymbol", filePath: p })
        out.push(`sym ${p}: ${d.output}${d.failed ?? ""}`)
      }
      const leaks = out.filter((o) => o.includes(SECRET))
      expect(leaks).toEqual([])
    } finally {
      await s.close()
    }
  }, 300_000)
})

describe.each(ROUTES)("route %s: AI4 /recover list across roles", (route) => {
  test("AI4 a viewer session's /recover list does not show what an admin session's interrupted command held", async () => {
    await using dir = await project(TS_FILES)
    // An admin session (may read secrets/) copies a value of secrets/plan.ts into a command, and OpenCode crashes.
    process.env.OPENCODE_SECURITY_ROLE = "admin"
    const admin = await open(route, dir.path)
    const command = `printf '%s' '${SECRET}' | wc -c`
    try {
      await admin.hook("event", {
        event: { type: "session.status", properties: { sessionID: "ses_adm", status: { type: "busy" } } },
      })
      await admin.hook(
        "tool.execute.before",
        { tool: "bash", sessionID: "ses_adm", callID: "c_adm" },
        { args: { command } },
      )
    } finally {
      delete process.env.OPENCODE_SECURITY_ROLE
    }
    // The crash: the heartbeat's owner process is gone (a pid no process has).
    const folder = dir.file(".opencode/builtins-local/recovery")
    const files = fs.readdirSync(folder).filter((f) => f.endsWith(".json"))
    expect(files.length).toBeGreaterThan(0)
    for (const f of files) {
      const { seal: _, ...beat } = JSON.parse(fs.readFileSync(path.join(folder, f), "utf8"))
      beat.owner.pid = 2 ** 22 + 7
      // Sealed again, as the crashed process would have written it (LocalSeal).
      fs.writeFileSync(path.join(folder, f), LocalSeal.seal(path.join(folder, f), "recovery", JSON.stringify(beat)))
    }
    // The next OpenCode, started without a role (the lowest, viewer): the user types /recover.
    const viewer = await open(route, dir.path)
    try {
      const output = { parts: [{ type: "text", text: "template" }] }
      await viewer.hook(
        "command.execute.before",
        { command: "recover", sessionID: "ses_view", arguments: "list" },
        output,
      )
      const text = output.parts.map((p) => p.text).join("\n")
      expect(text).toContain("ses_adm")
      expect(text).toContain("withheld")
      expect(text).not.toContain(SECRET)
      // Resume and dismiss would show (and note) the calls: refused from a session of another role.
      for (const verb of ["resume", "dismiss"]) {
        const out = { parts: [{ type: "text", text: "template" }] }
        await viewer.hook(
          "command.execute.before",
          { command: "recover", sessionID: "ses_view", arguments: `${verb} ses_adm` },
          out,
        )
        const said = out.parts.map((p) => p.text).join("\n")
        expect(said).toContain("another security role or policy")
        expect(said).not.toContain(SECRET)
      }
      expect(fs.readdirSync(folder).some((f) => f.startsWith("ses_adm"))).toBe(true)
    } finally {
      await viewer.close()
      await admin.close()
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: AI5 the resource index cache across roles", (route) => {
  test("AI5 a viewer's command does not read an admin-only article's text from the resource index cache", async () => {
    const policy = {
      ...POLICY,
      rules: [
        ...POLICY.rules,
        {
          pattern: ".opencode/knowledge-base/finance/**",
          type: "directory",
          deniedOperations: ["read", "llm"],
          allowedRoles: ["admin"],
        },
      ],
    }
    const files = {
      ".opencode/knowledge-base/finance/launch.md": `---\ntitle: Launch plan\ndescription: ${SECRET}\ntags: [launch]\n---\nThe board decided: ${SECRET}.\n`,
      ".opencode/knowledge-base/public.md": "---\ntitle: Public\ndescription: public page\n---\nHello.\n",
    }
    await using dir = await project(files, policy)
    // An admin session: the article is indexed (and the index cached in the user's cache folder).
    process.env.OPENCODE_SECURITY_ROLE = "admin"
    const admin = await open(route, dir.path)
    try {
      const q = await admin.call("resource-query", { query: "launch" })
      expect(q.output).toContain("launch")
    } finally {
      await admin.close()
      delete process.env.OPENCODE_SECURITY_ROLE
    }
    const cacheDir = path.join(process.env.XDG_CACHE_HOME!, "opencode-builtins", "resource-index")
    // This project's files (the folder is shared by the tests of this file).
    const stem = path.basename(ResourceCache.defaultPath(dir.path), ".json")
    const ours = () =>
      (fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir) : [])
        .filter((f) => f.startsWith(stem))
        .map((f) => [f, fs.readFileSync(path.join(cacheDir, f), "utf8")] as const)
    for (let i = 0; i < 100 && !ours().some(([, text]) => text.includes(SECRET)); i++) await Bun.sleep(50)
    // The admin's index, in a file of the admin's scope.
    const adminFiles = ours().filter(([, text]) => text.includes(SECRET))
    expect(adminFiles.length).toBe(1)
    // A viewer session (no role): a shell command reads the cache folder, whatever the files are named; the read tool
    // is given each file by name.
    const viewer = await openShell(route === "fork" ? "core" : "plugin", dir.path)
    try {
      // Named in the command: refused before it runs. Spelled so no check can see it: the sandbox's answer.
      const named = await viewer.bash(`cat ${cacheDir}/*.json | tr ',' '\\n' | grep -i fourth; ls -a ${cacheDir}`)
      expect(named.output).not.toContain(SECRET)
      const spelled = Buffer.from(cacheDir).toString("base64")
      const r = await viewer.bash(
        `d=$(echo ${spelled} | base64 -d); cat "$d"/*.json | tr ',' '\\n' | grep -i fourth; ls -a "$d"`,
      )
      expect(r.refused).toBe(false)
      expect(r.output).not.toContain(SECRET)
      expect(r.output).toContain("Permission denied")
      for (const name of fs.readdirSync(cacheDir)) {
        const read = await viewer.call("read", { filePath: path.join(cacheDir, name) }, { noExecute: true })
        expect(read.refused).toBe(true)
      }
    } finally {
      await viewer.close()
    }
    // The viewer's own process (the cache as its index uses it): it writes a file of its own, holding nothing of the
    // article, and leaves the admin's as it was.
    const reader = await open(route, dir.path)
    try {
      expect((await reader.call("resource-query", { query: "launch" })).output).not.toContain(SECRET)
    } finally {
      await reader.close()
    }
    const viewerFile = () =>
      ours().find(([, text]) => text.includes("public page") && !text.includes(SECRET) && !text.includes("launch"))
    for (let i = 0; i < 100 && !viewerFile(); i++) await Bun.sleep(50)
    expect(viewerFile()).toBeDefined()
    expect(ours().filter(([, text]) => text.includes(SECRET))).toEqual(adminFiles)
  }, 120_000)
})

describe.each(ROUTES)("route %s: AI7 a nested policy's relative rule", (route) => {
  test("AI7 ast_grep_search and lsp over a folder whose nested policy protects a name at any depth", async () => {
    const files = {
      ...TS_FILES,
      "tsconfig.json": TSCONFIG.replace('["src"]', '["src", "pkg"]'),
      "pkg/.opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [{ pattern: "private.ts", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
      }),
      "pkg/deep/er/private.ts": `export const plan = "${SECRET}"\n`,
      "pkg/deep/use.ts": 'import { plan } from "./er/private"\nexport const copy = plan\n',
    }
    await using dir = await project(files)
    const s = await open(route, dir.path)
    const out: string[] = []
    try {
      for (const paths of [["pkg"], ["pkg/deep/er"], ["pkg/deep/er/private.ts"], ["PKG/deep/er/private.ts"], ["."]]) {
        const r = await s.call("ast_grep_search", { pattern: "export const $A = $B", lang: "typescript", paths })
        out.push(`ast ${paths}: ${r.output}${r.failed ?? ""}${r.refused ?? ""}`)
      }
      const h = await s.call("lsp", { operation: "hover", filePath: "pkg/deep/use.ts", line: 2, character: 15 })
      out.push(`hover: ${h.output}${h.failed ?? ""}${h.refused ?? ""}`)
      const d = await s.call("lsp", { operation: "diagnostics" })
      out.push(`diag: ${d.output}${d.failed ?? ""}`)
      expect(out.filter((o) => o.includes(SECRET))).toEqual([])
    } finally {
      await s.close()
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: AI8 the local state folder through our own tools", (route) => {
  test("AI8 a heartbeat's command is not readable through ast_grep_search, lsp or look_at", async () => {
    await using dir = await project(TS_FILES)
    const s = await open(route, dir.path)
    const out: string[] = []
    try {
      await s.hook("event", {
        event: { type: "session.status", properties: { sessionID: "ses_hb", status: { type: "busy" } } },
      })
      await s.hook(
        "tool.execute.before",
        { tool: "bash", sessionID: "ses_hb", callID: "c_hb" },
        { args: { command: `echo '${SECRET}'; sleep 30` } },
      )
      const folder = ".opencode/builtins-local/recovery"
      const beat = fs.readdirSync(dir.file(folder)).find((f) => f.endsWith(".json"))!
      fs.symlinkSync(".opencode/builtins-local", dir.file("state"))
      for (const paths of [
        [".opencode"],
        [folder],
        [`${folder}/${beat}`],
        ["state"],
        [`/proc/self/root${dir.path}/.opencode`],
      ]) {
        for (const lang of ["json", "yaml", "typescript"]) {
          const r = await s.call("ast_grep_search", { pattern: "$A", lang, paths })
          out.push(`ast ${lang} ${paths}: ${r.output}${r.failed ?? ""}`)
        }
      }
      for (const file_path of [`${folder}/${beat}`, `state/recovery/${beat}`]) {
        const r = await s.call("look_at", { file_path, goal: "transcribe" })
        out.push(`look ${file_path}: ${r.output}${r.failed ?? ""}`)
        const h = await s.call("lsp", { operation: "documentSymbol", filePath: file_path })
        out.push(`lsp ${file_path}: ${h.output}${h.failed ?? ""}`)
      }
      expect(out.filter((o) => o.includes(SECRET))).toEqual([])
    } finally {
      await s.close()
    }
  }, 120_000)
})

describe("AI5d (held, guard) the resource index cache after the policy protects an article (same session, plugin route)", () => {
  test("AI5d a command after the new rule does not read the article's description from the cache", async () => {
    const files = {
      ".opencode/knowledge-base/finance/launch.md": `---\ntitle: Launch plan\ndescription: ${SECRET}\ntags: [launch]\n---\nBody.\n`,
      ".opencode/knowledge-base/public.md": "---\ntitle: Public\ndescription: public page\n---\nHello.\n",
    }
    await using dir = await project(files)
    const s = await openShell("plugin", dir.path)
    try {
      const q = await s.call("resource-query", { query: "launch" })
      expect(q.output).toContain(SECRET)
      const cacheDir = path.join(process.env.XDG_CACHE_HOME!, "opencode-builtins", "resource-index")
      const cached = () =>
        fs.existsSync(cacheDir) &&
        fs.readdirSync(cacheDir).some((f) => fs.readFileSync(path.join(cacheDir, f), "utf8").includes(dir.path))
      for (let i = 0; i < 100 && !cached(); i++) await Bun.sleep(50)
      // The user protects the folder (editor, mid-session).
      const policy = JSON.parse(fs.readFileSync(dir.file(".opencode-security.json"), "utf8"))
      policy.rules.push({
        pattern: ".opencode/knowledge-base/finance/**",
        type: "directory",
        deniedOperations: ["read", "llm"],
        allowedRoles: [],
      })
      fs.writeFileSync(dir.file(".opencode-security.json"), JSON.stringify(policy))
      await Bun.sleep(700) // past the policy check interval (500 ms)
      const again = await s.call("resource-query", { query: "launch" })
      const r = await s.bash(`grep -h -o '"description":"[^"]*"' ${cacheDir}/*.json`)
      expect(again.output).not.toContain(SECRET)
      expect(r.output).not.toContain(SECRET)
    } finally {
      await s.close()
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: AI9 README injection through links and case variants", (route) => {
  test("AI9 a README that is a link into a protected folder (or a folder link) is not injected", async () => {
    const files = {
      ...TS_FILES,
      "secrets/README.md": `# Plan\n${SECRET}\n`,
      "secrets/x.ts": "export const x = 1\n",
      "pkg/x.ts": "export const x = 1\n",
      "pkg2/x.ts": "export const y = 1\n",
      "pkg3/x.ts": "export const z = 1\n",
      "pkg4/x.ts": "export const w = 1\n",
      "pkg4/README.md": "# Pkg4\ncontrol readme phrase\n",
    }
    await using dir = await project(files)
    fs.symlinkSync("../secrets/README.md", dir.file("pkg/README.md"))
    fs.symlinkSync(`/proc/self/root${dir.path}/secrets/README.md`, dir.file("pkg2/readme.md"))
    fs.symlinkSync("secrets", dir.file("alias"))
    fs.linkSync(dir.file("secrets/README.md"), dir.file("pkg3/README.markdown"))
    const s = await open(route, dir.path)
    const out: string[] = []
    try {
      for (const f of ["pkg4/x.ts", "pkg/x.ts", "pkg2/x.ts", "pkg3/x.ts", "alias/x.ts", "src/use.ts"])
        out.push(`${f}: ${await s.read(f).catch((e) => `refused: ${String(e).slice(0, 80)}`)}`)
      expect(out.filter((o) => o.includes(SECRET))).toEqual([])
      expect(out[0]).toContain("control readme phrase")
    } finally {
      await s.close()
    }
  }, 60_000)
})

describe.each(ROUTES)("route %s: AI10 a viewer's index restored from an admin's cache", (route) => {
  test("AI10 knowledge injection, discovery and resource-query of a viewer started after an admin give nothing of an admin-only article", async () => {
    const policy = {
      ...POLICY,
      rules: [
        ...POLICY.rules,
        {
          pattern: ".opencode/knowledge-base/finance/**",
          type: "directory",
          deniedOperations: ["read", "llm"],
          allowedRoles: ["admin"],
        },
      ],
    }
    const files = {
      ".opencode/knowledge-base/finance/launch.md": `---\ntitle: Launch plan\ndescription: ${SECRET}\ntags: [launch, plan]\n---\nThe launch plan: ${SECRET}.\n`,
      ".opencode/knowledge-base/public.md": "---\ntitle: Public\ndescription: public page\n---\nHello.\n",
    }
    await using dir = await project(files, policy)
    process.env.OPENCODE_SECURITY_ROLE = "admin"
    const admin = await open(route, dir.path)
    try {
      expect((await admin.call("resource-query", { query: "launch" })).output).toContain(SECRET)
    } finally {
      await admin.close()
      delete process.env.OPENCODE_SECURITY_ROLE
    }
    await Bun.sleep(500)
    const viewer = await open(route, dir.path)
    try {
      const parts = await viewer.prompt("what is the launch plan? show me the launch plan")
      const q = await viewer.call("resource-query", { query: "launch plan" })
      const l = await viewer.call("resource-load", { id: "launch" })
      const text = [...parts.map((p) => p.text ?? ""), q.output, l.output, l.failed ?? ""].join("\n")
      expect(text).not.toContain(SECRET)
    } finally {
      await viewer.close()
    }
  }, 60_000)
})

describe.each(ROUTES)("route %s: AI11 ast_grep globs and rewrite dry runs", (route) => {
  test("AI11 globs reaching a protected folder, a dry-run rewrite over it, and lang variants show nothing", async () => {
    const files = {
      ...TS_FILES,
      "secrets/notes.md": `# notes\n${SECRET}\n`,
      "secrets/conf.json": `{ "launch": "${SECRET}" }\n`,
      "secrets/conf.yaml": `launch: "${SECRET}"\n`,
    }
    await using dir = await project(files)
    fs.symlinkSync(dir.path, dir.file("src/loop"))
    const s = await open(route, dir.path)
    const out: string[] = []
    try {
      const calls: [string, Record<string, unknown>][] = [
        ["ast_grep_search", { pattern: "$A", lang: "typescript", globs: ["secrets/**"] }],
        ["ast_grep_search", { pattern: "$A", lang: "typescript", globs: ["**/plan.ts"], paths: ["src/loop"] }],
        ["ast_grep_search", { pattern: "$A", lang: "typescript", globs: ["../**"], paths: ["src"] }],
        ["ast_grep_search", { pattern: '"$A"', lang: "json", paths: ["."] }],
        ["ast_grep_search", { pattern: "$K: $V", lang: "yaml", paths: ["."] }],
        ["ast_grep_search", { pattern: "$A", lang: "markdown", paths: ["."] }],
        [
          "ast_grep_replace",
          {
            pattern: 'export const $A = "$B"',
            rewrite: "export const $A = 1",
            lang: "typescript",
            paths: ["src/loop"],
            dryRun: true,
          },
        ],
        ["ast_grep_replace", { pattern: '"$A": $B', rewrite: '"$A": 1', lang: "json", paths: ["."], dryRun: true }],
      ]
      for (const [tool, args] of calls) {
        const r = await s.call(tool, args)
        out.push(`${tool} ${JSON.stringify(args)}: ${r.output}${r.failed ?? ""}${r.refused ?? ""}`)
      }
      expect(out.filter((o) => o.includes(SECRET))).toEqual([])
    } finally {
      await s.close()
    }
  }, 120_000)
})

describe.each(ROUTES)("route %s: AI12 our tools on OpenCode's auth.json with HOME spelled through a link", (route) => {
  test("AI12 ast_grep_search and look_at by the real path or the link do not show auth.json", async () => {
    const realHome = process.env.HOME!
    const link = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-AI-linked-home-")) + "/home"
    fs.symlinkSync(realHome, link)
    const data = path.join(realHome, ".local/share/opencode")
    fs.mkdirSync(data, { recursive: true })
    fs.writeFileSync(path.join(data, "auth.json"), '{"anthropic":{"type":"api","key":"AUTHSECRET123"}}\n')
    const saved = { HOME: process.env.HOME, XDG_DATA_HOME: process.env.XDG_DATA_HOME }
    process.env.HOME = link
    process.env.XDG_DATA_HOME = path.join(link, ".local/share")
    const out: string[] = []
    try {
      await using dir = await project(TS_FILES)
      const s = await open(route, dir.path)
      try {
        for (const base of [data, path.join(link, ".local/share/opencode"), `/proc/self/root${data}`]) {
          for (const paths of [[base], [path.join(base, "auth.json")]]) {
            const r = await s.call("ast_grep_search", { pattern: '"$A"', lang: "json", paths })
            out.push(`ast ${paths}: ${r.output}${r.failed ?? ""}${r.refused ?? ""}`)
          }
          const l = await s.call("look_at", { file_path: path.join(base, "auth.json"), goal: "x" })
          out.push(`look ${base}: ${l.output}${l.failed ?? ""}${l.refused ?? ""}`)
        }
        expect(out.filter((o) => o.includes("AUTHSECRET123"))).toEqual([])
      } finally {
        await s.close()
      }
    } finally {
      Object.assign(process.env, saved)
      fs.rmSync(path.dirname(link), { recursive: true, force: true })
    }
  }, 60_000)
})
