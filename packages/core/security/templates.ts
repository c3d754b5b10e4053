import fs from "fs"
import path from "path"
import { Frontmatter } from "../util/frontmatter"

/**
 * The definitions OpenCode reads from markdown files the agent can write, and what in them reaches past the sandbox:
 *
 * - commands and skills: when the user runs a command (`/deploy`) — or, in OpenCode 1.18, a skill by its name —
 *   OpenCode replaces each `` !`cmd` `` of its template with the output of `cmd`, run with the user's shell in
 *   OpenCode's own process: outside the sandbox, before any hook sees it (`expansions`);
 * - agents and modes: their frontmatter's `permission` (and the older `tools`) overrides the user's permission
 *   settings for that agent, so an `allow` there lets the next session's agent act without the user's approval
 *   (`grants`).
 *
 * The guard keeps such files from gaining either while a policy exists.
 *
 * @example
 * SecurityTemplates.expansions("Status: !`git status`\nDiff: !`git diff`") // ["git status", "git diff"]
 */
export namespace SecurityTemplates {
  /**
   * A folder OpenCode reads definitions from: every `.md` at any depth (commands, agents), each `SKILL.md` at any depth
   * (skills), or the `.md` files directly in it (modes).
   */
  export type Root = { folder: string; kind: "command" | "skill" | "agent" | "mode" }

  /**
   * Where OpenCode reads command and skill templates from: each config folder's `command(s)/` and `skill(s)/`, the
   * `.claude/skills/` and `.agents/skills/` of every project folder (the one OpenCode starts in up to the worktree),
   * and those of the home folder.
   *
   * @example
   * SecurityTemplates.roots({ configDirs: ["/repo/.opencode"], dirs: ["/repo"], home: "/home/me" })
   * // [{ folder: "/repo/.opencode/command", kind: "command" }, …, { folder: "/home/me/.agents/skills", kind: "skill" }]
   */
  export function roots(input: { configDirs: readonly string[]; dirs: readonly string[]; home: string }): Root[] {
    const out: Root[] = []
    for (const dir of input.configDirs) {
      for (const name of ["command", "commands"]) out.push({ folder: path.join(dir, name), kind: "command" })
      for (const name of ["skill", "skills"]) out.push({ folder: path.join(dir, name), kind: "skill" })
      for (const name of ["agent", "agents"]) out.push({ folder: path.join(dir, name), kind: "agent" })
      for (const name of ["mode", "modes"]) out.push({ folder: path.join(dir, name), kind: "mode" })
    }
    for (const dir of [...input.dirs, input.home])
      for (const name of [".claude", ".agents"]) out.push({ folder: path.join(dir, name, "skills"), kind: "skill" })
    const seen = new Set<string>()
    return out.filter((r) => !seen.has(r.folder) && !!seen.add(r.folder))
  }

