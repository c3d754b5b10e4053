import fs from "fs"
import path from "path"
import { CommentSyntax } from "../../../packages/core/comment/syntax"
import { CommentHistory } from "./history"
import { bunSpawnSync } from "../../../packages/core/test/spawn-sync"

/**
 * Draws the comments that real commits added from a repository's history, for labelling (developer tool, not a test;
 * it needs the repositories as git directories, e.g. the mirrors the search tool's `fetch` brings).
 *
 * For each sampled commit and code file it reads the file before and after (`git show`), marks the added lines from
 * the diff's hunks, extracts the comments of the new file and keeps those that are new (a line added and a text not
 * among the old file's comments). It writes `<out>/<name>.candidates.json` (the fixture form, labels `"?"`) and
 * `<out>/<name>.view.txt` (each comment with its surrounding lines, added ones marked `+`) to label from.
 *
 * @example
 * // bun test/comment/history/extract.ts /work/.mirror /tmp/comment-label aider
 */
export namespace CommentHistoryExtract {
  export type Source = {
    /** Short name, also the fixture's file name. */
    name: string
    /** owner/name of the public repository. */
    repo: string
    /** Who wrote the code: "assistant" when commits are marked as written with an AI assistant. */
    style: "assistant" | "human"
    /** Which commits: git log arguments (author, grep, date range). */
    select: string[]
    /** Comments to draw. */
    target: number
  }

  /** Extensions of the programming languages drawn (prose, data and markup are not). */
  const CODE = /\.(ts|tsx|js|mjs|py|go|rs|c|h|rb|sh)$/
  const SKIP =
    /(^|\/)(vendor|node_modules|dist|build|testdata|fixtures?|__snapshots__|third_party)\/|\.min\.|generated/i
  /** A file change with more new comments than this is left out (one file would dominate a repository's share). */
  const MAX_PER_FILE = 20
  /** Lines of a long comment stored in full (plus its last line). */
  const KEEP = 4

  /** A repository whose commits credit an AI assistant (Claude Code, Copilot, Cursor) in their message. */
  function assistant([name, repo]: readonly [string, string]): Source {
    return {
      name,
      repo,
      style: "assistant",
      select: ["-i", "-E", "--grep=co-authored-by: (claude|copilot|cursor)|generated with \\[claude", "--no-merges"],
      target: 50,
    }
  }

