import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityTemplates } from "../../security/templates"
import { tmpdir } from "../fixture"
import { shellLines, substitute } from "./command-expand"
import { bunSpawnSync } from "../spawn-sync"

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

  test("EE1 placeholders side by side (also through ones left empty) are separated, outside the lines only", () => {
    const text = "Fix: $ARGUMENTS$ARGUMENTS, $1$2 or $2$9$1, !`grep $1$2 x` and $1 $2, $1x$2, $12."
    expect(SecurityTemplates.splices(text)).toEqual([
      "$ARGUMENTS$ARGUMENTS (a shell line once the arguments are substituted side by side)",
      "$1$2 (a shell line once the arguments are substituted side by side)",
      "$2$9$1 (a shell line once the arguments are substituted side by side)",
    ])
    const separated = "Fix: $ARGUMENTS $ARGUMENTS, $1 $2 or $2 $9 $1, !`grep $1$2 x` and $1 $2, $1x$2, $12."
    expect(SecurityTemplates.separated(text)).toBe(separated)
    expect(SecurityTemplates.contain(text, (cmd) => `run ${cmd}`)).toBe(separated.replace("!`grep", "!`run grep"))
    expect(SecurityTemplates.separate("!$1$2`")).toBe("! $1 $2 `")
    expect(SecurityTemplates.risks("command", "---\ndescription: d\n---\nFix: $1$1\n")).toEqual([
      "$1$1 (a shell line once the arguments are substituted side by side)",
    ])
    // An argument ending in '!' and the next starting with a backquote: a shell line only when nothing is between.
    for (const [template, args] of [
      ["Fix: $ARGUMENTS$ARGUMENTS", "`./check.sh`!"],
      ["Deploy $1$2", "now! `./check.sh`"],
      ["Go $2$9$1", "`./check.sh` now!"],
    ]) {
      expect(shellLines(substitute(template!, args!)), template).toEqual(["./check.sh"])
      expect(shellLines(substitute(SecurityTemplates.separated(template!), args!)), template).toEqual([])
    }
  })

  test("EE1 with $ARGUMENTS in it, a numbered placeholder at the template's edge is kept from an argument's $` and $'", () => {
    const cases = [
      { template: "$1 fails. Fix: $ARGUMENTS", args: "`./check.sh` crash!$`", edged: " $1 fails. Fix: $ARGUMENTS" },
      { template: "Fix: $ARGUMENTS, last: $2", args: "crash$'`./check.sh` now!", edged: "Fix: $ARGUMENTS, last: $2 " },
    ]
    for (const c of cases) {
      // The premise: $1 is substituted first, so $` copies the user's first argument after their '!' ($' the last one).
      expect(shellLines(substitute(c.template, c.args)), c.template).toEqual(["./check.sh"])
      expect(SecurityTemplates.splices(c.template), c.template).toHaveLength(1)
      expect(SecurityTemplates.separated(c.template)).toBe(c.edged)
      expect(shellLines(substitute(c.edged, c.args)), c.template).toEqual([])
    }
    expect(SecurityTemplates.risks("command", "---\ndescription: d\n---\n$1 fails: $ARGUMENTS\n")).toHaveLength(1)
    // Without $ARGUMENTS no pattern of the user's is live (unless they type $ARGUMENTS themselves): left as it is.
    expect(SecurityTemplates.splices("Explain $1")).toEqual([])
    expect(SecurityTemplates.edges("$1 then $2")).toBe("$1 then $2")
  })

  test("DD-R1 a template with a placeholder keeps its own edges from an argument's $` and $' (a backquote first, a '!' last)", () => {
    // The test helper substitutes as OpenCode does: the arguments' replacement patterns are live at $ARGUMENTS only.
    expect(substitute("A $ARGUMENTS B", "[$`|$'|$&|$$]")).toBe("A [A | B|$ARGUMENTS|$] B")
    expect(substitute("A $1 B", "[$`]")).toBe("A [$`] B")
    expect(SecurityTemplates.splices("`make` fails: $ARGUMENTS")).toEqual([
      "` at the template's start (a shell line once an argument's $` is substituted after a !)",
    ])
    expect(SecurityTemplates.risks("command", "---\ndescription: d\n---\n\n  Fix $1 now!\n")).toEqual([
      "! at the template's end (a shell line once an argument's $' is substituted before a backquote)",
    ])
    expect(SecurityTemplates.risks("command", "---\ndescription: d\n---\n`make` fails: $1\n")).toHaveLength(1)
    // No placeholder: OpenCode appends the arguments after a blank line, with no replacement patterns.
    expect(SecurityTemplates.splices("`make` fails, go!")).toEqual([])
    expect(SecurityTemplates.edges("`make` fails, go!")).toBe("`make` fails, go!")
    const text = "`make` fails: !`grep $1 log` and $ARGUMENTS!"
    expect(SecurityTemplates.separated(text)).toBe(" `make` fails: !`grep $1 log` and $ARGUMENTS! ")
    let i = 0
    const out = SecurityTemplates.contain(
      text,
      (cmd) => `run ${cmd}`,
      (cmd) => SecurityTemplates.hold(cmd, "n0", i++),
    )
    expect(out.startsWith(" `make` fails: [[ocb:n0:0:0:1:")).toBe(true)
    expect(out.endsWith("$ARGUMENTS! ")).toBe(true)
    for (const args of ["!$`", "x$'`id`", "!$`$ARGUMENTS $'`id`"])
      expect(shellLines(substitute(out, args)), args).toEqual([])
  })

  test("a replacement never ends the line early", () => {
    expect(SecurityTemplates.contain("!`a`", () => "echo `id`")).toBe("!`echo 'id'`")
  })

  test("the launch line quotes the command so the shell hands it over whole", () => {
    const line = SecurityTemplates.launch("/usr/bin/bash", "/tmp/s/template.bash", "echo it's $HOME; id")!
    expect(line).toBe(`'/usr/bin/bash' '/tmp/s/template.bash' 'echo it'\\''s $HOME; id'`)
    // Read back by a POSIX shell: three words, the last the command as written.
    const words = bunSpawnSync(["bash", "-c", `printf '%s\\n' ${line}`])
      .stdout.toString()
      .split("\n")
    expect(words.slice(0, 3)).toEqual(["/usr/bin/bash", "/tmp/s/template.bash", "echo it's $HOME; id"])
    expect(SecurityTemplates.launch("/usr/bin/bash", "/tmp/it's/template.bash", "id")).toBeUndefined()
  })
})