  /**
   * The template files under `roots` (symbolic links to folders followed, as OpenCode's scan does; each folder walked
   * once, and its files listed again under another spelling of it that holds `!` or a backquote), with their kind.
   * There is no cap: files the agent adds in bulk slow the check down, they never hide one from it.
   *
   * @example
   * SecurityTemplates.list([{ folder: "/repo/.opencode/command", kind: "command" }]).files // ["/repo/.opencode/command/review.md"]
   */
  export function list(roots: readonly Root[]): { files: string[]; kinds: Map<string, Root["kind"]> } {
    const files: string[] = []
    const kinds = new Map<string, Root["kind"]>()
    /** Each folder walked (by device and inode): where, and the files found below it, relative to it (in the walk: none). */
    const walked = new Map<string, { at: string; below?: string[] }>()
    const add = (full: string, kind: Root["kind"]) => {
      if (kinds.has(full)) return
      files.push(full)
      kinds.set(full, kind)
    }
    const walk = (folder: string, kind: Root["kind"]): string[] => {
      let st: fs.Stats
      try {
        st = fs.statSync(folder)
      } catch {
        return []
      }
      const key = `${st.dev}:${st.ino}`
      if (!st.isDirectory()) return []
      if (walked.has(key)) {
        // Each folder is walked once; another spelling of it (a link made to a folder already seen, red team FF1) is
        // another path OpenCode may load its files by, and a skill's folder line holds that path: its files are listed
        // by it too when it holds a `!` or a backquote, the characters a folder line's shell line or join needs.
        // (Either spelling: the first one walked may be the agent's link, the user's own folder then the other.)
        const first = walked.get(key)!
        const below = first.below ?? []
        if (/[!`]/.test(folder) || /[!`]/.test(first.at)) for (const rel of below) add(path.join(folder, rel), kind)
        return below
      }
      walked.set(key, { at: folder })
      const found: string[] = []
      let entries: fs.Dirent[]
      try {
        entries = fs.readdirSync(folder, { withFileTypes: true })
      } catch {
        walked.set(key, { at: folder, below: found })
        return found
      }
      for (const e of entries) {
        const full = path.join(folder, e.name)
        let dir = e.isDirectory()
        let file = e.isFile()
        if (e.isSymbolicLink()) {
          try {
            const target = fs.statSync(full)
            dir = target.isDirectory()
            file = target.isFile()
          } catch {
            continue
          }
        }
        if (dir) {
          if (kind !== "mode") for (const rel of walk(full, kind)) found.push(path.join(e.name, rel))
          continue
        }
        if (!file || !(kind === "skill" ? e.name === "SKILL.md" : e.name.endsWith(".md"))) continue
        add(full, kind)
        found.push(e.name)
      }
      walked.set(key, { at: folder, below: found })
      return found
    }
    for (const root of roots) walk(root.folder, root.kind)
    return { files, kinds }
  }

  /**
   * What in a definition reaches past the sandbox: a command's or skill's shell commands, an agent's or mode's grants.
   *
   * @example
   * SecurityTemplates.risks("agent", "---\npermission:\n  bash: allow\n---\nYou review.") // ["permission.bash: allow"]
   */
  export function risks(kind: Root["kind"], text: string, file?: string): string[] {
    const language = frontmatterLanguage(text)
    const own = kind === "command" || kind === "skill" ? [...expansions(text), ...splices(text)] : grants(text)
    if (kind === "skill" && file !== undefined) own.push(...folderRisks(text, path.dirname(file)))
    return language ? [`frontmatter in ${language}`, ...own] : own
  }

  /**
   * The text OpenCode 1.18 runs a skill as a command with (the user types its name): the skill's body, then a line
   * naming its folder, which is part of the text it looks for shell lines in (red team EE2: a folder named
   * `` fixer!`./check.sh` ``).
   *
   * @example
   * SecurityTemplates.skill("Fix it.", "/repo/.opencode/skill/fix") // "Fix it.\n\nBase directory for this skill: /repo/…"
   */
  export function skill(body: string, folder: string): string {
    return [
      body,
      "",
      `Base directory for this skill: ${folder}`,
      "Relative paths in this skill (e.g., scripts/, references/) are relative to this base directory.",
    ].join("\n")
  }

  /**
   * The spellings of a skill's folder OpenCode may put in `skill`: as found (its scan follows links without resolving
   * them) and its real path (a project OpenCode was started in through a link), each once.
   */
  export function folderSpellings(folder: string): string[] {
    let real = folder
    try {
      real = fs.realpathSync(folder)
    } catch {}
    return [...new Set([folder, real])]
  }

  /**
   * What a skill's folder adds to its text's shell lines and argument joins once OpenCode appends it (`skill`): a
   * folder, or a folder above it up to the project's, whose name holds `` !` `` (or `!$1`, or a backquote closing the
   * body's open `` !` ``). Each names the folder as the cause.
   *
   * @example
   * SecurityTemplates.folderRisks("Fix it.", "/repo/.opencode/skill/fix!`./check.sh`") // ["./check.sh (from the skill's folder path, …)"]
   */
  export function folderRisks(body: string, folder: string): string[] {
    const own = [...expansions(body), ...splices(body)]
    const out: string[] = []
    for (const spelling of folderSpellings(folder)) {
      const text = skill(body, spelling)
      for (const risk of added(own, [...expansions(text), ...splices(text)])) {
        const named = `${risk} (from the skill's folder path, which OpenCode appends to the skill's text)`
        if (!out.includes(named)) out.push(named)
      }
    }
    return out
  }