  export const SOURCES: Source[] = [
    {
      name: "aider",
      repo: "Aider-AI/aider",
      style: "assistant",
      select: ["--author=(aider)", "--no-merges"],
      target: 40,
    },
    {
      name: "oh-my-opencode",
      repo: "code-yeongyu/oh-my-opencode",
      style: "assistant",
      select: ["-i", "--grep=ohmyopencode", "--grep=oh-my-opencode", "--grep=sisyphus", "--no-merges"],
      target: 40,
    },
    {
      name: "crush",
      repo: "charmbracelet/crush",
      style: "assistant",
      select: ["-i", "--grep=co-authored-by: (charm )?crush", "-E", "--no-merges"],
      target: 35,
    },
    {
      name: "gemini-cli",
      repo: "google-gemini/gemini-cli",
      style: "assistant",
      select: ["--grep=Co-authored-by: gemini-code-assist", "--no-merges"],
      target: 35,
    },
    {
      name: "openhands",
      repo: "All-Hands-AI/OpenHands",
      style: "assistant",
      select: ["--grep=Co-authored-by: openhands", "--no-merges"],
      target: 40,
    },
    {
      name: "ripgrep",
      repo: "BurntSushi/ripgrep",
      style: "human",
      select: ["--author=Andrew Gallant", "--until=2022-11-01", "--no-merges"],
      target: 30,
    },
    {
      name: "fzf",
      repo: "junegunn/fzf",
      style: "human",
      select: ["--author=Junegunn", "--until=2022-11-01", "--no-merges"],
      target: 30,
    },
    {
      name: "requests",
      repo: "psf/requests",
      style: "human",
      select: ["--until=2022-11-01", "--no-merges"],
      target: 25,
    },
    {
      name: "sinatra",
      repo: "sinatra/sinatra",
      style: "human",
      select: ["--until=2022-11-01", "--no-merges"],
      target: 25,
    },
    { name: "jq", repo: "jqlang/jq", style: "human", select: ["--until=2022-11-01", "--no-merges"], target: 25 },
    // Added for the third batch: repositories whose commits name an AI assistant (Claude Code, Copilot, Cursor) as
    // co-author, where narrating comments are more common than in the first five.
    ...(
      [
        ["banyancode", "EkagraAgarwal/BanyanCode"],
        ["naixor-opencode", "Naixor/opencode"],
        ["superclaude", "SuperClaude-Org/SuperClaude_Framework"],
        ["claude-skills", "alirezarezvani/claude-skills"],
        ["everything-claude-code", "affaan-m/everything-claude-code"],
      ] as const
    ).map(assistant),
    // Added for the fourth batch: four more repositories whose commits name an AI assistant the same way.
    ...(
      [
        ["buildwithclaude", "davepoon/buildwithclaude"],
        ["awesome-claude-code", "hesreallyhim/awesome-claude-code"],
        ["superpowers", "obra/superpowers"],
        ["claude-code-templates", "davila7/claude-code-templates"],
      ] as const
    ).map(assistant),
    // Added for the fifth batch: four more repositories whose commits name an AI assistant the same way, and one
    // human-written control from before November 2022.
    ...(
      [
        ["beads", "steveyegge/beads"],
        ["claude-agent-sdk-python", "anthropics/claude-agent-sdk-python"],
        ["ccusage", "ryoppippi/ccusage"],
        ["claw-code", "ultraworkers/claw-code"],
      ] as const
    ).map(assistant),
    {
      name: "ast-grep",
      repo: "ast-grep/ast-grep",
      style: "human",
      select: ["-E", "--author=Herrington ?Darkholme", "--until=2022-11-01", "--no-merges"],
      target: 50,
    },
    // Added for the sixth batch: five more repositories whose commits name an AI assistant the same way (Claude Code,
    // or Copilot in github-mcp-server), and one human-written control from before 2022 (no bot among its authors).
    ...(
      [
        ["claude-code-action", "anthropics/claude-code-action"],
        ["humanlayer", "humanlayer/humanlayer"],
        ["github-mcp-server", "github/github-mcp-server"],
        ["cship", "stephenleo/cship"],
        ["llm", "simonw/llm"],
      ] as const
    ).map(assistant),
    {
      name: "mkdocs",
      repo: "mkdocs/mkdocs",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 50,
    },
    // Added for the seventh batch: four more repositories whose commits name an AI assistant the same way (Go in
    // gastown, Python in fastmcp, Rust and TypeScript in vibe-kanban, TypeScript in the MCP SDK), and one
    // human-written control from before 2022.
    ...(
      [
        ["gastown", "steveyegge/gastown"],
        ["fastmcp", "jlowin/fastmcp"],
        ["vibe-kanban", "BloopAI/vibe-kanban"],
        ["mcp-typescript-sdk", "modelcontextprotocol/typescript-sdk"],
      ] as const
    ).map(assistant),
    {
      name: "click",
      repo: "pallets/click",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 50,
    },
    // Added for the eighth batch: four more repositories whose commits name an AI assistant the same way (Python in
    // basic-memory, Go in toolhive, TypeScript in Archon and in the MCP servers), and one human-written control from
    // before 2022.
    ...(
      [
        ["basic-memory", "basicmachines-co/basic-memory"],
        ["toolhive", "stacklok/toolhive"],
        ["archon", "coleam00/Archon"],
        ["mcp-servers", "modelcontextprotocol/servers"],
      ] as const
    ).map(assistant),
    {
      name: "cobra",
      repo: "spf13/cobra",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 50,
    },
    // Added for the ninth batch: four more repositories whose commits name an AI assistant the same way (TypeScript
    // in claude-task-master, Go in mcp-go, TypeScript and Ruby in compound-engineering, Python and shell in the Trail
    // of Bits skills), and one human-written control from before 2022.
    ...(
      [
        ["claude-task-master", "eyaltoledano/claude-task-master"],
        ["mcp-go", "mark3labs/mcp-go"],
        ["compound-engineering", "EveryInc/compound-engineering-plugin"],
        ["trailofbits-skills", "trailofbits/skills"],
      ] as const
    ).map(assistant),
    {
      name: "logrus",
      repo: "sirupsen/logrus",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 50,
    },
    // Added for the tenth batch: four more repositories whose commits credit an AI assistant the same way (Rust in
    // mise, Python in pydantic-ai, Ruby in roast, Go in lazygit), and one human-written control from before 2022
    // (JavaScript in express); a smaller target, so the batch stays near the ninth's size.
    ...(
      [
        ["mise", "jdx/mise"],
        ["pydantic-ai", "pydantic/pydantic-ai"],
        ["roast", "Shopify/roast"],
        ["lazygit", "jesseduffield/lazygit"],
      ] as const
    ).map((entry) => ({ ...assistant(entry), target: 42 })),
    {
      name: "express",
      repo: "expressjs/express",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 42,
    },
    // Added for the eleventh batch: four more repositories whose commits credit an AI assistant the same way
    // (TypeScript in the MCP inspector, Python and TypeScript in marimo, Go in mcp-grafana, Rust in atuin, whose 25
    // such commits give fewer comments than the target), and one human-written control from before 2022 (C in tmux);
    // the tenth batch's target, so the batch stays near its size.
    ...(
      [
        ["mcp-inspector", "modelcontextprotocol/inspector"],
        ["marimo", "marimo-team/marimo"],
        ["mcp-grafana", "grafana/mcp-grafana"],
        ["atuin", "atuinsh/atuin"],
      ] as const
    ).map((entry) => ({ ...assistant(entry), target: 42 })),
    {
      name: "tmux",
      repo: "tmux/tmux",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 42,
    },
    // Added for the twelfth batch (drawn through `draw` by a helper that could not edit this list; entered here so the
    // batch can be drawn again and later batches skip its commits): four more repositories whose commits credit an AI
    // assistant the same way (JavaScript and TypeScript in claude-flow, Python in the MCP Python SDK, Rust in turso, Go
    // in goreleaser), and one human-written control from before 2022 (Ruby in rack).
    ...(
      [
        ["claude-flow", "ruvnet/claude-flow"],
        ["mcp-python-sdk", "modelcontextprotocol/python-sdk"],
        ["turso", "tursodatabase/turso"],
        ["goreleaser", "goreleaser/goreleaser"],
      ] as const
    ).map((entry) => ({ ...assistant(entry), target: 42 })),
    {
      name: "rack",
      repo: "rack/rack",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 42,
    },
    // Added for the thirteenth batch: four more repositories whose commits credit an AI assistant the same way
    // (Python in zen-mcp-server, Rust in coding_agent_session_search, Go in vc, TypeScript in claude-code-webui), and
    // one human-written control from before 2022 (TypeScript in ky).
    ...(
      [
        ["zen-mcp-server", "BeehiveInnovations/zen-mcp-server"],
        ["coding-agent-search", "Dicklesworthstone/coding_agent_session_search"],
        ["vc", "steveyegge/vc"],
        ["claude-code-webui", "sugyan/claude-code-webui"],
      ] as const
    ).map((entry) => ({ ...assistant(entry), target: 42 })),
    {
      name: "ky",
      repo: "sindresorhus/ky",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 42,
    },
    // Added for the fourteenth batch: four more repositories whose commits credit an AI assistant the same way
    // (TypeScript and JavaScript in claudecodeui, Python in browser-use, Go in kubernetes-mcp-server, Rust in
    // pitchfork), and one human-written control from before 2022 (Rust in fd).
    ...(
      [
        ["claudecodeui", "siteboon/claudecodeui"],
        ["browser-use", "browser-use/browser-use"],
        ["kubernetes-mcp-server", "containers/kubernetes-mcp-server"],
        ["pitchfork", "jdx/pitchfork"],
      ] as const
    ).map((entry) => ({ ...assistant(entry), target: 42 })),
    {
      name: "fd",
      repo: "sharkdp/fd",
      style: "human",
      select: ["--until=2022-01-01", "--no-merges"],
      target: 42,
    },
  ]