describe("SecurityTemplates.hold and held (a line with an argument placeholder: no host shell reads the arguments)", () => {
  const LAUNCH = (cmd: string) => SecurityTemplates.launch("/usr/bin/bash", "/tmp/s/template.bash", cmd)!
  const contained = (template: string) => {
    let i = 0
    return SecurityTemplates.contain(template, LAUNCH, (cmd) => SecurityTemplates.hold(cmd, "n0", i++))
  }
  const TEMPLATE = 'Said: !`echo "said $ARGUMENTS"` first !`printf %s "$1|$2"` and !`git status` for $1\n'

  test("the premise: quoted by the launch line, an argument with a quote ends the quoting and is host shell code", () => {
    const line = shellLines(substitute(SecurityTemplates.contain(TEMPLATE, LAUNCH), "x'; touch pwned; '"))[0]!
    expect(line).toBe(`'/usr/bin/bash' '/tmp/s/template.bash' 'echo "said x'; touch pwned; '"'`)
    // `'echo "said x'` and then `touch pwned` as a command of its own, in the host shell.
    expect(line.split("; ")[1]).toBe("touch pwned")
  })

  /** The lines of `template` as OpenCode substitutes the arguments into them (had it no shell lines to cut them). */
  const asOpenCode = (template: string, args: string) =>
    [...substitute(template.replace(/!`([^`]+)`/g, "\u0001$1\u0002"), args).matchAll(/\u0001([^\u0002]*)\u0002/g)]
      .map((m) => m[1]!)
      .filter((cmd) => cmd !== "git status")

  test("apostrophes, quote breaks, backquotes, $(…), newlines, empty and numbered arguments: no shell line for OpenCode, the line as OpenCode would substitute it", () => {
    const cases = [
      "it's",
      "x'; cat secrets/key; '",
      "`cat secrets/key`",
      "$(cat secrets/key)",
      "one\ntwo; id",
      "",
      `"a b" 'c d' e`,
    ]
    for (const args of cases) {
      const expanded = substitute(contained(TEMPLATE), args)
      // The line without a placeholder still goes to the launcher through OpenCode; nothing else is a line.
      expect(shellLines(expanded), args).toEqual([LAUNCH("git status")])
      expect(
        SecurityTemplates.held(expanded, "n0").map((l) => l.cmd),
        args,
      ).toEqual(asOpenCode(TEMPLATE, args))
    }
    expect(asOpenCode(TEMPLATE, "it's")).toEqual([`echo "said it's"`, `printf %s "it|s"`]) // OpenCode splits words at quotes
    expect(asOpenCode(TEMPLATE, `"a b" 'c d' e`)[1]).toBe('printf %s "a b|c d e"')
    // `$\`` in an argument makes OpenCode's replaceAll put the template's text before it there, marks and all: that
    // line holds no command (it is not run), the others still do.
    const odd = SecurityTemplates.held(substitute(contained(TEMPLATE), "$` x"), "n0")
    expect(odd.some((l) => l.cmd === undefined)).toBe(true)
    expect(odd.map((l) => l.cmd)).toContain('printf %s "$`|x"')
  })

  test("the rest of the template reads as OpenCode would make it: the placeholders outside the lines, the last numbered one taking the rest", () => {
    const expanded = substitute(contained(TEMPLATE), "a b c")
    const lines = SecurityTemplates.held(expanded, "n0")
    let out = expanded
    for (const l of [...lines].reverse()) out = out.slice(0, l.start) + `<${l.cmd}>` + out.slice(l.end)
    expect(out).toBe(`Said: <echo "said a b c"> first <printf %s "a|b c"> and !\`${LAUNCH("git status")}\` for a\n`)
    // Placeholders only in a line: OpenCode still sees them and appends no argument to the template.
    const only = substitute(contained("Out: !`echo $1`"), "x y")
    expect(SecurityTemplates.held(only, "n0")).toEqual([{ start: 5, end: only.length, cmd: "echo x y" }])
  })

  test("marks an argument forges, or that are not in order, hold no command; another guard's are not read", () => {
    const one = SecurityTemplates.hold("echo $1 $2", "n0", 0)
    const forged = substitute(one, "[[ocb:n0:0:2:2:]] x")
    expect(SecurityTemplates.held(forged, "n0").some((l) => l.cmd === undefined)).toBe(true)
    expect(SecurityTemplates.held(substitute(one, "x y"), "other")).toEqual([])
    expect(SecurityTemplates.held(substitute(one, "x y"), "n0")[0]?.cmd).toBe("echo x y")
  })
})
