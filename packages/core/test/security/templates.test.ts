import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityTemplates } from "../../security/templates"
import { tmpdir } from "../fixture"

describe("SecurityTemplates.expansions", () => {
  test("every !`…` in order, as OpenCode finds them; none without the backquotes or when empty", () => {
    const text = "---\ndescription: x\n---\nStatus !`git status` and !`git diff --stat`\nnot `ls`, not ! `id`, not !``"
    expect(SecurityTemplates.expansions(text)).toEqual(["git status", "git diff --stat"])
  })

  test("a command spanning lines counts (OpenCode's pattern takes anything but a backquote)", () => {
    expect(SecurityTemplates.expansions("!`curl x |\nsh`")).toEqual(["curl x |\nsh"])
  })

  test("an unclosed !` counts: the user's arguments, appended after it, could close it", () => {
    expect(SecurityTemplates.expansions("run !`id and never close")).toEqual(["id and never close… (not closed)"])
    expect(SecurityTemplates.expansions("!`git diff` then !`id; : ")).toEqual(["git diff", "id; : … (not closed)"])
    // An empty !`` is not a command, and a later backquote closes an opening (a complete one then).
    expect(SecurityTemplates.expansions("quote !`` here")).toEqual([])
  })

  test("a frontmatter in another language than plain YAML is a risk for every kind (gray-matter runs JavaScript)", () => {
    for (const kind of ["command", "skill", "agent", "mode"] as const) {
      expect(SecurityTemplates.risks(kind, "---js\n{ description: 'x' }\n---\nbody")).toEqual(["frontmatter in js"])
      expect(SecurityTemplates.risks(kind, "--- yaml\npermission: ask\n---\n")).toEqual(["frontmatter in yaml"])
    }
    expect(SecurityTemplates.frontmatterLanguage("---\nname: x\n---\n")).toBeUndefined()
    expect(SecurityTemplates.frontmatterLanguage("---  \nname: x\n---\n")).toBeUndefined()
    expect(SecurityTemplates.frontmatterLanguage("\uFEFF---javascript\n{}\n---\n")).toBe("javascript")
  })

  test("1 MB of !` pairs: each ! between two backquotes is a command, found without backtracking", () => {
    const found = SecurityTemplates.expansions("!`".repeat(500_000))
    expect(found).toHaveLength(250_000)
    expect(new Set(found)).toEqual(new Set(["!"]))
  })
})

describe("SecurityTemplates.added", () => {
  test("commands not in the earlier list; each occurrence counts", () => {
    expect(SecurityTemplates.added(["git status"], ["git status", "id"])).toEqual(["id"])
    expect(SecurityTemplates.added(["git status"], ["git status", "git status"])).toEqual(["git status"])
    expect(SecurityTemplates.added(["a", "b"], ["b"])).toEqual([])
    expect(SecurityTemplates.added([], [])).toEqual([])
  })

  test("a changed command is a new one", () => {
    expect(SecurityTemplates.added(["git diff"], ["git diff; id"])).toEqual(["git diff; id"])
  })
})

describe("SecurityTemplates.grants", () => {
  test("each permission entry set to allow, at any depth, and each tools entry set to true", () => {
    const text = [
      "---",
      "description: reviews",
      "permission:",
      "  edit: deny",
      "  bash:",
      '    "git *": allow',
      '    "*": ask',
      "  webfetch: allow",
      "tools:",
      "  write: true",
      "  bash: false",
      "---",
      "You review. permission: allow in the body is prose.",
    ].join("\n")
    expect(SecurityTemplates.grants(text)).toEqual([
      "permission.bash.git *: allow",
      "permission.webfetch: allow",
      "tools.write: true",
    ])
  })

  test("permission given as one word; no frontmatter or no grant gives none", () => {
    expect(SecurityTemplates.grants("---\npermission: allow\n---\n")).toEqual(["permission: allow"])
    expect(SecurityTemplates.grants("---\npermission: ask\n---\n")).toEqual([])
    expect(SecurityTemplates.grants("permission: allow\n")).toEqual([])
  })

  test("a frontmatter YAML refuses (OpenCode may read it leniently) counts its allow and true words", () => {
    const text = "---\ndescription: a: b\npermission:\n  bash: allow\n  edit: allow\n---\nbody allow"
    expect(SecurityTemplates.grants(text)).toEqual(["2 allow or true in a frontmatter YAML refuses"])
  })

  test("risks: shell commands for commands and skills, grants for agents and modes", () => {
    const text = "---\npermission: allow\n---\n!`id`"
    expect(SecurityTemplates.risks("command", text)).toEqual(["id"])
    expect(SecurityTemplates.risks("skill", text)).toEqual(["id"])
    expect(SecurityTemplates.risks("agent", text)).toEqual(["permission: allow"])
    expect(SecurityTemplates.risks("mode", text)).toEqual(["permission: allow"])
  })
})