  /**
   * A command's output (Bun's shell never returned the output of a 400 KB `git show` here; a plain spawn does). With
   * `check`, a failing command throws.
   */
  function run(cmd: string[], check = false): { code: number; text: string } {
    const r = bunSpawnSync(cmd, { stdout: "pipe", stderr: "pipe" })
    if (check && r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString().trim()}`)
    return { code: r.exitCode ?? -1, text: r.stdout.toString() }
  }

  /** A deterministic shuffle (mulberry32), so the same mirror gives the same sample. */
  function shuffle<T>(items: T[], seed: number): T[] {
    let a = seed >>> 0
    const rand = () => {
      a = (a + 0x6d2b79f5) >>> 0
      let t = a
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    }
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      ;[out[i], out[j]] = [out[j], out[i]]
    }
    return out
  }

  /** Line numbers (1-based, new side) the diff of `file` in `sha` added. */
  function addedLines(diff: string): Set<number> {
    const added = new Set<number>()
    let next = 0
    for (const line of diff.split("\n")) {
      const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
      if (hunk) {
        next = Number(hunk[1])
        continue
      }
      if (!next) continue
      if (line.startsWith("+")) added.add(next++)
      else if (line.startsWith(" ")) next++
    }
    return added
  }

  /**
   * Draws `source`'s comments into `<out>/<name>.candidates.json` (batch 1) or `<out>/<name>.<batch>.candidates.json`:
   * a later batch uses another seed, half the quota, and skips the commits of the earlier batches' fixtures.
   */
  export async function draw(mirrors: string, out: string, source: Source, batch = 1, quota?: number) {
    const git = path.join(mirrors, source.repo.replace("/", "+"), "repo")
    const log = run(["git", `--git-dir=${git}`, "log", "--format=%H", ...source.select, "HEAD"], true).text
    const seen = new Set<string>()
    for (let b = 1; b < batch; b++) {
      const file = path.join(import.meta.dir, `${source.name}${b > 1 ? "." + b : ""}.json`)
      if (fs.existsSync(file))
        for (const change of CommentHistory.Fixture.parse(JSON.parse(fs.readFileSync(file, "utf8"))).changes)
          seen.add(change.commit)
    }
    const target = quota ?? (batch > 1 ? Math.ceil(source.target / 2) : source.target)
    const name = source.name + (batch > 1 ? "." + batch : "")
    const commits = shuffle(
      log
        .trim()
        .split("\n")
        .filter((c) => c && !seen.has(c)),
      20260823 + batch - 1,
    )
    const changes: CommentHistory.Change[] = []
    const view: string[] = []
    let total = 0
    for (const sha of commits) {
      if (total >= target) break
      // A snapshot may lack some objects (a commit whose tree or parent cannot be read): such a commit is skipped.
      // Earlier batches met none, so their draws are unchanged.
      const shown = run(["git", `--git-dir=${git}`, "show", "--format=", "--numstat", "--no-renames", sha])
      if (shown.code !== 0) continue
      const files = shown.text
        .trim()
        .split("\n")
        .map((l) => l.split("\t"))
        .filter(([a, , f]) => f && a !== "-" && Number(a) > 0 && Number(a) <= 400 && CODE.test(f) && !SKIP.test(f))
      // At most two files of one commit, so that one large commit does not fill a repository's share.
      for (const [, , file] of files.slice(0, 2)) {
        const syntax = CommentSyntax.forFile(file)!
        const after = run(["git", `--git-dir=${git}`, "show", `${sha}:${file}`]).text
        const before = run(["git", `--git-dir=${git}`, "show", `${sha}^:${file}`]).text
        const diff = run(
          ["git", `--git-dir=${git}`, "show", "--format=", "-U0", "--no-renames", sha, "--", file],
          true,
        ).text
        const added = addedLines(diff)
        const lines = after.split("\n")
        const { kinds, comments } = CommentSyntax.extract(lines, syntax)
        const old = new Set(CommentSyntax.extract(before.split("\n"), syntax).comments.map((c) => c.text))
        const fresh = comments.filter((c) => {
          for (let l = c.line; l <= c.end; l++) if (added.has(l + 1)) return !old.has(c.text)
          return false
        })
        if (!fresh.length || fresh.length > MAX_PER_FILE) continue
        const change: CommentHistory.Change = {
          commit: sha,
          file,
          added: [...added].filter((l) => lines[l - 1]?.trim()).length,
          comments: fresh.map((c) => CommentHistory.fromComment(lines, kinds, c, syntax)),
        }
        changes.push(change)
        total += fresh.length
        view.push(`######## ${sha.slice(0, 10)} ${file} (${change.added} added non-blank lines)`)
        fresh.forEach((c, i) => {
          view.push(`--- [${changes.length - 1}.${i}] line ${c.line + 1}`)
          for (let l = Math.max(0, c.line - 3); l <= Math.min(lines.length - 1, c.end + 4); l++)
            view.push(`${added.has(l + 1) ? "+" : " "}${l >= c.line && l <= c.end ? ">" : " "} ${lines[l]}`)
        })
      }
    }
    const fixture: CommentHistory.Fixture = {
      repo: source.repo,
      style: source.style,
      note:
        "Added comments of real commits, labelled by the criteria in docs/comment-checker.md. No code is stored: " +
        "`next` holds the code lines after a comment reduced to at most 12 lower-case words.",
      changes,
    }
    fs.mkdirSync(out, { recursive: true })
    fs.writeFileSync(path.join(out, `${name}.candidates.json`), JSON.stringify(fixture, null, 1))
    fs.writeFileSync(path.join(out, `${name}.view.txt`), view.join("\n") + "\n")
    return total
  }

  /**
   * Writes the labelled fixture `test/comment/history/<name>.json` from `<dir>/<name>.candidates.json` and the labels
   * in `<dir>/<name>.labels`: one line per change, `<change index> <one label letter per comment>`.
   *
   * @example
   * // bun test/comment/history/extract.ts --label /tmp/comment-label aider
   */
  export function label(dir: string, name: string) {
    const fixture = CommentHistory.Fixture.parse(
      JSON.parse(fs.readFileSync(path.join(dir, `${name}.candidates.json`), "utf8")),
    )
    const rows = fs
      .readFileSync(path.join(dir, `${name}.labels`), "utf8")
      .trim()
      .split("\n")
    if (rows.length !== fixture.changes.length)
      throw new Error(`${name}: ${rows.length} label rows, ${fixture.changes.length} changes`)
    rows.forEach((row, i) => {
      const [index, letters] = row.trim().split(/\s+/)
      const change = fixture.changes[i]
      if (Number(index) !== i || letters.length !== change.comments.length)
        throw new Error(`${name}: row ${i} has ${letters.length} labels for ${change.comments.length} comments`)
      change.comments.forEach((c, j) => {
        c.label = CommentHistory.Label.parse(letters[j])
        // Long comments (doc blocks, licenses) keep their first lines and their last; the others keep only their
        // comment prefix, so that the comment keeps its shape and length without storing its text.
        if (c.lines.length > KEEP + 1)
          c.lines = c.lines.map((l, k) => (k < KEEP || k === c.lines.length - 1 ? l : l.replace(/^([^\w]*).*$/, "$1…")))
      })
    })
    const out = path.join(import.meta.dir, `${name}.json`)
    fs.writeFileSync(out, JSON.stringify(fixture, null, 2) + "\n")
    return out
  }
}

if (import.meta.main && process.argv[2] === "--label") {
  const [, , , dir, ...names] = process.argv
  for (const name of names) console.log(CommentHistoryExtract.label(dir, name))
} else if (import.meta.main) {
  const [mirrors, out, ...rest] = process.argv.slice(2)
  // Options: --batch <n> (default 1), --quota <comments per repository> (default: the source's target, halved
  // for later batches), then the source names (default all).
  const option = (flag: string) => {
    const at = rest.indexOf(flag)
    if (at < 0) return undefined
    const value = Number(rest[at + 1])
    if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} needs a positive integer, got ${rest[at + 1]}`)
    rest.splice(at, 2)
    return value
  }
  const batch = option("--batch") ?? 1
  const quota = option("--quota")
  const names = rest
  for (const source of CommentHistoryExtract.SOURCES.filter((s) => !names.length || names.includes(s.name)))
    console.log(source.name, await CommentHistoryExtract.draw(mirrors, out, source, batch, quota))
}