  /**
   * The language a frontmatter names on its opening line (`---js`, `--- yaml`), or undefined for plain `---`. OpenCode
   * parses every definition with gray-matter, which evaluates a JavaScript block when it loads the configuration, and
   * reads YAML or JSON blocks this layer's checks do not look into: any named language counts as a risk.
   *
   * @example
   * SecurityTemplates.frontmatterLanguage("---js\n{ a: 1 }\n---\n") // "js"
   */
  export function frontmatterLanguage(text: string): string | undefined {
    const language = /^\uFEFF?---[ \t]*(\S[^\r\n]*)/.exec(text)?.[1]?.trim()
    return language && !language.startsWith("-") ? language.slice(0, 40) : undefined
  }

  /**
   * The permissions an agent's or mode's frontmatter grants: each `permission` entry (at any depth) set to `allow`,
   * and each `tools` entry set to true (OpenCode reads it as `allow`). A frontmatter YAML refuses (OpenCode may still
   * read it leniently) counts its `allow` and `true` words as one grant named by their number.
   *
   * @example
   * SecurityTemplates.grants("---\ntools:\n  bash: true\npermission: allow\n---\n") // ["permission: allow", "tools.bash: true"]
   */
  export function grants(text: string): string[] {
    const parsed = Frontmatter.parse(text)
    if (parsed.error) {
      const head = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)(?:\r?\n---|$)/.exec(text)?.[1] ?? ""
      const words = head.match(/\b(?:allow|true)\b/gi)?.length ?? 0
      return words ? [`${words} allow or true in a frontmatter YAML refuses`] : []
    }
    const out: string[] = []
    const walk = (value: unknown, key: string) => {
      if (value === "allow") out.push(`${key}: allow`)
      else if (value && typeof value === "object" && !Array.isArray(value))
        for (const [k, v] of Object.entries(value)) walk(v, `${key}.${k}`)
    }
    walk(parsed.data.permission, "permission")
    const tools = parsed.data.tools
    if (tools && typeof tools === "object" && !Array.isArray(tools))
      for (const [tool, enabled] of Object.entries(tools)) if (enabled) out.push(`tools.${tool}: true`)
    return out
  }

  /**
   * The shell commands of a template, in order, as OpenCode finds them: `` !`…` `` with no backquote inside (OpenCode
   * applies it to the template after the frontmatter; the whole file is read here, which can only find more).
   *
   * @example
   * SecurityTemplates.expansions("run !`npm test` then report") // ["npm test"]
   */
  export function expansions(text: string): string[] {
    const out: string[] = []
    let end = 0
    for (const m of text.matchAll(/!`([^`]+)`/g)) {
      out.push(m[1]!)
      end = m.index + m[0].length
    }
    // An opening !` that nothing closes (any later backquote would have closed it): OpenCode appends the user's
    // arguments to a template without placeholders, and their first backquote ("/review the `parse` function") would.
    const tail = text.slice(end)
    const open = tail.search(/!`(?!`)/)
    if (open >= 0) out.push(`${tail.slice(open + 2, open + 82)}… (not closed)`)
    return out
  }

  /**
   * The argument placeholders OpenCode substitutes in a command's or skill's template before it looks for shell lines
   * (all of 1.2.15, 1.18.3 and 1.18.33): `$ARGUMENTS` (all the arguments as typed) and `$` followed by digits (`$1`,
   * `$10`, `$0`: one argument, the last taking the rest, or nothing when there are fewer).
   */
  export const PLACEHOLDER = /\$ARGUMENTS|\$\d+/

  /**
   * Where a template joins its own text to the user's arguments so that a shell line can appear only once OpenCode
   * has substituted them (it substitutes first, then runs every `` !`…` `` of the result on the host): a `!` right
   * before a placeholder (`here!$ARGUMENTS` and the argument `` `./check.sh` ``), a placeholder right before a
   * backquote (`` `$1` `` and an argument ending in `!`), two placeholders with nothing between them (`$1$2`,
   * `$ARGUMENTS$ARGUMENTS`, or `$2$9$1`, whose `$9` is empty with fewer arguments: one argument ending in `!`, the
   * next starting with a backquote — any text between them is the template's own, and joins only through the two
   * cases before), and, in a template with a placeholder, a backquote at its
   * start or a `!` at its end (the argument's replacement patterns `` $` `` and `$'` copy them next to its own text:
   * `edges`). Shell lines themselves are left out (see `expansions`).
   *
   * @example
   * SecurityTemplates.splices("Fix the failure here!$ARGUMENTS") // ["!$ARGUMENTS (a shell line once the arguments are substituted)"]
   */
  export function splices(text: string): string[] {
    const out: string[] = []
    const outside = text.replace(/!`[^`]+`/g, " ")
    for (const m of outside.matchAll(SPLICE))
      out.push(`${m[0].replace(/\s+/g, " ")} (a shell line once the arguments are substituted)`)
    for (const m of outside.matchAll(ADJACENT))
      out.push(`${m[0]} (a shell line once the arguments are substituted side by side)`)
    if (!PLACEHOLDER.test(text)) return out
    // The template's own edges (`edges`): OpenCode trims a file's text after its frontmatter, so both the whole text
    // and the text after the frontmatter's closing line are looked at (which can only find more).
    const source = text.replace(/^\uFEFF/, "")
    const close = source.startsWith("---") ? source.indexOf("\n---", 3) : -1
    const starts = [source.trimStart(), ...(close >= 0 ? [source.slice(close + 4).trimStart()] : [])]
    if (starts.some((s) => s.startsWith("`")))
      out.push("` at the template's start (a shell line once an argument's $` is substituted after a !)")
    if (source.trimEnd().endsWith("!"))
      out.push("! at the template's end (a shell line once an argument's $' is substituted before a backquote)")
    // With `$ARGUMENTS` in it, a numbered placeholder at an edge puts an argument there for `$`` or `$'` to copy.
    if (text.includes("$ARGUMENTS") && starts.some((s) => NUMBERED_START.test(s)))
      out.push("$1… at the template's start (a shell line once an argument's $` is substituted after a !)")
    if (text.includes("$ARGUMENTS") && NUMBERED_END.test(source.trimEnd()))
      out.push("…$1 at the template's end (a shell line once an argument's $' is substituted before a backquote)")
    return out
  }

  /**
   * `text` (a whole template) with its own edges kept from joining the user's arguments: OpenCode replaces
   * `$ARGUMENTS` with `String.replaceAll` and the arguments as a string, so JavaScript's replacement patterns in them
   * are live — `` $` `` inserts the template's text from its start (`!$`` puts a `!` before its first character),
   * `$'` the text from after the placeholder to its end (`$'`x`` puts a backquote after its last one). A template with
   * a placeholder that starts with a backquote gets a space before it, one that ends with `!` a space after it (OpenCode
   * trims the template once its lines have run: the model reads the same text). With `$ARGUMENTS` in it, a numbered
   * placeholder at its start or end counts the same: `$1` is substituted first, so `` $` `` copies the user's first
   * argument (`` `./check.sh` ``) and `$'` the last one (`now!`) next to the argument's own text. The other points a
   * pattern joins are those `separate` already keeps apart (the text right before and after a placeholder) or
   * `$ARGUMENTS` itself (`$&`).
   *
   * @example
   * SecurityTemplates.edges("`make` fails: $ARGUMENTS") // " `make` fails: $ARGUMENTS"
   */
  export function edges(text: string): string {
    if (!PLACEHOLDER.test(text)) return text
    const live = text.includes("$ARGUMENTS")
    const start = text.startsWith("`") || (live && NUMBERED_START.test(text))
    const end = text.endsWith("!") || (live && NUMBERED_END.test(text))
    return (start ? " " : "") + text + (end ? " " : "")
  }

  const NUMBERED_START = /^\$\d/
  const NUMBERED_END = /\$\d+$/

  const SPLICE = new RegExp(`!(?:${PLACEHOLDER.source})|(?:${PLACEHOLDER.source})\``, "g")
  const ADJACENT = new RegExp(`(?:${PLACEHOLDER.source}){2,}`, "g")

  /**
   * `text` (no shell line in it) with a space put between a `!` and the placeholder after it, between a placeholder
   * and the backquote after it, and between two placeholders (`splices`): no substituted argument can then complete a
   * `` !` `` with the template's own text or with another argument, and the text still reads the same to the model.
   *
   * @example
   * SecurityTemplates.separate("here!$ARGUMENTS, see `$1` $2$3") // "here! $ARGUMENTS, see `$1 ` $2 $3"
   */
  export function separate(text: string): string {
    const placeholder = PLACEHOLDER.source
    return text
      .replace(new RegExp(`!(?=${placeholder})`, "g"), "! ")
      .replace(new RegExp(`(${placeholder})\``, "g"), "$1 `")
      .replace(new RegExp(`(${placeholder})(?=${placeholder})`, "g"), "$1 ")
  }

  /**
   * The template with its shell lines as they are and the text between them `separate`d: what the layer makes of a
   * template whose lines run on the host anyway (the sandbox `off`, or `optional` and unavailable).
   *
   * @example
   * SecurityTemplates.separated("!`git status` then!$1") // "!`git status` then! $1"
   */
  export function separated(text: string): string {
    let end = 0
    let out = ""
    for (const m of text.matchAll(/!`([^`]+)`/g)) {
      out += separate(text.slice(end, m.index)) + m[0]
      end = m.index + m[0].length
    }
    return edges(out + separate(text.slice(end)))
  }

  /**
   * The template with each shell line (`` !`cmd` ``, as OpenCode finds them) replaced by `line(cmd)`: how the layer
   * has the lines OpenCode runs itself, with no hook before them, run inside the sandbox (`line` hands the command to
   * the sandbox's launcher) or not at all (`line` says why). A backquote `line` returns would end the line early, so
   * it becomes a single quote; an opening that nothing closes becomes `` ! ` ``. With `held`, a line holding an argument
   * placeholder is replaced by what `held` returns instead, with no `` !` `` around it (see `hold`).
   *
   * @example
   * SecurityTemplates.contain("out: !`sh check.sh`", (cmd) => `run ${cmd}`) // "out: !`run sh check.sh`"
   */
  export function contain(text: string, line: (cmd: string) => string, held?: (cmd: string) => string): string {
    let end = 0
    let out = ""
    for (const m of text.matchAll(/!`([^`]+)`/g)) {
      out += separate(text.slice(end, m.index))
      out += held && PLACEHOLDER.test(m[1]!) ? held(m[1]!) : "!`" + line(m[1]!).replaceAll("`", "'") + "`"
      end = m.index + m[0].length
    }
    // An opening that nothing closes would take the user's arguments up to their first backquote as a shell line
    // (see `expansions`): it loses its backquote's meaning as an opening.
    return edges(out + separate(text.slice(end)).replace(/!`(?!`)/g, "! `"))
  }

  /**
   * A shell line holding an argument placeholder, as no shell line at all: OpenCode substitutes the user's arguments
   * into a template before it runs its lines, so an argument in a line is host shell code whatever quoting the line
   * puts around it (an apostrophe ends a single-quoted string; a backquote ends the line and can open another). The
   * line's own text is kept out of OpenCode's sight (base64url, between `[[ocb:…]]` marks), its placeholders stay where
   * they were, one between each two marks: OpenCode substitutes them exactly as in the line (the template keeps the
   * same placeholders, so the last one still takes the rest), runs nothing, and `held` later reads the line back with
   * the arguments in it, to run it inside the sandbox with no shell of the host parsing it.
   *
   * @example
   * SecurityTemplates.hold("echo $1!", "n0", 0) // "[[ocb:n0:0:0:1:ZWNobyA]]$1[[ocb:n0:0:1:1:IQ]]"
   */
  export function hold(cmd: string, nonce: string, index: number): string {
    const pieces = cmd.split(PLACEHOLDERS)
    const count = (pieces.length - 1) / 2
    let out = ""
    for (let k = 0; k <= count; k++) {
      const literal = Buffer.from(pieces[2 * k]!, "utf8").toString("base64url")
      out += `[[ocb:${nonce}:${index}:${k}:${count}:${literal}]]`
      if (k < count) out += pieces[2 * k + 1]
    }
    return out
  }

  const PLACEHOLDERS = new RegExp(`(${PLACEHOLDER.source})`)

  /**
   * The lines `hold` left in `text` once OpenCode substituted the arguments: where each starts and ends, and the
   * command as OpenCode would have run it (`cmd`), or `broken` when its marks are not in order (an argument holding
   * one of them: the line is not run).
   *
   * @example
   * SecurityTemplates.held("Out: [[ocb:n0:0:0:1:ZWNobyA]]it's[[ocb:n0:0:1:1:IQ]]", "n0")
   * // [{ start: 5, end: 50, cmd: "echo it's!" }]
   */
  export function held(text: string, nonce: string): { start: number; end: number; cmd?: string }[] {
    if (!/^[0-9a-z]+$/.test(nonce)) return []
    const mark = new RegExp(`\\[\\[ocb:${nonce}:(\\d+):(\\d+):(\\d+):([A-Za-z0-9_-]*)\\]\\]`, "g")
    const out: { start: number; end: number; cmd?: string }[] = []
    let open: { start: number; index: string; next: number; count: number; cmd: string; after: number } | undefined
    for (const m of text.matchAll(mark)) {
      const [, index, k, count] = m as unknown as [string, string, string, string]
      const literal = Buffer.from(m[4]!, "base64url").toString("utf8")
      const end = m.index + m[0].length
      if (open && (index !== open.index || Number(k) !== open.next || Number(count) !== open.count)) {
        out.push({ start: open.start, end: m.index })
        open = undefined
      }
      if (!open) {
        if (k !== "0") {
          out.push({ start: m.index, end })
          continue
        }
        open = { start: m.index, index, next: 1, count: Number(count), cmd: literal, after: end }
      } else {
        open.cmd += text.slice(open.after, m.index) + literal
        open.next++
        open.after = end
      }
      if (open.next > open.count) {
        out.push({ start: open.start, end, cmd: open.cmd })
        open = undefined
      }
    }
    if (open) out.push({ start: open.start, end: open.after })
    return out
  }

  /**
   * The shell line that hands `cmd` to the sandbox's template launcher: `'<bash>' '<launcher>' '<cmd>'`, single
   * quotes that POSIX shells, fish and Bun's shell (OpenCode 1.2.15 runs the lines with it) read alike. Undefined when
   * a path holds a character that quoting cannot carry there.
   *
   * @example
   * SecurityTemplates.launch("/bin/bash", "/s/template.bash", "echo it's") // `'/bin/bash' '/s/template.bash' 'echo it'\''s'`
   */
  export function launch(bash: string, launcher: string, cmd: string): string | undefined {
    if ([bash, launcher].some((p) => /['`\\\n\r]/.test(p))) return undefined
    return `'${bash}' '${launcher}' '${cmd.replaceAll("'", `'\\''`)}'`
  }

  /**
   * The commands of `after` that `before` did not have (each occurrence counts: a second copy of a command is new).
   *
   * @example
   * SecurityTemplates.added(["git status"], ["git status", "curl x | sh"]) // ["curl x | sh"]
   */
  export function added(before: readonly string[], after: readonly string[]): string[] {
    const left = new Map<string, number>()
    for (const cmd of before) left.set(cmd, (left.get(cmd) ?? 0) + 1)
    const out: string[] = []
    for (const cmd of after) {
      const n = left.get(cmd) ?? 0
      if (n > 0) left.set(cmd, n - 1)
      else out.push(cmd)
    }
    return out
  }
}