describe("SecurityTemplates.roots and list", () => {
  test("commands are every .md under command(s)/, skills each SKILL.md under skill(s)/ and .claude|.agents/skills/", async () => {
    await using dir = await tmpdir({
      "p/.opencode/command/a.md": "a",
      "p/.opencode/command/deep/b.md": "b",
      "p/.opencode/command/notes.txt": "not a template",
      "p/.opencode/commands/c.md": "c",
      "p/.opencode/skill/s/SKILL.md": "s",
      "p/.opencode/skill/s/reference.md": "a skill's other file",
      "p/.claude/skills/k/SKILL.md": "k",
      "p/.agents/skills/g/SKILL.md": "g",
      "p/sub/.claude/skills/n/SKILL.md": "nested project folder",
      "home/.claude/skills/h/SKILL.md": "h",
      "home/.config/opencode/commands/x.md": "x",
      "p/.opencode/agent/review.md": "agent",
      "p/.opencode/agents/team/lead.md": "agent at depth",
      "p/.opencode/mode/plan.md": "mode",
      "p/.opencode/modes/deep/not-a-mode.md": "modes are read from the folder itself only",
    })
    const roots = SecurityTemplates.roots({
      configDirs: [dir.file("p/.opencode"), dir.file("home/.config/opencode")],
      dirs: [dir.file("p/sub"), dir.file("p")],
      home: dir.file("home"),
    })
    const files = SecurityTemplates.list(roots)
    expect(files.kinds.get(dir.file("p/.opencode/agents/team/lead.md"))).toBe("agent")
    expect(files.kinds.get(dir.file("p/.opencode/mode/plan.md"))).toBe("mode")
    expect(files.kinds.get(dir.file("p/.claude/skills/k/SKILL.md"))).toBe("skill")
    expect(files.files.map((f) => path.relative(dir.path, f)).sort()).toEqual([
      "home/.claude/skills/h/SKILL.md",
      "home/.config/opencode/commands/x.md",
      "p/.agents/skills/g/SKILL.md",
      "p/.claude/skills/k/SKILL.md",
      "p/.opencode/agent/review.md",
      "p/.opencode/agents/team/lead.md",
      "p/.opencode/command/a.md",
      "p/.opencode/command/deep/b.md",
      "p/.opencode/commands/c.md",
      "p/.opencode/mode/plan.md",
      "p/.opencode/skill/s/SKILL.md",
      "p/sub/.claude/skills/n/SKILL.md",
    ])
  })

  test("linked folders are followed once (a loop ends); dangling links and missing roots are skipped", async () => {
    await using dir = await tmpdir({ "elsewhere/e.md": "e", ".opencode/command/a.md": "a" })
    fs.symlinkSync(dir.file("elsewhere"), dir.file(".opencode/command/linked"))
    fs.symlinkSync(dir.file(".opencode/command"), dir.file(".opencode/command/loop"))
    fs.symlinkSync(dir.file("nowhere"), dir.file(".opencode/command/dangling.md"))
    const roots = SecurityTemplates.roots({
      configDirs: [dir.file(".opencode"), dir.file("absent")],
      dirs: [],
      home: dir.file("h"),
    })
    const found = SecurityTemplates.list(roots)
      .files.map((f) => path.relative(dir.path, f))
      .sort()
    expect(found).toEqual([".opencode/command/a.md", ".opencode/command/linked/e.md"])
  })

  test("no cap: 5,001 files before a template in walking order do not hide it", async () => {
    await using dir = await tmpdir()
    const folder = dir.file(".opencode/command/aaa")
    fs.mkdirSync(folder, { recursive: true })
    for (let i = 0; i <= 5_000; i++) fs.writeFileSync(path.join(folder, `c${i}.md`), "")
    fs.mkdirSync(dir.file(".claude/skills/evil"), { recursive: true })
    fs.writeFileSync(dir.file(".claude/skills/evil/SKILL.md"), "!`id`")
    const roots = SecurityTemplates.roots({
      configDirs: [dir.file(".opencode")],
      dirs: [dir.path],
      home: dir.file("h"),
    })
    const found = SecurityTemplates.list(roots)
    expect(found.files).toHaveLength(5_002)
    expect(found.kinds.get(dir.file(".claude/skills/evil/SKILL.md"))).toBe("skill")
  }, 60_000)
})

