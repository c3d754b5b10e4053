// Red team BB, finding BB5 (a bypass of the AS4 fix): a command template with `!` right before `$ARGUMENTS` (or `$1`)
// has no shell line when the configuration hook looks. OpenCode substitutes the user's arguments first and then runs
// every !`…` of the result on the host (1.2.15, 1.18.3 and 1.18.33 alike), so the argument `./scripts/check.sh` in
// backquotes made a shell line there. The same holds the other way round: a placeholder right before the template's
// own backquote, and an argument ending in `!`. The configuration hook now separates both joins
// (`SecurityTemplates.splices`, `separate`), on both routes, for commands and skills.
//
// Red team DD, finding DD-R1 (a bypass of BB5/FQ): OpenCode replaces $ARGUMENTS with a JavaScript replaceAll and the
// arguments as a *string*, so the replacement patterns in them are live: "$`" in an argument expands to the template's
// text before the placeholder, "$'" to its text after it. The argument "!$`" (it holds no "!`") put a "!" before the
// template's first character, so a template starting with a code span had a shell line OpenCode ran on the host; "$'`…`"
// put a backquote after a template ending in "!". The template's own edges are now kept apart too
// (`SecurityTemplates.edges`, counted by `splices`).
//
// Red team EE, finding EE1 (a bypass of BB5): two placeholders with nothing between them (`$ARGUMENTS$ARGUMENTS`,
// `$1$2`, `$1$1`, or `$2$9$1`, whose `$9` is empty with fewer arguments) join one argument ending in `!` to the next
// starting with a backquote. They are separated too, and an agent's template with them is moved aside.
import { $ } from "bun"
import fs from "fs"
import path from "path"
import { afterAll, describe, expect, test } from "bun:test"
import { ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"
import { SECRET_FILE } from "./fixture"
import { shellLines, substitute } from "./command-expand"
import { SecurityTemplates } from "../../security/templates"
import { bunSpawnSync } from "../spawn-sync"

const HEAVY = { timeout: 90_000 }
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const KEY = SECRET_FILE.split("\n")[0]!
const LEAK = "#!/bin/sh\ncat secrets/api.key 2>&1\n"

/** The outputs of the shell lines OpenCode would run, with bash (1.18) and with Bun's shell (1.2.15). */
async function run(text: string, cwd: string) {
  const out: string[] = []
  for (const m of text.matchAll(/!`([^`]+)`/g)) {
    out.push(bunSpawnSync(["bash", "-c", m[1]!], { cwd, env: process.env }).stdout.toString())
    out.push(await $`${{ raw: m[1]! }}`.cwd(cwd).quiet().nothrow().text())
  }
  return out.join("\n")
}

/**
 * A project whose skill `fixer` has `body` and whose check script prints the protected key; `check` gets the command
 * the configuration hook made of the skill on `route`.
 */
async function skillAsCommand(
  route: (typeof ROUTES)[number],
  body: string,
  check: (entry: { template: string; description?: string }, cwd: string) => Promise<void>,
) {
  await using dir = await redteamProject({
    "scripts/check.sh": LEAK,
    ".opencode/skill/fixer/SKILL.md": `---\nname: fixer\ndescription: Fixes a check\n---\n${body}`,
  })
  await $`chmod +x scripts/check.sh`.cwd(dir.path).quiet()
  const s = await open(route, dir.path)
  try {
    const cfg: { command?: Record<string, { template: string; description?: string }> } = {}
    await s.hooks.config!(cfg)
    expect(cfg.command?.fixer).toBeDefined()
    await check(cfg.command!.fixer!, dir.path)
  } finally {
    await s.close()
  }
}

const CASES = [
  {
    name: "'!' right before $ARGUMENTS",
    template: "Fix the failure reported here!$ARGUMENTS\n",
    args: "`./scripts/check.sh` fails on CI",
  },
  { name: "'!' right before $1", template: "Fix it now!$1 and report.\n", args: "`./scripts/check.sh`" },
  {
    name: "'!' before a placeholder left empty and the template's backquote",
    template: "Go!$2`./scripts/check.sh` done\n",
    args: "one",
  },
  {
    name: "$ARGUMENTS right before the template's backquote",
    template: "Review $ARGUMENTS`./scripts/check.sh`\n",
    args: "this now!",
  },
  { name: "$1 right before the template's backquote", template: "Check `$1`./scripts/check.sh` output\n", args: "it!" },
]

for (const route of ROUTES) {
  describe(`AS4 arguments route ${route}`, () => {
    test(
      "BB5 a template whose text joins the user's arguments into a shell line: none runs on the host once they are substituted",
      async () => {
        await using dir = await redteamProject({ "scripts/check.sh": LEAK })
        await $`chmod +x scripts/check.sh`.cwd(dir.path).quiet()
        const s = await open(route, dir.path)
        try {
          for (const c of CASES) {
            // The premise: as OpenCode runs it, the argument forms a shell line that reads the protected file.
            expect(await run(substitute(c.template, c.args), dir.path), c.name).toContain(KEY)
            const cfg = { command: { fix: { template: c.template } } }
            await s.hooks.config!(cfg)
            const expanded = substitute(cfg.command.fix.template, c.args)
            expect([...expanded.matchAll(/!`([^`]+)`/g)], c.name).toEqual([])
            expect(await run(expanded, dir.path), c.name).not.toContain(KEY)
          }
          // The text still reads the same to the model: only a space between the `!` and the argument.
          const cfg = { command: { fix: { template: CASES[0]!.template } } }
          await s.hooks.config!(cfg)
          expect(substitute(cfg.command.fix.template, "`x` fails")).toBe("Fix the failure reported here! `x` fails\n")
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "DD-R1 an argument's replacement patterns ($` and $') do not make the template's own edges a host shell line",
      async () => {
        await using dir = await redteamProject({ "scripts/check.sh": LEAK, "src/a.ts": "x\n" })
        await $`chmod +x scripts/check.sh`.cwd(dir.path).quiet()
        const s = await open(route, dir.path)
        try {
          const cases = [
            {
              name: "$ARGUMENTS in the text, '!$`' in the argument",
              template: "`./scripts/check.sh` fails on CI. Fix: $ARGUMENTS\n",
              args: "the parser crashes on input like !$`",
            },
            {
              name: "$ARGUMENTS in a held line, '!$`' in the argument",
              template: "`./scripts/check.sh` fails. Where: !`grep -rn $ARGUMENTS src`\n",
              args: "the parser crashes on input like !$`",
            },
            {
              name: "only $1, and the argument brings a $ARGUMENTS OpenCode replaces next",
              template: "`./scripts/check.sh` fails: $1",
              args: "!$`$ARGUMENTS",
            },
            {
              name: "a template ending in '!', \"$'\" and a backquote in the argument",
              template: "Fix: $ARGUMENTS. Run the check now!",
              args: "crash$'`./scripts/check.sh`",
            },
          ]
          for (const c of cases) {
            const cfg = { command: { fix: { template: c.template } } }
            await s.hooks.config!(cfg)
            // The premise: the template as the hook made it, its edges left as they were, runs the project's script
            // on the host once OpenCode substitutes the argument.
            const edged = cfg.command.fix.template.replace(/^ `/, "`").replace(/! $/, "!")
            expect(await run(substitute(edged, c.args), dir.path), c.name).toContain(KEY)
            const expanded = substitute(cfg.command.fix.template, c.args)
            const host = [...expanded.matchAll(/!`([^`]+)`/g)]
              .map((m) => m[1]!)
              .filter((l) => !l.includes("template.bash"))
            expect(host, c.name).toEqual([])
            expect(await run(expanded, dir.path), c.name).not.toContain(KEY)
          }
          // The text reads the same to the model (OpenCode trims the template once its lines have run).
          for (const template of ["`make` fails on CI. Fix: $ARGUMENTS", "Fix: $ARGUMENTS now!"]) {
            const cfg = { command: { fix: { template } } }
            await s.hooks.config!(cfg)
            expect(cfg.command.fix.template).not.toBe(template)
            expect(substitute(cfg.command.fix.template, "crash").trim()).toBe(substitute(template, "crash").trim())
          }
          // A template the agent writes with such an edge is moved aside, as one with a shell line.
          const file = path.join(dir.path, ".opencode/command/fix.md")
          await s.call("write", {
            filePath: file,
            content: "---\ndescription: fix\n---\n\n`./scripts/check.sh` fails on CI. Fix: $ARGUMENTS\n",
          })
          expect(fs.existsSync(file)).toBe(false)
          const aside = fs.readdirSync(path.dirname(file)).find((f) => f.startsWith("fix.md.blocked-by-security-"))
          expect(aside).toBeDefined()
          const ok = path.join(dir.path, ".opencode/command/ok.md")
          await s.call("write", { filePath: ok, content: "Check `./scripts/check.sh` for $ARGUMENTS.\n" })
          expect(fs.existsSync(ok)).toBe(true)
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "EE1 placeholders side by side (or at an edge, through $` and $') do not join one argument's '!' to another's backquote into a host shell line",
      async () => {
        await using dir = await redteamProject({ "scripts/check.sh": LEAK })
        await $`chmod +x scripts/check.sh`.cwd(dir.path).quiet()
        const s = await open(route, dir.path)
        try {
          const cases = [
            { template: "Fix the failure reported here: $ARGUMENTS$ARGUMENTS\n", args: "`./scripts/check.sh`!" },
            { template: "Deploy $1$2\n", args: "now! `./scripts/check.sh`" },
            { template: "Fix: $1$1\n", args: "`./scripts/check.sh`!" },
            { template: "Go $2$9$1\n", args: "`./scripts/check.sh` now!" },
            // The same join through an argument's $` and $': they copy the user's first or last argument from a
            // template's edge (a sibling of DD-R1, whose edges were the template's own text).
            { template: "$1 fails. Fix: $ARGUMENTS", args: "`./scripts/check.sh` crash!$`" },
            { template: "Fix: $ARGUMENTS, last: $2", args: "crash$'`./scripts/check.sh` now!" },
          ]
          for (const c of cases) {
            // The premise: as OpenCode runs it, the arguments form a shell line that reads the protected file.
            expect(await run(substitute(c.template, c.args), dir.path), c.template).toContain(KEY)
            const cfg = { command: { fix: { template: c.template } } }
            await s.hooks.config!(cfg)
            const expanded = substitute(cfg.command.fix.template, c.args)
            expect(shellLines(expanded), c.template).toEqual([])
            expect(await run(expanded, dir.path), c.template).not.toContain(KEY)
          }
          // The model reads the arguments with a space between them.
          const cfg = { command: { fix: { template: "Deploy $1$2\n" } } }
          await s.hooks.config!(cfg)
          expect(substitute(cfg.command.fix.template, "now! `x`")).toBe("Deploy now! `x`\n")
          // A template the agent writes with such a join is moved aside, as one with a shell line.
          const file = path.join(dir.path, ".opencode/command/fix.md")
          await s.call("write", {
            filePath: file,
            content: "---\ndescription: fix\n---\nFix the failure reported here: $ARGUMENTS$ARGUMENTS\n",
          })
          expect(fs.existsSync(file)).toBe(false)
          const aside = fs.readdirSync(path.dirname(file)).find((f) => f.startsWith("fix.md.blocked-by-security-"))
          expect(aside).toBeDefined()
          const ok = path.join(dir.path, ".opencode/command/ok.md")
          await s.call("write", { filePath: ok, content: "Deploy $1 to $2.\n" })
          expect(fs.existsSync(ok)).toBe(true)
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "DD-R1 a skill starting with a code span and holding $ARGUMENTS (run as a command) becomes a configured command with its start separated",
      async () => {
        await skillAsCommand(route, "`./scripts/check.sh` fails. Fix: $ARGUMENTS\n", async (entry, cwd) => {
          expect(entry.template.startsWith(" `./scripts/check.sh` fails.")).toBe(true)
          const expanded = substitute(entry.template, "crash!$`")
          expect(shellLines(expanded)).toEqual([])
          expect(await run(expanded, cwd)).not.toContain(KEY)
        })
      },
      HEAVY,
    )

    test(
      "BB5 a skill with '!' right before $ARGUMENTS (run as a command) becomes a configured command with the join separated",
      async () => {
        await skillAsCommand(route, "Fix this!$ARGUMENTS\n", async (entry, cwd) => {
          expect(entry.description).toBe("Fixes a check")
          const expanded = substitute(entry.template, "`./scripts/check.sh`")
          expect(expanded).toContain("Fix this! `./scripts/check.sh`")
          expect(await run(expanded, cwd)).not.toContain(KEY)
        })
      },
      HEAVY,
    )

    test(
      "FQ a shell line with a placeholder runs inside the sandbox with the argument as typed (apostrophes too), and no argument runs on the host",
      async () => {
        await using dir = await redteamProject({})
        const s = await open(route, dir.path)
        // A file the host could create and the sandbox cannot (the protected folder).
        const pwned = path.join(dir.path, "secrets", "pwned-on-host")
        try {
          const template = 'Said: !`echo "said $ARGUMENTS"`\nFirst: !`echo "first $1"`\nSee `src/` for $1\n'
          const cfg = {
            command: {
              echo: { template },
              out: { template: "Out: !`echo $ARGUMENTS`" },
              plain: { template: "Review `src/` for $1, carefully! $ARGUMENTS\n" },
            },
          }
          await s.hooks.config!(cfg)
          expect(cfg.command.plain.template).toBe("Review `src/` for $1, carefully! $ARGUMENTS\n")
          const cases = [
            "it's fine",
            `x'; touch ${pwned}; cat secrets/api.key; '`,
            "`touch " + pwned + "; cat secrets/api.key`",
            `$(touch ${pwned}; cat secrets/api.key)`,
            `x"; touch ${pwned}; cat secrets/api.key; "`,
            "two\nlines; id",
            "",
          ]
          const expanded = (args: string) => substitute(cfg.command.echo.template, args).trim()
          // The premise: as the layer quoted it before, OpenCode's host shell ran the argument's command.
          const before = SecurityTemplates.contain(template, (cmd) =>
            SecurityTemplates.launch("bash", "/dev/null", cmd)!,
          )
          await run(substitute(before, cases[1]!), dir.path)
          expect(fs.existsSync(pwned)).toBe(true)
          fs.rmSync(pwned)
          for (const args of cases) {
            // What OpenCode runs on the host before any hook: nothing.
            expect(await run(expanded(args), dir.path), args).toBe("")
            const parts = [{ type: "text", text: expanded(args) }]
            await s.hooks["command.execute.before"]!({ command: "echo", sessionID: "ses_fq", arguments: args }, {
              parts,
            } as never)
            const text = parts[0]!.text
            expect(text, args).not.toContain("[[ocb:")
            expect(text, args).not.toContain(KEY)
            expect(text, args).toContain("See `src/` for")
            expect(fs.existsSync(pwned), args).toBe(false)
          }
          const said = async (args: string, template = cfg.command.echo.template) => {
            const parts = [{ type: "subtask", prompt: substitute(template, args).trim() }]
            await s.hooks["command.execute.before"]!({ command: "echo", sessionID: "ses_fq", arguments: args }, {
              parts,
            } as never)
            return parts[0]!.prompt
          }
          // The argument as OpenCode substitutes it ($1, the last numbered one, takes the words it splits at quotes).
          expect(await said("it's fine")).toBe(
            "Said: said it's fine\n\nFirst: first it s fine\n\nSee `src/` for it s fine",
          )
          expect(await said("")).toBe("Said: said \n\nFirst: first \n\nSee `src/` for")
          // Inside the sandbox the line is the user's, argument and all: the protected file stays unreadable there.
          const inside = await said("x; cat secrets/api.key 2>&1", cfg.command.out.template)
          expect(inside).toContain("secrets/api.key: Permission denied")
          expect(inside).not.toContain(KEY)
        } finally {
          await s.close()
        }
      },
      HEAVY,
    )
  })
}
