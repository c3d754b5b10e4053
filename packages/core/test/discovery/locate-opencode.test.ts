import { describe, expect, test } from "bun:test"
import { existsSync, realpathSync } from "fs"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { DiscoveryCache } from "../../discovery/cache"
import { DiscoveryDirectories } from "../../discovery/directories"
import { DiscoveryLocate } from "../../discovery/locate"
import { DiscoveryScan } from "../../discovery/scan"
import { md } from "../fixture"

/**
 * The locator against OpenCode itself: the pinned stock binaries (1.2.15 and 1.18.33, dev dependencies) list the
 * skills (`opencode debug skill`) and agents (`opencode agent list`, `opencode debug agent <name>`) of one tricky
 * project, and the locator must name the same things from the same files; discovery's scan must list the skills and
 * OpenCode commands the binary loads (`opencode debug skill`, `opencode debug config`) and no other. Skipped when a
 * binary is not installed.
 */
const ROOT = path.resolve(import.meta.dir, "../../../..")

function binary(pkg: string): string | undefined {
  const base = path.join(ROOT, "node_modules", pkg)
  for (const dir of [path.join(base, "node_modules"), path.join(ROOT, "node_modules")])
    for (const suffix of ["", "-baseline"]) {
      const file = path.join(
        dir,
        `opencode-${os.platform()}-${os.arch() === "arm64" ? "arm64" : "x64"}${suffix}`,
        "bin/opencode",
      )
      if (existsSync(file) && (dir === path.join(base, "node_modules") || pkg === "opencode-ai")) return file
    }
  return undefined
}

const BINARIES: [DiscoveryLocate.Version, string | undefined, string][] = [
  ["1.2.15", binary("opencode-ai"), "1.2.15"],
  ["1.18", binary("opencode-ai-latest"), "1.18.33"],
]

const FILES: Record<string, string> = {
  // External skills: global, then every folder from the working directory up to the worktree.
  "home/.claude/skills/g/SKILL.md": md({ name: "shared", description: "global claude" }),
  "home/.agents/skills/g/SKILL.md": md({ name: "agents-global", description: "global agents" }),
  "project/.claude/skills/p/SKILL.md": md({ name: "shared", description: "root claude" }),
  "project/.agents/skills/deep/er/still/SKILL.md": md({ name: "nested-agents", description: "deep" }),
  "project/.claude/skills/.hidden/SKILL.md": md({ name: "hidden-claude", description: "dot folder, external" }),
  "project/pkg/.claude/skills/p/SKILL.md": md({ name: "near", description: "pkg claude" }),
  "project/pkg/.agents/skills/p/SKILL.md": md({ name: "near", description: "pkg agents" }),
  // Nearest first, so the farther folder's skill is loaded last.
  "project/pkg/.claude/skills/updown/SKILL.md": md({ name: "updown", description: "nearer" }),
  "project/.claude/skills/updown/SKILL.md": md({ name: "updown", description: "farther" }),
  // OpenCode's config folders.
  "xdg/config/opencode/skills/x/SKILL.md": md({ name: "xdg-skill", description: "xdg" }),
  "project/pkg/.opencode/skill/o/SKILL.md": md({ name: "shared", description: "pkg opencode" }),
  "project/.opencode/skills/o/SKILL.md": md({ name: "opencode-one", description: "root opencode" }),
  "project/.opencode/skills/.hidden/SKILL.md": md({ name: "hidden-opencode", description: "dot folder" }),
  "project/.opencode/skills/lower/skill.md": md({ name: "lower-case-file", description: "wrong case" }),
  "project/.opencode/skills/nodesc/SKILL.md": md({ name: "no-description" }),
  "project/.opencode/skills/numdesc/SKILL.md": "---\nname: number-description\ndescription: 5\n---\n",
  "project/.opencode/skills/noname/SKILL.md": md({ description: "no name" }),
  "project/.opencode/skills/colon/SKILL.md":
    "---\nname: colon-skill\ndescription: Use when: the user asks\n---\nbody\n",
  "project/.opencode/skills/odd/SKILL.md": md({ name: "Odd Name/ünï", description: "odd & <chars>" }),
  "home/.opencode/skill/h/SKILL.md": md({ name: "home-opencode", description: "home .opencode" }),
  "project/linked-target/SKILL.md": md({ name: "linked", description: "through a link" }),
  // skills.paths, relative to the working directory.
  "project/pkg/extra/e/SKILL.md": md({ name: "extra", description: "from skills.paths" }),
  // Agents: merged across config folders, later wins per field.
  "xdg/config/opencode/agent/reviewer.md": md({ description: "global reviewer" }, "GLOBAL PROMPT"),
  "project/pkg/.opencode/agents/reviewer.md": md({ description: "pkg reviewer" }, "PKG PROMPT"),
  "project/.opencode/agent/reviewer.md": md({ mode: "subagent" }, "ROOT PROMPT"),
  "project/.opencode/agent/team/lead.md": md({ description: "leads" }, "LEAD"),
  "project/.opencode/agent/renamed.md": md({ name: "Custom Name", description: "renamed" }, "RENAMED"),
  "project/.opencode/modes/focus.md": md({ description: "focus mode" }, "FOCUS"),
  "home/.opencode/agents/homey.md": md({ description: "home agent" }, "HOMEY"),
  // Skill shapes of real collections (RW1, RW2): nested one level deeper, no frontmatter, a dot folder, the folder's
  // own SKILL.md, one in node_modules (OpenCode loads it; discovery reports the folder instead).
  "project/.claude/skills/document-skills/pdf/SKILL.md": md({ name: "pdf", description: "nested" }),
  "project/.claude/skills/SKILL.md": md({ name: "claude-root", description: "the folder's own" }),
  "project/.claude/skills/nofm/SKILL.md": "# Kubernetes helper\n\nDeploy clusters.\n",
  "project/.claude/skills/tool/node_modules/pkg/SKILL.md": md({ name: "packaged", description: "installed" }),
  // Commands (RW follow-up): nested, in a dot folder, a dot file, named in frontmatter, without frontmatter.
  "project/.opencode/command/git/squash.md": md({ description: "squash" }, "Squash"),
  "project/.opencode/command/.drafts/x.md": md({ description: "draft" }, "Draft"),
  "project/.opencode/commands/.dotted.md": md({ description: "dot file" }, "Dot"),
  "project/.opencode/command/named.md": md({ name: "other-name", description: "named" }, "Named"),
  "project/.opencode/command/plain.md": "Just a template\n",
  "xdg/config/opencode/commands/global-cmd.md": md({ description: "global plural" }, "Global"),
  "project/opencode.json": JSON.stringify({ $schema: "https://opencode.ai/config.json", skills: { paths: ["extra"] } }),
}

