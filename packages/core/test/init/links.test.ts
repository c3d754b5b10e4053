// `opencode-builtins init` runs on the host, as the user, outside the sandbox: it must not write through a link a
// command of a session left in the project. A `.gitignore` linked to the policy file got init's block appended to the
// policy, which then failed every later session, and one linked to `.git/config` broke git (red team GE2).
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Init } from "../../init/init"
import { POLICY } from "../security/fixture"
import { ROUTES, fresh, isolateHome } from "../security/redteam-helpers"
import { tmpdir } from "../fixture"
import { bunSpawnSync } from "../spawn-sync"

/** The fixture policy without its home-folder rule (this test's home is not isolated outside the route tests). */
const PROJECT_POLICY = JSON.stringify({ ...POLICY, rules: POLICY.rules.filter((r) => !r.pattern.startsWith("~")) })

/** Every entry under `dir` (links as `-> target`, files with their content), `.git` left out. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const rel of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    if (rel === ".git" || rel.startsWith(".git/")) continue
    const full = path.join(dir, rel)
    const stat = fs.lstatSync(full)
    if (stat.isSymbolicLink()) out[rel] = `-> ${fs.readlinkSync(full)}`
    else if (stat.isFile()) out[rel] = fs.readFileSync(full, "utf8")
  }
  return out
}

describe("init never writes through a .gitignore that is a link (GE2)", () => {
  let home: ReturnType<typeof isolateHome>
  beforeAll(() => {
    home = isolateHome()
  })
  afterAll(() => home.restore(), 60_000)

  for (const route of ROUTES)
    describe(`route ${route}`, () => {
      for (const target of [".opencode-security.json", ".git/config"])
        test(`a command links .gitignore to ${target}: init refuses, naming the link, and writes nothing`, async () => {
          await using box = await fresh(route)
          const dir = box.dir.path
          fs.rmSync(path.join(dir, ".gitignore"), { force: true })
          const before = fs.readFileSync(path.join(dir, target), "utf8")
          await box.s.bash(`ln -s ${target} .gitignore`)
          await box.s.call("todowrite", { todos: [] })
          await box.s.close()
          // The layer leaves such a link (its target is protected, the link is not): init, run later, must not follow it.
          expect(fs.readlinkSync(path.join(dir, ".gitignore"))).toBe(target)
          const files = snapshot(dir)
          const plan = Init.setup(dir, {})
          expect(plan.ok).toBe(false)
          if (plan.ok) return
          expect(plan.error).toContain(`${path.join(dir, ".gitignore")} is a symbolic link (to ${target})`)
          expect(plan.error).toContain("nothing was written")
          expect(fs.readFileSync(path.join(dir, target), "utf8")).toBe(before)
          // All or nothing: no configuration, example or other file was written either.
          expect(snapshot(dir)).toEqual(files)
        }, 60_000)
    })
})

describe("init and links in the project (GE2)", () => {
  test("a .gitignore linked to a file of the user's: refused with what to do, nothing written", async () => {
    await using dir = await tmpdir({ "shared-ignore": "node_modules/\n" })
    fs.symlinkSync("shared-ignore", dir.file(".gitignore"))
    const files = snapshot(dir.path)
    const plan = Init.setup(dir.path, {})
    expect(plan).toEqual({
      ok: false,
      error:
        `${dir.file(".gitignore")} is a symbolic link (to shared-ignore): init does not write through a link, and git ` +
        "does not read a .gitignore that is one. If you made it, replace it with a copy of the file it leads to; if you " +
        "did not (a command of an agent session can leave one), remove it. Then run init again; nothing was written",
    })
    expect(snapshot(dir.path)).toEqual(files)
  })

  test("a .gitignore that is a named pipe: refused at once (never opened), nothing written", async () => {
    await using dir = await tmpdir({})
    expect(bunSpawnSync(["mkfifo", dir.file(".gitignore")]).exitCode).toBe(0)
    const plan = Init.setup(dir.path, {})
    expect(plan.ok).toBe(false)
    if (!plan.ok)
      expect(plan.error).toContain("is not a regular file (a pipe, socket or device), where a file is expected")
    expect(fs.existsSync(dir.file("opencode.json"))).toBe(false)
  })

  test("a .gitignore replaced by a link between the plan and the write: not written through; planned again and refused", async () => {
    // The link leads to a protected file with the very text the plan read, so only its being a link can tell.
    await using dir = await tmpdir({
      ".opencode-security.json": PROJECT_POLICY,
      ".gitignore": "dist/\n",
      "vendor/ignore": "dist/\n",
    })
    let swapped = false
    const plan = Init.setup(
      dir.path,
      {},
      {
        beforeCommit() {
          if (swapped) return
          swapped = true
          fs.rmSync(dir.file(".gitignore"))
          fs.symlinkSync("vendor/ignore", dir.file(".gitignore"))
        },
      },
    )
    expect(swapped).toBe(true)
    expect(plan.ok).toBe(false)
    if (!plan.ok) expect(plan.error).toContain("is a symbolic link (to vendor/ignore)")
    expect(fs.readFileSync(dir.file("vendor/ignore"), "utf8")).toBe("dist/\n")
    expect(fs.existsSync(dir.file("opencode.json"))).toBe(false)
  })

  test("opencode.json linked into a dotfiles folder: edited where it leads, the link kept (under a policy too)", async () => {
    await using outside = await tmpdir({ "opencode.json": '{ "model": "a/b" }\n' })
    await using dir = await tmpdir({ ".opencode-security.json": PROJECT_POLICY })
    fs.symlinkSync(outside.file("opencode.json"), dir.file("opencode.json"))
    const plan = Init.setup(dir.path, {})
    expect(plan.ok).toBe(true)
    expect(fs.readlinkSync(dir.file("opencode.json"))).toBe(outside.file("opencode.json"))
    expect(JSON.parse(fs.readFileSync(outside.file("opencode.json"), "utf8"))).toEqual({
      model: "a/b",
      plugin: ["opencode-builtins"],
    })
  })

  test("opencode.json linked to .opencode/opencode.json (both the project's configuration): edited", async () => {
    await using dir = await tmpdir({ ".opencode-security.json": PROJECT_POLICY, ".opencode/opencode.json": "{}\n" })
    fs.symlinkSync(".opencode/opencode.json", dir.file("opencode.json"))
    expect(Init.setup(dir.path, {}).ok).toBe(true)
    expect(JSON.parse(fs.readFileSync(dir.file(".opencode/opencode.json"), "utf8"))).toEqual({
      plugin: ["opencode-builtins"],
    })
  })

  for (const [what, link, target, reason] of [
    ["the policy file", "opencode.json", ".opencode-security.json", "the implicit protection of security policy files"],
    [
      "a file a rule keeps from writes (allowed to admin only)",
      "opencode.json",
      "secrets/opencode.json",
      "rule 'secrets/**'",
    ],
    ["a folder a rule keeps from writes (the examples would land there)", ".opencode", "vendor", "rule 'vendor'"],
  ] as const)
    test(`a link to ${what}: refused naming the link, the file and the rule; nothing written`, async () => {
      await using dir = await tmpdir({
        ".opencode-security.json": PROJECT_POLICY,
        "secrets/opencode.json": "{}\n",
        "vendor/README": "vendored\n",
      })
      fs.symlinkSync(target, dir.file(link))
      const files = snapshot(dir.path)
      const plan = Init.setup(dir.path, {})
      expect(plan.ok).toBe(false)
      if (plan.ok) return
      expect(plan.error).toContain(`leads to ${dir.file(target)}`)
      expect(plan.error).toContain("through a symbolic link, a file the security policy keeps from writes")
      expect(plan.error).toContain(reason)
      expect(plan.error).toContain("Nothing was written")
      expect(snapshot(dir.path)).toEqual(files)
    })

  test("a linked configuration under an invalid policy: refused (whether it is protected cannot be told)", async () => {
    await using outside = await tmpdir({ "opencode.json": "{}\n" })
    await using dir = await tmpdir({ ".opencode-security.json": '{ "version": "1.0", "rules": 3 }' })
    fs.symlinkSync(outside.file("opencode.json"), dir.file("opencode.json"))
    const plan = Init.setup(dir.path, {})
    expect(plan.ok).toBe(false)
    if (!plan.ok) expect(plan.error).toContain("the project's security policy is not valid")
    expect(fs.readFileSync(outside.file("opencode.json"), "utf8")).toBe("{}\n")
  })

  test("opencode.json a link to nothing: refused naming it (a new file would be created where it leads)", async () => {
    await using dir = await tmpdir({})
    fs.symlinkSync("elsewhere/opencode.json", dir.file("opencode.json"))
    const plan = Init.setup(dir.path, {})
    expect(plan).toEqual({
      ok: false,
      error: `${dir.file("opencode.json")} is a symbolic link to elsewhere/opencode.json, which does not exist: remove the link or create that file, and run init again; nothing was written`,
    })
    expect(fs.existsSync(dir.file("elsewhere"))).toBe(false)
  })
})
