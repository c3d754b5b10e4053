import fs from "fs/promises"
import path from "path"
import { pathToFileURL } from "url"
import { ResourceAccess } from "../resource/access"
import { Frontmatter } from "../util/frontmatter"
import { DiscoveryDirectories } from "./directories"

/**
 * Where OpenCode finds a skill and an agent, so that the security guard can judge the `skill` tool (which loads a
 * SKILL.md into the conversation) and the `task` tool (which makes an agent file the system prompt of a subagent)
 * before they run, and redact protected entries from tool definitions and system prompts.
 *
 * The rules are OpenCode's own, read from its source (v1.2.15 and v1.18.3), not discovery's suggestion rules:
 *
 * - **Skills**, in load order (a later file with the same `name` replaces an earlier one):
 *   1. unless disabled by flags, `~/.claude/skills/**\/SKILL.md` then `~/.agents/skills/**\/SKILL.md` (dot folders
 *      included), `~` being `OPENCODE_TEST_HOME` or the home directory;
 *   2. the same below every `.claude` and `.agents` folder from the working directory up to the worktree (all the way
 *      to `/` outside git), nearest first — so the farthest wins, and `.agents` wins over `.claude` of one folder;
 *   3. `{skill,skills}/**\/SKILL.md` (no dot folders) in OpenCode's config folders: `$XDG_CONFIG_HOME/opencode`,
 *      every `.opencode` from the working directory up to the worktree (nearest first), `~/.opencode`,
 *      `$OPENCODE_CONFIG_DIR`;
 *   4. `**\/SKILL.md` below each `skills.paths` entry of the configuration (`~/` expanded, relative to the working
 *      directory), then below the downloaded `skills.urls` (`$XDG_CACHE_HOME/opencode/skills/*`).
 *
 *   The name is the frontmatter `name`, exactly (no folder fallback, case-sensitive); v1.2.15 skips a skill without a
 *   text `description`, v1.18 one whose `description` is present but not text. v1.2.15 disables steps 1–2 with any of
 *   `OPENCODE_DISABLE_CLAUDE_CODE`, `…_CLAUDE_CODE_SKILLS`, `…_EXTERNAL_SKILLS`; v1.18 drops only `.claude` for the
 *   first two and both for the last. v1.18 parses all files concurrently, so which of two files with one name wins
 *   is not determined; v1.2.15 too within one external folder. v1.18 also has a built-in `customize-opencode`.
 * - **Agents**: in each config folder of step 3, in that order, `{agent,agents}/**\/*.md` then `{mode,modes}/*.md`
 *   (dot files included). The name is the frontmatter `name` when present (any value, as JavaScript makes it a key),
 *   else the path below `agent/` without its extension (`agent/review/deep.md` is `review/deep`). v1.2.15 finds that
 *   path by the first of `/.opencode/agent/`, `/.opencode/agents/`, `/agent/`, `/agents/` anywhere in the absolute
 *   path (so `/home/agent/…` misleads it); v1.18 strips `agent/` or `agents/` from the path relative to the folder.
 *   Definitions of one name are merged field by field, later folders winning: the system prompt is the body of the
 *   last file, the description the last one given. Agents can also come from the JSON configuration (`config.agent`).
 * - Frontmatter is gray-matter's YAML, retried once with values holding a colon turned into block scalars (as
 *   OpenCode does for Claude Code's looser files); a file that still fails is not loaded. Globs match names
 *   case-sensitively except on macOS and Windows, follow symbolic links, and a link loop is not followed twice.
 *
 * Every file that may define a name is returned: the guard refuses when any of them (or a skill's folder) is
 * protected. Results are cached and revalidated by the modification times of every folder and file involved.
 *
 * @example
 * const locate = DiscoveryLocate.create({ directory: "/repo", worktree: "/repo", home: "/home/me" })
 * const skill = await locate.skill("pdf") // every SKILL.md OpenCode could load as "pdf"
 * const reason = await locate.refusal("skill", "pdf", host) // the policy's reason when any of them is protected
 */
export namespace DiscoveryLocate {
  export const VERSIONS = ["1.2.15", "1.18"] as const
  export type Version = (typeof VERSIONS)[number]
  export type Kind = "skill" | "agent"

  /** OpenCode agents that exist without a file (a file of the same name changes their fields). */
  export const BUILTIN_AGENTS = ["build", "plan", "general", "explore", "compaction", "title", "summary"] as const
  /** v1.18's skill that exists without a file (a SKILL.md of the same name replaces it). */
  export const BUILTIN_SKILL = "customize-opencode"
  /** What the task tool says of an agent without a description. */
  export const NO_DESCRIPTION = "This subagent should only be called manually by the user."