async function world() {
  const root = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-locate-")))
  for (const [rel, text] of Object.entries(FILES)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await fs.writeFile(path.join(root, rel), text)
  }
  await fs.symlink(path.join(root, "project/linked-target"), path.join(root, "project/.opencode/skills/linked"))
  for (const d of ["xdg/data", "xdg/cache", "xdg/state"]) await fs.mkdir(path.join(root, d), { recursive: true })
  await Bun.spawn(["git", "init", "-q"], { cwd: path.join(root, "project") }).exited
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: path.join(root, "home"),
    XDG_CONFIG_HOME: path.join(root, "xdg/config"),
    XDG_DATA_HOME: path.join(root, "xdg/data"),
    XDG_CACHE_HOME: path.join(root, "xdg/cache"),
    XDG_STATE_HOME: path.join(root, "xdg/state"),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    NO_COLOR: "1",
  }
  return { root, env, [Symbol.asyncDispose]: () => fs.rm(root, { recursive: true, force: true }) }
}

/** Keeps OpenCode offline: every config folder declares the plugin version it would otherwise install. */
async function pinConfigDirs(root: string, version: string) {
  for (const dir of ["project/.opencode", "project/pkg/.opencode", "home/.opencode", "xdg/config/opencode"]) {
    const d = path.join(root, dir)
    await fs.mkdir(path.join(d, "node_modules"), { recursive: true })
    await fs.writeFile(
      path.join(d, "package.json"),
      JSON.stringify({ dependencies: { "@opencode-ai/plugin": version } }),
    )
    await fs.writeFile(
      path.join(d, "package-lock.json"),
      JSON.stringify({ packages: { "": { dependencies: { "@opencode-ai/plugin": version } } } }),
    )
  }
}

async function opencode(bin: string, args: string[], cwd: string, env: Record<string, string>): Promise<string> {
  const proc = Bun.spawn([bin, ...args], { cwd, env: { ...env, PWD: cwd }, stdout: "pipe", stderr: "pipe" })
  const timer = setTimeout(() => proc.kill(), 90_000)
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  clearTimeout(timer)
  if (code !== 0) throw new Error(`opencode ${args.join(" ")} exited ${code}: ${err.slice(0, 2000)}`)
  return out
}