describe("SecurityTemplates.contain and launch (AS4: a template's shell lines run inside the sandbox)", () => {
  test("every shell line OpenCode would run is handed over; the rest of the text is kept", () => {
    const text = "Check:\n!`sh scripts/check.sh`\nthen !`git diff --stat`, not `ls`\n"
    expect(SecurityTemplates.contain(text, (cmd) => `run ${cmd}`)).toBe(
      "Check:\n!`run sh scripts/check.sh`\nthen !`run git diff --stat`, not `ls`\n",
    )
    expect(SecurityTemplates.contain("no lines here", () => "x")).toBe("no lines here")
  })

  test("an opening that nothing closes stops being one (the user's arguments appended after it would close it)", () => {
    const out = SecurityTemplates.contain("!`git diff` then !`id; : ", (cmd) => `run ${cmd}`)
    expect(out).toBe("!`run git diff` then ! `id; : ")
    expect(SecurityTemplates.expansions(out + "\n\nreview the `parse` function")).toEqual(["run git diff"])
  })

  test("BB5 a '!' before a placeholder and a placeholder before a backquote are separated, outside the lines only", () => {
    const text = "here!$ARGUMENTS, go!$12 see `$1` and $ARGUMENTS` !`grep !$1 x`"
    expect(SecurityTemplates.splices(text)).toEqual([
      "!$ARGUMENTS (a shell line once the arguments are substituted)",
      "!$12 (a shell line once the arguments are substituted)",
      "$1` (a shell line once the arguments are substituted)",
      "$ARGUMENTS` (a shell line once the arguments are substituted)",
    ])
    expect(SecurityTemplates.contain(text, (cmd) => `run ${cmd}`)).toBe(
      "here! $ARGUMENTS, go! $12 see `$1 ` and $ARGUMENTS ` !`run grep !$1 x`",
    )
    expect(SecurityTemplates.separated(text)).toBe("here! $ARGUMENTS, go! $12 see `$1 ` and $ARGUMENTS ` !`grep !$1 x`")
    expect(SecurityTemplates.splices("Review `src/` for $1! $ARGUMENTS and $HOME`x`")).toEqual([])
    expect(SecurityTemplates.risks("command", "Fix it!$1")).toEqual([
      "!$1 (a shell line once the arguments are substituted)",
    ])
  })

  test("a replacement never ends the line early", () => {
    expect(SecurityTemplates.contain("!`a`", () => "echo `id`")).toBe("!`echo 'id'`")
  })

  test("the launch line quotes the command so the shell hands it over whole", () => {
    const line = SecurityTemplates.launch("/usr/bin/bash", "/tmp/s/template.bash", "echo it's $HOME; id")!
    expect(line).toBe(`'/usr/bin/bash' '/tmp/s/template.bash' 'echo it'\\''s $HOME; id'`)
    // Read back by a POSIX shell: three words, the last the command as written.
    const words = Bun.spawnSync(["bash", "-c", `printf '%s\\n' ${line}`])
      .stdout.toString()
      .split("\n")
    expect(words.slice(0, 3)).toEqual(["/usr/bin/bash", "/tmp/s/template.bash", "echo it's $HOME; id"])
    expect(SecurityTemplates.launch("/usr/bin/bash", "/tmp/it's/template.bash", "id")).toBeUndefined()
  })
})
