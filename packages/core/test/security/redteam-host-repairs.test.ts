// Red-team round 5 (Q3, Q4): the layer's own host-side repairs. A template put back (the agent's version renamed
// aside, the previous text written at the same path) ran in the hooks of tools that do not wait for commands
// (`webfetch`, `todowrite`, …), while a sandboxed command ran: the command put a link to the policy file at the path
// between the rename and the write, and the layer (outside the sandbox) overwrote the policy. Repairs now run only while
// no sandboxed command starts or runs, and re-create a path by renaming a fresh file over it (never writing through a
// link). And the record of held links, written with that primitive, made the next start replace a user's file with a
// link the agent chose: recovery now acts only on links the configuration holds. Each case runs on both routes.
import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityHeld } from "../../security/held"
import { ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"

const HEAVY = { timeout: 60_000 }
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const SECRET = "Zx81Qp0vLk27mNb5Yt3RwE9u"
const TEMPLATE = ".opencode/command/x.md"
const PLAIN = "run the tests\n"
const heldFolder = () => path.join(home.home, ".cache", "opencode-builtins", "held-links")

async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 400; i++) {
    if (check()) return
    await Bun.sleep(25)
  }
  throw new Error(`timed out waiting for ${what}`)
}

for (const route of ROUTES) {
  describe(`route ${route}`, () => {
    test(
      "a template that gains a shell command during a running command is put back only once no command runs, not from the hooks of a call beside it",
      async () => {
        await using dir = await redteamProject()
        const s = await open(route, dir.path)
        let running: Promise<unknown> | undefined
        try {
          const file = dir.file(TEMPLATE)
          const policy = fs.readFileSync(dir.file(".opencode-security.json"), "utf8")
          expect((await s.call("write", { filePath: TEMPLATE, content: PLAIN })).refused).toBe(false)
          // The command adds a `!`id`` to the template, says so, and waits for the test's signal.
          running = s.bash(
            `printf 'run the tests\\n\\041\\140id\\140\\n' > ${TEMPLATE}; echo > .changed; while [ ! -e .go ]; do sleep 0.05; done; echo RAN-OK`,
            { concurrent: true },
          )
          await until(() => fs.existsSync(dir.file(".changed")), "the command's change")
          // A call that touches no file, beside the command: its hooks leave the template alone while it runs (the
          // put-back renamed it aside there, and a link the command put at the path then received the write).
          const beside = await s.call("webfetch", { url: "https://example.com/", format: "text" })
          expect(beside.refused).toBe(false)
          expect(fs.readFileSync(file, "utf8")).toContain("!`id`")
          expect(fs.readdirSync(path.dirname(file)).filter((f) => f.includes("blocked-by-security"))).toEqual([])
          fs.writeFileSync(dir.file(".go"), "")
          const done = (await running) as Awaited<ReturnType<typeof s.bash>>
          expect(done.raw).toContain("RAN-OK")
          // Once no command runs, it is put back, and said.
          const next = await s.call("read", { filePath: "README.md" })
          expect(done.output + next.output).toContain("gained a shell command")
          expect(fs.lstatSync(file).isFile()).toBe(true)
          expect(fs.readFileSync(file, "utf8")).toBe(PLAIN)
          expect(fs.readFileSync(dir.file(".opencode-security.json"), "utf8")).toBe(policy)
          expect((await s.call("read", { filePath: "secrets/api.key" })).refused).toBe(true)
        } finally {
          // The command ends whatever failed, so the next case's commands are not queued behind it.
          fs.writeFileSync(dir.file(".go"), "")
          await running
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "a slow write beside a command that moves a nested policy's folder and links the root in its place: the root policy is not replaced (S5-3)",
      async () => {
        const nested = JSON.stringify({
          version: "1.0",
          rules: [{ pattern: "notes-private/**", type: "directory", deniedOperations: ["read"], allowedRoles: [] }],
        })
        await using dir = await redteamProject({ "sub/.opencode-security.json": nested, "notes/a.txt": "a\n" })
        const s = await open(route, dir.path)
        const hooks = s.hooks as any
        let running: Promise<unknown> | undefined
        try {
          const rootPolicy = fs.readFileSync(dir.file(".opencode-security.json"), "utf8")
          // A write whose tool takes a while (the user approving a permission prompt): its before hook, then a
          // command of the same step, admitted while the write is still in progress.
          const input = { tool: "write", sessionID: "ses_redteam", callID: "slow-write-s53" }
          const payload = { args: { filePath: dir.file("notes/a.txt"), content: "hello\n" } }
          await hooks["tool.execute.before"](input, payload)
          // Since red team AH the folder above a policy file is pinned, so the move itself fails ("Device or resource
          // busy"); the command goes on either way, and the outcome is checked all the same.
          running = s.bash(
            'd=$(printf su; printf b); { mv "$d" "$d"2 && ln -s . "$d"; } 2>/dev/null; touch .swapped; while [ ! -e .go ]; do sleep 0.05; done; echo RAN-OK',
            { concurrent: true },
          )
          await until(() => fs.existsSync(dir.file(".swapped")), "the command's swap")
          fs.writeFileSync(dir.file("notes/a.txt"), "hello\n")
          const out = { title: "", output: "Wrote file successfully.", metadata: {} }
          await hooks["tool.execute.after"]({ ...input, args: payload.args }, out)
          fs.writeFileSync(dir.file(".go"), "")
          await running
          running = undefined
          expect(fs.readFileSync(dir.file(".opencode-security.json"), "utf8")).toBe(rootPolicy)
          const read = await s.call("read", { filePath: "secrets/api.key" })
          expect(read.refused).toBe(true)
          expect(read.output + read.raw).not.toContain(SECRET)
        } finally {
          fs.writeFileSync(dir.file(".go"), "")
          if (running) await running
          await s.close()
        }
      },
      HEAVY,
    )

    test(
      "a record of held links planted in the state folder: the next start acts only on links the configuration holds, with the targets it expects",
      async () => {
        await using dir = await redteamProject()
        const root = fs.realpathSync(dir.path)
        const policy = fs.readFileSync(dir.file(".opencode-security.json"), "utf8")
        const keys = path.join(home.home, ".ssh", "authorized_keys")
        fs.mkdirSync(path.dirname(keys), { recursive: true })
        fs.writeFileSync(keys, "ssh-ed25519 AAAA user@laptop\n")
        fs.writeFileSync(dir.file("keys.txt"), "ssh-ed25519 ATTACKER attacker@evil\n")
        fs.writeFileSync(dir.file("weak.json"), '{"version":"1.0"}')
        fs.mkdirSync(dir.file("evil"))
        fs.writeFileSync(dir.file("evil/p.ts"), "export default async () => ({})\n")
        const plugin = path.join(home.home, ".config", "opencode", "plugin")
        fs.rmSync(plugin, { recursive: true, force: true })
        // As Q3's primitive wrote it: any path, any target, the record written after the files it names.
        const record = SecurityHeld.file(SecurityHeld.folder(heldFolder()), root)
        const links = {
          [keys]: dir.file("keys.txt"),
          [dir.file(".opencode-security.json")]: dir.file("weak.json"),
          [plugin]: dir.file("evil"),
        }
        fs.writeFileSync(
          record,
          JSON.stringify({ version: 1, root, sessions: { x: { pid: 1, at: 0, links } }, disputed: {} }),
        )
        const later = new Date(Date.now() + 60_000)
        fs.utimesSync(record, later, later)
        const s = await open(route, dir.path)
        try {
          expect(fs.lstatSync(keys).isFile()).toBe(true)
          expect(fs.readFileSync(keys, "utf8")).toBe("ssh-ed25519 AAAA user@laptop\n")
          expect(fs.readdirSync(path.dirname(keys))).toEqual(["authorized_keys"])
          expect(fs.lstatSync(dir.file(".opencode-security.json")).isFile()).toBe(true)
          expect(fs.readFileSync(dir.file(".opencode-security.json"), "utf8")).toBe(policy)
          expect(fs.existsSync(plugin)).toBe(false)
          // Said with the first result; the protected files stay protected.
          const first = await s.call("read", { filePath: "README.md" })
          expect(first.refused).toBe(false)
          expect(first.output).toContain("not acted on")
          const read = await s.call("read", { filePath: "secrets/api.key" })
          expect(read.refused).toBe(true)
          expect(read.output + read.raw).not.toContain(SECRET)
          expect(fs.readFileSync(record, "utf8")).not.toContain("authorized_keys")
        } finally {
          await s.close()
          fs.rmSync(path.dirname(keys), { recursive: true, force: true })
        }
      },
      HEAVY,
    )
  })
}