/** The JSON value printed after any start-up lines (a database migration notice). */
function json(out: string): any {
  const start = out.search(/^[[{]/m)
  return JSON.parse(out.slice(start))
}

describe("DiscoveryLocate agrees with OpenCode", () => {
  for (const [version, bin, full] of BINARIES) {
    test.skipIf(!bin)(
      `${full}: the skills and agents OpenCode loads, from the files the locator names`,
      async () => {
        await using w = await world()
        await pinConfigDirs(w.root, full)
        const cwd = path.join(w.root, "project/pkg")
        const locate = DiscoveryLocate.create({
          directory: cwd,
          worktree: path.join(w.root, "project"),
          home: w.env.HOME,
          env: w.env,
          config: { skills: { paths: ["extra"] } },
          versions: [version],
        })

        const skills = json(await opencode(bin!, ["debug", "skill"], cwd, w.env)) as {
          name: string
          description?: string
          location: string
        }[]
        const located = await locate.all("skill")
        const onDisk = skills.filter((s) => s.location !== "<built-in>")
        expect(located.map((r) => r.name).sort()).toEqual(onDisk.map((s) => s.name).sort())
        for (const s of onDisk) {
          const r = located.find((x) => x.name === s.name)!
          // OpenCode's file is among the candidates; when only one file defines the name it is the one.
          expect(r.candidates.map((c) => c.file)).toContain(s.location)
          if (!r.byVersion[version]!.ambiguous) expect(r.byVersion[version]!.likely).toBe(s.location)
          expect(r.candidates.find((c) => c.file === s.location)!.description).toBe(s.description)
        }
        if (version === "1.18") expect(skills.some((s) => s.location === "<built-in>")).toBe(true)
        // v1.2.15's order decides between folders; v1.18 parses all at once, so only membership is checked above.
        if (version === "1.2.15") {
          const winner = (name: string) => path.relative(w.root, onDisk.find((s) => s.name === name)!.location)
          expect(winner("updown")).toBe("project/.claude/skills/updown/SKILL.md")
          expect(winner("near")).toBe("project/pkg/.agents/skills/p/SKILL.md")
          expect(winner("shared")).toBe("project/pkg/.opencode/skill/o/SKILL.md")
        }

        const listed = (await opencode(bin!, ["agent", "list"], cwd, w.env))
          .split("\n")
          .flatMap((line) => /^(\S.*) \((?:primary|subagent|all)\)$/.exec(line)?.slice(1, 2) ?? [])
        const agents = (await locate.all("agent")).map((r) => r.name)
        const fromFiles = listed.filter((n) => !(DiscoveryLocate.BUILTIN_AGENTS as readonly string[]).includes(n))
        expect(fromFiles.sort()).toEqual(agents.sort())

        const reviewer = json(await opencode(bin!, ["debug", "agent", "reviewer"], cwd, w.env))
        const r = await locate.agent("reviewer")
        const likely = r.candidates.find((c) => c.file === r.byVersion[version]!.likely)!
        expect(reviewer.prompt).toBe(likely.body)
        expect(reviewer.description).toBe(r.candidates.filter((c) => c.description !== undefined).at(-1)!.description)
        expect(r.candidates.map((c) => path.relative(w.root, c.file))).toEqual([
          "xdg/config/opencode/agent/reviewer.md",
          "project/pkg/.opencode/agents/reviewer.md",
          "project/.opencode/agent/reviewer.md",
        ])
      },
      240_000,
    )
  }

  // RW1, RW2: discovery suggested skills OpenCode does not load (no frontmatter) and missed ones it does (nested
  // deeper than one folder, in `.agents` and OpenCode's plural global folders); the same for dot-named commands.
  for (const [version, bin, full] of BINARIES) {
    test.skipIf(!bin)(
      `${full}: discovery lists the skills and OpenCode commands OpenCode loads, and no other`,
      async () => {
        await using w = await world()
        await pinConfigDirs(w.root, full)
        const cwd = path.join(w.root, "project/pkg")
        const places = DiscoveryDirectories.resolve({
          directory: cwd,
          worktree: path.join(w.root, "project"),
          env: w.env,
        })
        const scans = await DiscoveryScan.all(places, { cache: new DiscoveryCache(), timeoutMs: 30_000 })
        const found = (type: string) =>
          [
            ...new Set(
              scans
                .flatMap((r) => r.items)
                .filter((i) => i.resourceType === type)
                .map((i) => i.name),
            ),
          ].sort()
        const problems = scans.flatMap((r) => r.problems).map((p) => path.relative(w.root, p.path))

        const loaded = (
          json(await opencode(bin!, ["debug", "skill"], cwd, w.env)) as { name: string; location: string }[]
        )
          .filter((s) => s.location !== "<built-in>")
          // Not discovery's to find: `skills.paths` of the configuration (not read), an installed package (reported),
          // a skill without description (1.18 loads it, 1.2.15 does not: not suggested).
          .filter((s) => !["extra", "packaged", "no-description"].includes(s.name))
          .map((s) => s.name)
        expect(found("skill")).toEqual([...new Set(loaded)].sort())
        expect(problems).toContain("project/.claude/skills/nofm/SKILL.md")
        expect(problems).toContain("project/.claude/skills/tool/node_modules")

        const config = json(await opencode(bin!, ["debug", "config"], cwd, w.env))
        expect(found("command")).toEqual(Object.keys(config.command ?? {}).sort())
      },
      240_000,
    )
  }
})