  /** The parts of OpenCode's configuration (`opencode.json`, merged) that add places or agents. */
  export type Config = {
    skills?: { paths?: string[]; urls?: string[] }
    agent?: Record<string, unknown>
  }

  export type Input = {
    /** OpenCode's working directory (`Instance.directory`). */
    directory: string
    /** OpenCode's worktree (`Instance.worktree`; `/` outside git). */
    worktree: string
    /** The home directory of OpenCode's process (default: `$HOME` of `env`, else the account's). */
    home?: string
    /** OpenCode's environment (default `process.env`): XDG folders, `OPENCODE_*` flags and folders. */
    env?: Record<string, string | undefined>
    config?: Config
    /** Versions to model (default both: their candidates are merged). */
    versions?: readonly Version[]
    /** Whose glob rules apply (case-insensitive names on `darwin` and `win32`; default: this process's). */
    platform?: NodeJS.Platform
  }

  export type Candidate = {
    kind: Kind
    /** The name OpenCode gives it. */
    name: string
    /** The file, as OpenCode's glob names it (through symbolic links, not resolved). */
    file: string
    /** A skill's folder (what the skill tool lists and points at); an agent file's folder. */
    folder: string
    /** The folder that was searched. */
    root: string
    /** Which search found it. */
    origin: "claude" | "agents" | "opencode" | "skills-path" | "skills-url"
    scope: "global" | "project" | "config"
    /** The description as OpenCode holds it (absent when the file has none). */
    description?: string
    /** What OpenCode makes of the body: a skill's content, an agent's system prompt (trimmed). */
    body: string
    /** Versions that load this file under this name. */
    versions: Version[]
  }

  export type Resolution = {
    kind: Kind
    name: string
    /** Every file that may define the name, in load order (later wins) of the first version modelled. */
    candidates: Candidate[]
    /** Per version: the files in its load order and the one it most likely uses (the last). */
    byVersion: Partial<Record<Version, { files: string[]; likely?: string; ambiguous: boolean }>>
    /** A built-in of that name exists (it applies when no file defines the name). */
    builtin: boolean
    /** An agent of that name is (also) defined in the JSON configuration. */
    configured: boolean
  }

  /** What the guard removes for an item it protects (any of its files or a skill's folder is protected). */
  export type Redaction = {
    kind: Kind
    name: string
    /** The protected files (or skill folders) with the policy's reason. */
    denied: { path: string; reason: string }[]
    /**
     * Exact texts OpenCode places in tool definitions and system prompts for this item, longest first: v1.2.15's
     * `<skill>` block of the skill tool and its `'name'` example, v1.18's `<skill>` block of the system prompt and
     * its `- **name**: description` line, the task tool's `- name: description` lines, and each of their lines.
     */
    texts: string[]
    /** The name and descriptions alone (they also appear in tool errors, e.g. v1.18's list of available skills). */
    words: string[]
    /** Agents: the system prompts OpenCode could use (file bodies), to remove from system prompts. */
    prompts: string[]
  }

  export type Locator = ReturnType<typeof create>

  /**
   * A locator for one OpenCode instance. Cheap to call repeatedly: the search is redone only when a folder or file
   * involved changed.
   *
   * @example
   * const locate = DiscoveryLocate.create({ directory, worktree, env: process.env, config: { skills: { paths: [] } } })
   * (await locate.agent("reviewer")).candidates.map((c) => c.file)
   */
  export function create(input: Input) {
    const versions = input.versions?.length ? [...new Set(input.versions)] : [...VERSIONS]
    const nocase = (input.platform ?? process.platform) === "darwin" || (input.platform ?? process.platform) === "win32"
    const parsed = new Map<string, { stamp: string; doc: Doc | undefined }>()
    let snapshot: Snapshot | undefined
    let building: Promise<Snapshot> | undefined
    /** One gate per host object, so verdicts are remembered across calls while its `accessVersion` holds. */
    const gates = new WeakMap<ResourceAccess.Source, ResourceAccess.Gate>()
    const gateOf = (host: ResourceAccess.Source) => {
      let gate = gates.get(host)
      if (!gate) gates.set(host, (gate = ResourceAccess.gate(() => host)))
      return gate
    }
    let memo:
      | { snapshot: Snapshot; host: ResourceAccess.Source; version: number; markers: string; list: Redaction[] }
      | undefined
    /** Searches run and files read (parsed) so far. */
    const stats = { searches: 0, reads: 0 }

    /** The snapshot, searched again when a stamped folder or file changed; concurrent callers share one check. */
    function current(): Promise<Snapshot> {
      if (!building) building = refresh().finally(() => (building = undefined))
      return building
    }

    async function refresh(): Promise<Snapshot> {
      if (snapshot && !(await changed(snapshot.stamps))) return snapshot
      stats.searches++
      snapshot = await search(input, versions, nocase, parsed, stats)
      return snapshot
    }

    function resolution(snap: Snapshot, kind: Kind, name: string): Resolution {
      const table = kind === "skill" ? snap.skills : snap.agents
      const byVersion: Resolution["byVersion"] = {}
      const union = new Map<string, Candidate>()
      for (const v of versions) {
        const list = table[v].get(name) ?? []
        const last = list.at(-1)
        byVersion[v] = {
          files: list.map((c) => c.file),
          likely: last?.file,
          // The last file wins unless another one of its batch could have been loaded after it.
          ambiguous: !!last && list.some((c) => c !== last && c.batch === last.batch),
        }
        for (const { batch: _batch, ...c } of list) {
          const known = union.get(c.file)
          if (known) known.versions = [...new Set([...known.versions, v])]
          else union.set(c.file, { ...c, versions: [v] })
        }
      }
      return {
        kind,
        name,
        candidates: [...union.values()],
        byVersion,
        builtin:
          kind === "skill"
            ? name === BUILTIN_SKILL && versions.includes("1.18")
            : (BUILTIN_AGENTS as readonly string[]).includes(name),
        configured: kind === "agent" && !!input.config?.agent && Object.hasOwn(input.config.agent, name),
      }
    }

    /**
     * Every file OpenCode could load as the skill `name` (the skill tool's argument, matched exactly).
     *
     * @example
     * (await locate.skill("pdf")).candidates[0].folder // "/repo/.opencode/skills/pdf"
     */
    async function skill(name: string): Promise<Resolution> {
      return resolution(await current(), "skill", name)
    }

    /**
     * Every file defining the agent `name` (the task tool's `subagent_type`, matched exactly).
     *
     * @example
     * (await locate.agent("reviewer")).byVersion["1.18"]?.likely // the file whose body is the system prompt
     */
    async function agent(name: string): Promise<Resolution> {
      return resolution(await current(), "agent", name)
    }

    /**
     * Every name of a kind with its resolution.
     *
     * @example
     * for (const r of await locate.all("skill")) console.log(r.name, r.candidates.length)
     */
    async function all(kind: Kind): Promise<Resolution[]> {
      const snap = await current()
      const table = kind === "skill" ? snap.skills : snap.agents
      const names = new Set(versions.flatMap((v) => [...table[v].keys()]))
      return [...names].sort().map((n) => resolution(snap, kind, n))
    }

    /**
     * The denial reason when the tool call would load a protected file: any candidate file of the name, or for a
     * skill any candidate's folder, that `host.access(path, "read")` denies now, or whose frontmatter lies in a
     * protected segment (`host.segments`). Undefined when none is (or no file defines the name: OpenCode then fails
     * the call itself, or uses a built-in).
     *
     * @example
     * const reason = await locate.refusal("agent", args.subagent_type, host)
     * if (reason) throw new Error(reason)
     */
    async function refusal(kind: Kind, name: string, host: ResourceAccess.Source): Promise<string | undefined> {
      const snap = await current()
      const found = resolution(snap, kind, name).candidates
      // Asked afresh on every call (a handful of paths): the verdict gates a load, so no remembered answer is used.
      const denied = await ResourceAccess.gate(() => ({ access: host.access })).denied(entries(found))
      if (denied.size) return [...denied.values()][0]
      return segmented(snap, found, ResourceAccess.pairs(host))[0]?.reason
    }

    /** Candidates whose frontmatter (name, description) lies in a protected segment of the given markers. */
    function segmented(snap: Snapshot, found: readonly Candidate[], pairs: readonly ResourceAccess.Pair[]) {
      if (!pairs.length) return []
      return found
        .filter((c) => ResourceAccess.headProtected(snap.heads.get(c.file) ?? "", pairs))
        .map((c) => ({ path: c.file, reason: SEGMENT_REASON }))
    }

    /**
     * For every skill and agent the policy protects (any candidate file, or skill folder, denied by
     * `host.access(path, "read")`): the exact texts OpenCode would show of it, for the guard to redact from the
     * skill and task tool definitions, the system prompt and tool errors. Remembered while nothing changed on disk
     * and `host.accessVersion` holds.
     *
     * @example
     * for (const r of await locate.redactions(host)) for (const t of r.texts) description = description.replaceAll(t, "")
     */
    async function redactions(host: ResourceAccess.Source): Promise<Redaction[]> {
      const snap = await current()
      const version = host.accessVersion?.()
      const pairs = ResourceAccess.pairs(host)
      const markers = ResourceAccess.pairsKey(pairs)
      if (
        memo &&
        memo.snapshot === snap &&
        memo.host === host &&
        version !== undefined &&
        memo.version === version &&
        memo.markers === markers
      )
        return memo.list
      const gate = gateOf(host)
      const out: Redaction[] = []
      for (const kind of ["skill", "agent"] as const) {
        const list = await all(kind)
        const verdicts = await gate.denied(list.flatMap((r) => entries(r.candidates)))
        if (verdicts.size === 0 && !pairs.length) continue
        for (const r of list) {
          const denied = [
            ...entries(r.candidates)
              .filter((e) => verdicts.has(e.path))
              .map((e) => ({ path: e.path, reason: verdicts.get(e.path)! })),
            ...segmented(snap, r.candidates, pairs),
          ]
          if (denied.length) out.push(redaction(r, denied))
        }
      }
      memo = version === undefined ? undefined : { snapshot: snap, host, version, markers, list: out }
      return out
    }

    return { input, versions, stats, skill, agent, all, refusal, redactions }
  }

  /** The paths to ask about for candidates: each file, and each skill's folder. */
  function entries(candidates: readonly Candidate[]): ResourceAccess.Entry[] {
    const seen = new Set<string>()
    const out: ResourceAccess.Entry[] = []
    for (const c of candidates)
      for (const p of c.kind === "skill" ? [c.file, c.folder] : [c.file])
        if (!seen.has(p)) {
          seen.add(p)
          out.push({ path: p })
        }
    return out
  }

  /** The texts OpenCode renders for a resolution (see `Redaction.texts`). */
  export function redaction(r: Resolution, denied: Redaction["denied"]): Redaction {
    const texts = new Set<string>()
    const words = new Set<string>([r.name])
    const prompts = new Set<string>()
    for (const c of r.candidates) {
      if (c.description !== undefined && c.description !== "") words.add(c.description)
      if (r.kind === "skill") {
        if (c.versions.includes("1.2.15") && c.description !== undefined) {
          const block = skillBlock(r.name, c.description, pathToFileURL(c.file).href)
          texts.add(block.join("\n"))
          for (const line of block.slice(1, -1)) texts.add(line)
          texts.add(`'${r.name}'`)
        }
        if (c.versions.includes("1.18") && c.description !== undefined) {
          const block = skillBlock(r.name, c.description, escapeHtml(c.file))
          texts.add(block.join("\n"))
          for (const line of block.slice(1, -1)) texts.add(line)
          texts.add(`- **${r.name}**: ${c.description}`)
        }
      } else {
        if (c.body) prompts.add(c.body)
      }
    }
    if (r.kind === "agent") {
      const described = r.candidates.filter((c) => c.description !== undefined)
      for (const c of described) texts.add(`- ${r.name}: ${c.description}`)
      if (described.length === 0 || r.builtin || r.configured) texts.add(`- ${r.name}: ${NO_DESCRIPTION}`)
    }
    const byLength = (a: string, b: string) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0)
    return {
      kind: r.kind,
      name: r.name,
      denied,
      texts: [...texts].sort(byLength),
      words: [...words].sort(byLength),
      prompts: [...prompts],
    }
  }

  function skillBlock(name: string, description: string, location: string): string[] {
    return [
      "  <skill>",
      `    <name>${name}</name>`,
      `    <description>${description}</description>`,
      `    <location>${location}</location>`,
      "  </skill>",
    ]
  }

  /** Why an item whose frontmatter lies in a protected segment is refused and redacted. */
  export const SEGMENT_REASON = "its name or description lies in a protected segment of the security policy"

  /** v1.18's escaping of a skill's location in the system prompt. */
  export function escapeHtml(value: string): string {
    return value
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;")
      .replaceAll('"', "&quot;")
      .replaceAll("'", "&#39;")
  }

  // ---- the search ------------------------------------------------------------------------------------------------

  /** A parsed file: frontmatter data, body, and the raw text of its frontmatter (for segment checks). */
  type Doc = { data: unknown; content: string; head: string }
  /** A candidate as one version found it; `batch` names the files that version loads in no fixed order among them. */
  type Found = Omit<Candidate, "versions"> & { batch: string }
  type Table = Record<Version, Map<string, Found[]>>
  type Snapshot = {
    skills: Table
    agents: Table
    /** Every folder and file the search looked at (or for), with its stamp ("absent" when missing). */
    stamps: Map<string, string>
    /** The raw frontmatter of every candidate file. */
    heads: Map<string, string>
  }

  type Place = {
    dir: string
    /** Literal first segments (`skill`, `skills`; none: the folder itself). */
    firsts: string[]
    /** `**` after the first segment (else only the folder's own files). */
    deep: boolean
    /** Which file names match (agents: `*.md`; a skill's file is `SKILL.md`, compared by `kind`). */
    leaf: (name: string) => boolean
    /** Dot files and folders match (`**` descends into dot folders). */
    dot: boolean
    origin: Candidate["origin"]
    scope: Candidate["scope"]
    kind: Kind
    /** `{mode,modes}/*.md`: agents named by their file name. */
    mode?: boolean
  }

  /**
   * The folders a configuration's `skills.paths` names, as `version` reads them: `~/` expanded against its home,
   * relative entries against the directory OpenCode runs in.
   *
   * @example
   * DiscoveryLocate.skillPaths({ directory: "/repo", config: { skills: { paths: ["team", "~/s"] } } }, "1.18") // ["/repo/team", "/home/me/s"]
   */
  export function skillPaths(input: Input, version: Version): string[] {
    const env = input.env ?? process.env
    const directory = path.resolve(input.directory)
    const home = path.resolve(directory, input.home ?? DiscoveryDirectories.home(env))
    // Global.Path.home: `||` in v1.2.15, `??` in v1.18; v1.2.15 expands `~/` against the plain home.
    const base = version === "1.2.15" ? home : path.resolve(directory, env.OPENCODE_TEST_HOME ?? home)
    const paths: unknown = input.config?.skills?.paths
    if (!Array.isArray(paths)) return []
    return paths.flatMap((item) => {
      if (typeof item !== "string" || !item) return []
      const expanded = item.startsWith("~/") ? path.join(base, item.slice(2)) : item
      return [path.isAbsolute(expanded) ? expanded : path.join(directory, expanded)]
    })
  }

  /** What OpenCode's own places are for one version, in load order. */
  function places(input: Input, version: Version): { skills: Place[]; agents: Place[] } {
    const env = input.env ?? process.env
    const directory = path.resolve(input.directory)
    // Relative folders are relative to OpenCode's working directory, which is the project directory.
    const home = path.resolve(directory, input.home ?? DiscoveryDirectories.home(env))
    // Global.Path.home: `||` in v1.2.15, `??` in v1.18.
    const globalHome = path.resolve(
      directory,
      version === "1.2.15" ? env.OPENCODE_TEST_HOME || home : (env.OPENCODE_TEST_HOME ?? home),
    )
    const xdgConfig = path.resolve(directory, env.XDG_CONFIG_HOME || path.join(home, ".config"))
    const xdgCache = path.resolve(directory, env.XDG_CACHE_HOME || path.join(home, ".cache"))
    const on = (name: string) => {
      const value = env[name]
      // v1.2.15 lower-cases; v1.18's values are read by Effect. Only values both take as true count, so a flag is
      // never thought to drop files OpenCode still loads.
      return version === "1.2.15"
        ? ["true", "1"].includes(value?.toLowerCase() ?? "")
        : value === "true" || value === "1"
    }
    const claudeOff = on("OPENCODE_DISABLE_CLAUDE_CODE") || on("OPENCODE_DISABLE_CLAUDE_CODE_SKILLS")
    const externalOff = on("OPENCODE_DISABLE_EXTERNAL_SKILLS")
    const external =
      version === "1.2.15"
        ? claudeOff || externalOff
          ? []
          : [".claude", ".agents"]
        : externalOff
          ? []
          : [...(claudeOff ? [] : [".claude"]), ".agents"]
    const stop = path.resolve(input.worktree || directory)

    const skills: Place[] = []
    const skillPlace = (dir: string, firsts: string[], dot: boolean, origin: Place["origin"], scope: Place["scope"]) =>
      skills.push({ dir, firsts, deep: true, leaf: (n) => n === "SKILL.md", dot, origin, scope, kind: "skill" })
    for (const ext of external) skillPlace(path.join(globalHome, ext), ["skills"], true, origin(ext), "global")
    for (const root of up(directory, stop, external))
      skillPlace(root, ["skills"], true, origin(path.basename(root)), "project")

    const configDirs: { dir: string; scope: Place["scope"] }[] = [
      { dir: path.join(xdgConfig, "opencode"), scope: "global" },
    ]
    if (!on("OPENCODE_DISABLE_PROJECT_CONFIG"))
      for (const dir of up(directory, stop, [".opencode"])) configDirs.push({ dir, scope: "project" })
    configDirs.push({ dir: path.join(globalHome, ".opencode"), scope: "global" })
    if (env.OPENCODE_CONFIG_DIR)
      configDirs.push({ dir: path.resolve(directory, env.OPENCODE_CONFIG_DIR), scope: "config" })
    const uniqueDirs = configDirs.filter((d, i) => configDirs.findIndex((e) => e.dir === d.dir) === i)
    for (const d of uniqueDirs) skillPlace(d.dir, ["skill", "skills"], false, "opencode", d.scope)

    for (const dir of skillPaths(input, version)) skillPlace(dir, [], false, "skills-path", "config")
    // Downloaded skills land in `<cache>/opencode/skills/<name>/`: without fetching the index, every one there counts.
    if (input.config?.skills?.urls?.length)
      skillPlace(path.join(xdgCache, "opencode", "skills"), [], false, "skills-url", "config")

    const agents: Place[] = []
    for (const d of uniqueDirs) {
      const md = (n: string) => n.endsWith(".md")
      agents.push({
        dir: d.dir,
        firsts: ["agent", "agents"],
        deep: true,
        leaf: md,
        dot: true,
        origin: "opencode",
        scope: d.scope,
        kind: "agent",
      })
      agents.push({
        dir: d.dir,
        firsts: ["mode", "modes"],
        deep: false,
        leaf: md,
        dot: true,
        origin: "opencode",
        scope: d.scope,
        kind: "agent",
        mode: true,
      })
    }
    return { skills, agents }
  }

  function origin(folder: string): Candidate["origin"] {
    return folder === ".claude" ? "claude" : "agents"
  }

  /** OpenCode's walk up: `targets` in each folder from `start` until `stop` (or the file system root). */
  function up(start: string, stop: string, targets: string[]): string[] {
    const out: string[] = []
    for (let current = start; ;) {
      for (const t of targets) out.push(path.join(current, t))
      if (current === stop) break
      const parent = path.dirname(current)
      if (parent === current) break
      current = parent
    }
    return out
  }

  async function search(
    input: Input,
    versions: Version[],
    nocase: boolean,
    parsed: Map<string, { stamp: string; doc: Doc | undefined }>,
    stats: { reads: number },
  ): Promise<Snapshot> {
    const stamps = new Map<string, string>()
    const listings = new Map<string, Promise<string[]>>()
    const listing = (place: Place) => {
      const key = JSON.stringify([place.dir, place.firsts, place.deep, place.dot, place.kind])
      let found = listings.get(key)
      if (!found) listings.set(key, (found = globFiles(place, nocase, stamps)))
      return found
    }
    const reads = new Map<string, Promise<Doc | undefined>>()
    const read = (file: string) => {
      let doc = reads.get(file)
      if (!doc) reads.set(file, (doc = readOnce(file)))
      return doc
    }
    const readOnce = async (file: string): Promise<Doc | undefined> => {
      const stat = await fs.stat(file).catch(() => undefined)
      const stamp = stat ? stampOf(stat) : "absent"
      stamps.set(file, stamp)
      const known = parsed.get(file)
      if (known && known.stamp === stamp) return known.doc
      if (stat?.isFile()) stats.reads++
      const text = stat?.isFile() ? await fs.readFile(file, "utf8").catch(() => undefined) : undefined
      const doc = text === undefined ? undefined : frontmatter(text)
      parsed.set(file, { stamp, doc })
      return doc
    }
    /** Every place's files with their documents, in load order; all folders listed and files read concurrently. */
    const load = async (list: Place[]) => {
      const files = await Promise.all(list.map(listing))
      const docs = await Promise.all(files.map((names) => Promise.all(names.map(read))))
      return list.flatMap((place, i) => files[i].map((file, j) => ({ place, file, doc: docs[i][j] })))
    }

    const skills = {} as Table
    const agents = {} as Table
    for (const version of versions) {
      const { skills: skillPlaces, agents: agentPlaces } = places(input, version)
      const [skillFiles, agentFiles] = await Promise.all([load(skillPlaces), load(agentPlaces)])
      skills[version] = new Map()
      for (const { place, file, doc } of skillFiles) {
        const found = skillOf(doc, file, place, version)
        if (found) push(skills[version], found)
      }
      agents[version] = new Map()
      for (const { place, file, doc } of agentFiles) if (doc) push(agents[version], agentOf(doc, file, place, version))
    }
    const heads = new Map<string, string>()
    for (const table of [...Object.values(skills), ...Object.values(agents)])
      for (const list of table.values()) for (const c of list) heads.set(c.file, (await read(c.file))?.head ?? "")
    return { skills, agents, stamps, heads }
  }

  function push(table: Map<string, Found[]>, found: Found) {
    const list = table.get(found.name)
    if (list) list.push(found)
    else table.set(found.name, [found])
  }

  function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value)
  }

  /**
   * Which files a version loads in no fixed order: v1.18 parses every skill at once; v1.2.15 the skills of one external
   * folder at once, and one glob's matches (whose order is the walk's) one after the other; agents likewise per glob.
   */
  function batchOf(place: Place, version: Version): string {
    if (place.kind === "skill" && version === "1.18") return "all"
    return `${place.dir}\u0000${place.firsts.join(",")}`
  }

  function skillOf(doc: Doc | undefined, file: string, place: Place, version: Version): Found | undefined {
    if (!doc || !isRecord(doc.data) || skillRefusal(doc.data, version)) return undefined
    const { name, description } = doc.data as { name: string; description?: unknown }
    return {
      kind: "skill",
      batch: batchOf(place, version),
      name,
      file,
      folder: path.dirname(file),
      root: place.dir,
      origin: place.origin,
      scope: place.scope,
      ...(typeof description === "string" ? { description } : {}),
      body: doc.content,
    }
  }

  /**
   * Why `version` of OpenCode does not load a SKILL.md whose frontmatter is `data` (gray-matter's, after the colon
   * retry; `{}` for a file without frontmatter), or undefined when it loads it: the name must be text (no folder
   * fallback: a number is refused too); v1.2.15 also needs a text `description`, v1.18 only refuses one that is present
   * and not text. Checked on 1.2.15, 1.18.3 and 1.18.33 with `opencode debug skill` (docs/discovery.md, "Skills").
   *
   * @example
   * DiscoveryLocate.skillRefusal({ name: "pdf" }, "1.2.15") // "no `description`"
   * DiscoveryLocate.skillRefusal({ name: "pdf" }, "1.18") // undefined
   */
  export function skillRefusal(data: unknown, version: Version): string | undefined {
    if (!isRecord(data)) return "frontmatter is not a mapping"
    if (typeof data.name !== "string") return data.name === undefined ? "no `name`" : "`name` is not text"
    const description = data.description
    if (version === "1.2.15" && description === undefined) return "no `description`"
    if (description !== undefined && typeof description !== "string") return "`description` is not text"
    return undefined
  }

  /** The file name OpenCode's skill glob matches (`**\/SKILL.md`), compared case-insensitively on macOS and Windows. */
  export const SKILL_FILE = "SKILL.md"

  /**
   * True when a file of this name is a skill's file for OpenCode's glob on `platform` (default: this process's).
   *
   * @example
   * DiscoveryLocate.isSkillFile("SKILL.md") // true
   * DiscoveryLocate.isSkillFile("skill.md", "linux") // false
   */
  export function isSkillFile(name: string, platform: NodeJS.Platform = process.platform): boolean {
    return platform === "darwin" || platform === "win32" ? name.toLowerCase() === "skill.md" : name === SKILL_FILE
  }

  function agentOf(doc: Doc, file: string, place: Place, version: Version): Found {
    let derived: string
    if (place.mode)
      derived =
        version === "1.2.15"
          ? path.basename(file, ".md")
          : stripped(path.relative(place.dir, file), ["mode/", "modes/"])
    else if (version === "1.2.15") {
      const normal = file.replaceAll("\\", "/")
      const marker = ["/.opencode/agent/", "/.opencode/agents/", "/agent/", "/agents/"].find((m) => normal.includes(m))
      const rest = marker ? normal.slice(normal.indexOf(marker) + marker.length) : path.basename(file)
      derived = withoutExtension(rest)
    } else derived = stripped(path.relative(place.dir, file), ["agent/", "agents/"])
    const data = doc.data
    // `{ name, ...data }` keyed by `name`: a frontmatter `name` of any value wins, as a property key.
    const name = isRecord(data) && Object.hasOwn(data, "name") ? String(data.name) : derived
    const description =
      isRecord(data) && data.description !== undefined && data.description !== null
        ? String(data.description)
        : undefined
    return {
      kind: "agent",
      batch: batchOf(place, version),
      name,
      file,
      folder: path.dirname(file),
      root: place.dir,
      origin: place.origin,
      scope: place.scope,
      ...(description !== undefined ? { description } : {}),
      body: doc.content.trim(),
    }
  }

  function stripped(relative: string, prefixes: string[]): string {
    const normal = relative.replaceAll("\\", "/")
    const prefix = prefixes.find((p) => normal.startsWith(p))
    return withoutExtension(prefix ? normal.slice(prefix.length) : path.basename(relative))
  }

  function withoutExtension(file: string): string {
    const ext = path.extname(file)
    return ext.length ? file.slice(0, -ext.length) : file
  }

  // ---- frontmatter as OpenCode parses it ----------------------------------------------------------------------

  /**
   * gray-matter's parse, retried once on a YAML error with every top-level `key: value` whose value holds a colon
   * (and is not quoted, empty or already a block scalar) rewritten as a `|-` block; undefined when both fail.
   *
   * @example
   * DiscoveryLocate.frontmatter("---\ndescription: Use when: asked\n---\nbody")?.data // { description: "Use when: asked" }
   */
  export function frontmatter(text: string): Doc | undefined {
    for (const candidate of [text, loosened(text)]) {
      if (candidate === undefined) continue
      try {
        const md = Frontmatter.matter(candidate)
        return { data: md.data, content: md.content, head: text.slice(0, ResourceAccess.headEnd(text)) }
      } catch {
        // retried with the loosened text, then given up
      }
    }
    return undefined
  }

  function loosened(text: string): string | undefined {
    const block = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)
    if (!block) return undefined
    const original = block[1]
    const lines = original.split(/\r?\n/).flatMap((line) => {
      const trimmed = line.trim()
      if (trimmed === "" || trimmed.startsWith("#") || /^\s+/.test(line)) return [line]
      // `/^([a-zA-Z_][a-zA-Z0-9_]*)\s*:\s*(.*)$/` retried every split of the blanks after the colon when the value
      // held a line break the split left (a lone `\r`, which `.` does not match): 31 s for 100 KB. The key is matched
      // alone; a line whose value (past those blanks) holds a line break is left as it is, as that expression left it.
      const head = /^([a-zA-Z_][a-zA-Z0-9_]*)\s*:/.exec(line)
      if (!head) return [line]
      const rest = line.slice(head[0].length)
      if (/[\r\n\u2028\u2029]/.test(rest.trimStart())) return [line]
      const value = rest.trim()
      if (value === "" || value === ">" || value === "|" || value.startsWith('"') || value.startsWith("'"))
        return [line]
      return value.includes(":") ? [`${head[1]}: |-`, `  ${value}`] : [line]
    })
    const index = text.indexOf(original)
    return text.slice(0, index) + lines.join("\n") + text.slice(index + original.length)
  }

  // ---- glob, as OpenCode's `glob` package walks -------------------------------------------------------------

  function stampOf(stat: { mtimeMs: number; size: number; ino: number; isDirectory(): boolean }): string {
    return `${stat.isDirectory() ? "d" : "f"}:${stat.mtimeMs}:${stat.size}:${stat.ino}`
  }

  /** True when any stamped folder or file changed, appeared or went away. */
  async function changed(stamps: Map<string, string>): Promise<boolean> {
    const entries = [...stamps]
    const now = await Promise.all(
      entries.map(([p]) =>
        fs.stat(p).then(
          (s) => stampOf(s),
          () => "absent",
        ),
      ),
    )
    return entries.some(([, before], i) => before !== now[i])
  }

  /** The files a place's pattern matches, sorted; every folder looked at is stamped. */
  async function globFiles(place: Place, nocase: boolean, stamps: Map<string, string>): Promise<string[]> {
    const out = new Set<string>()
    const same = (a: string, b: string) => (nocase ? a.toLowerCase() === b.toLowerCase() : a === b)
    const stampDir = async (dir: string) => {
      const s = await fs.stat(dir).catch(() => undefined)
      stamps.set(dir, s ? stampOf(s) : "absent")
      return s?.isDirectory() ? s : undefined
    }
    if (!(await stampDir(place.dir))) return []
    let starts: string[] = [place.dir]
    if (place.firsts.length) {
      const names = await fs.readdir(place.dir).catch(() => [] as string[])
      starts = place.firsts.flatMap((first) => names.filter((n) => same(n, first)).map((n) => path.join(place.dir, n)))
    }
    for (const start of starts) {
      if (!(await stampDir(start))) continue
      await walk(start, place.deep, new Set([await fs.realpath(start).catch(() => start)]))
    }
    return [...out].sort()

    async function walk(dir: string, deep: boolean, chain: Set<string>) {
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
      for (const entry of entries) {
        const full = path.join(dir, entry.name)
        const hidden = entry.name.startsWith(".")
        let isDir = entry.isDirectory()
        let isFile = entry.isFile()
        if (entry.isSymbolicLink()) {
          const s = await fs.stat(full).catch(() => undefined)
          isDir = !!s?.isDirectory()
          isFile = !!s?.isFile()
        }
        if (isDir) {
          if (!deep || (hidden && !place.dot)) continue
          const real = await fs.realpath(full).catch(() => undefined)
          if (!real || chain.has(real)) continue
          if (!(await stampDir(full))) continue
          await walk(full, deep, new Set([...chain, real]))
        } else if (isFile) {
          const literal = place.kind === "skill"
          if (hidden && !place.dot && !literal) continue
          if (literal ? same(entry.name, SKILL_FILE) : place.leaf(nocase ? entry.name.toLowerCase() : entry.name))
            out.add(full)
        }
      }
    }
  }
}
