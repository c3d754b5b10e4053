// Red-team round L, root cause E: a policy file that is a symbolic link (a shared policy linked into the project) was
// held at its target only. One command replaced the link with `{"version":"1.0"}` and the layer loaded it: protected
// files readable in this session and the next. Each case runs on both routes through the real hooks.
import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityHeld } from "../../security/held"
import { ROUTES, isolateHome, open, redteamProject, type RouteName } from "./redteam-helpers"

const HEAVY = { timeout: 60_000 }
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

const SECRET = "Zx81Qp0vLk27mNb5Yt3RwE9u"
/** Where the layer records the links it holds while a command runs (the built-ins' cache of the test home). */
const heldFolder = () => path.join(home.home, ".cache", "opencode-builtins", "held-links")
/** Whether the project's record of held links is there (a command may be running, or its end was never seen). */
const armed = (dir: string) => fs.existsSync(SecurityHeld.file(heldFolder(), fs.realpathSync(dir)))
const POLICY = ".opencode-security.json"
/** Each policy file of the folder as `$f`, named at run time: the shell's static check refuses commands naming it. */
const EACH = (body: string) => `ls -A | grep '^.opencode-security.json$' | while read f; do ${body}; done`

/** A nested policy at team/ denying team/notes.txt, kept beside the shared policy and linked into the project. */
function linkNestedPolicy(box: { target: string; dir: { file: (rel: string) => string } }) {
  const nestedTarget = path.join(path.dirname(box.target), "team.json")
  fs.writeFileSync(
    nestedTarget,
    JSON.stringify({
      version: "1.0",
      rules: [{ pattern: "notes.txt", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] }],
    }),
  )
  fs.writeFileSync(box.dir.file("team/notes.txt"), "team notes Tn4Qv8Lm2Xp6\n")
  const nested = box.dir.file(`team/${POLICY}`)
  fs.symlinkSync(nestedTarget, nested)
  return { nestedTarget, nested }
}

/** The red-team project with its policy moved to a shared folder in the home and linked back into the project. */
async function linkedPolicy(route: RouteName, inProject = false) {
  const dir = await redteamProject()
  const shared = inProject ? dir.file("policies/org") : fs.mkdtempSync(path.join(home.home, "shared-"))
  fs.mkdirSync(shared, { recursive: true })
  const target = path.join(shared, "policy.json")
  fs.copyFileSync(dir.file(POLICY), target)
  const policy = fs.readFileSync(target, "utf8")
  fs.rmSync(dir.file(POLICY))
  fs.symlinkSync(inProject ? "policies/org/policy.json" : target, dir.file(POLICY))
  const s = await open(route, dir.path)
  return {
    dir,
    s,
    target,
    policy,
    link: dir.file(POLICY),
    aside: () => fs.readdirSync(dir.path).filter((f) => f.startsWith(`${POLICY}.blocked-by-security-`)),
    async [Symbol.asyncDispose]() {
      await s.close()
      fs.rmSync(shared, { recursive: true, force: true })
      await dir[Symbol.asyncDispose]()
    },
  }
}

for (const route of ROUTES) {
  describe(`route ${route}`, () => {
    test(
      "a policy file that is a link: a command replacing it with an empty policy has the link put back, the replacement moved aside",
      async () => {
        await using box = await linkedPolicy(route)
        expect((await box.s.call("read", { filePath: "secrets/api.key" })).refused).toBe(true)
        // The tester's call: the link is an ordinary entry of the project folder; its target is read-only.
        const r = await box.s.bash(EACH(`rm -f "$f"; printf '{"version":"1.0"}' > "$f"; echo swapped`))
        expect(r.refused).toBe(false)
        expect(r.raw).toContain("swapped")
        expect(r.output).toContain("replaced a protected link")
        expect(fs.lstatSync(box.link).isSymbolicLink()).toBe(true)
        expect(fs.readlinkSync(box.link)).toBe(box.target)
        expect(fs.readFileSync(box.target, "utf8")).toBe(box.policy)
        const aside = box.aside()
        expect(aside.length).toBe(1)
        expect(fs.readFileSync(box.dir.file(aside[0]!), "utf8")).toBe('{"version":"1.0"}')
        const read = await box.s.call("read", { filePath: "secrets/api.key" })
        expect(read.refused).toBe(true)
        expect(read.output + read.raw).not.toContain(SECRET)
      },
      HEAVY,
    )

    test(
      "a policy link removed, or sent elsewhere, is put back too",
      async () => {
        await using box = await linkedPolicy(route)
        const removed = await box.s.bash(`${EACH('rm -f "$f"')}; echo RAN-OK`)
        expect(removed.raw).toContain("RAN-OK")
        expect(removed.output).toContain("which the command removed; it was put back")
        expect(fs.readlinkSync(box.link)).toBe(box.target)
        expect((await box.s.call("read", { filePath: "secrets/api.key" })).refused).toBe(true)
        const elsewhere = await box.s.bash(
          `printf '{"version":"1.0"}' > weak.json; ${EACH('ln -sfn weak.json "$f"')}; echo RAN-OK`,
        )
        expect(elsewhere.raw).toContain("RAN-OK")
        expect(elsewhere.output).toContain("replaced a protected link")
        expect(fs.readlinkSync(box.link)).toBe(box.target)
        expect((await box.s.call("read", { filePath: "secrets/api.key" })).refused).toBe(true)
      },
      HEAVY,
    )

    test(
      "while a policy link is replaced (before any after hook), file access fails closed; the next call puts it back",
      async () => {
        await using box = await linkedPolicy(route)
        // As a command still running, or one whose after hook never came, would leave it.
        fs.rmSync(box.link)
        fs.writeFileSync(box.link, '{"version":"1.0"}')
        await Bun.sleep(600)
        const read = await box.s.call("read", { filePath: "secrets/api.key" })
        expect(read.refused).toBe(true)
        expect(read.output + read.raw).not.toContain(SECRET)
        expect(fs.readlinkSync(box.link)).toBe(box.target)
        expect(box.aside().length).toBe(1)
        // The policy it led to is back in force; ordinary files stay readable.
        const again = await box.s.call("read", { filePath: "secrets/api.key" })
        expect(again.refused).toBe(true)
        expect(again.reason ?? "").not.toContain("symbolic link")
        expect((await box.s.call("read", { filePath: "README.md" })).refused).toBe(false)
      },
      HEAVY,
    )

    test(
      "a nested policy file that is a link is put back when a command replaces it",
      async () => {
        await using box = await linkedPolicy(route)
        // A nested policy (a team's shared rules) linked into the project: it denies reading team/notes.txt.
        const { nestedTarget } = linkNestedPolicy(box)
        expect((await box.s.call("read", { filePath: "team/notes.txt" })).refused).toBe(true)
        const r = await box.s.bash(`cd team && ${EACH(`rm -f "$f"; printf '{"version":"1.0"}' > "$f"`)}; echo RAN-OK`)
        expect(r.raw).toContain("RAN-OK")
        expect(r.output).toContain("replaced a protected link")
        expect(fs.readlinkSync(box.dir.file(`team/${POLICY}`))).toBe(nestedTarget)
        const read = await box.s.call("read", { filePath: "team/notes.txt" })
        expect(read.refused).toBe(true)
        expect(read.output + read.raw).not.toContain("Tn4Qv8Lm2Xp6")
      },
      HEAVY,
    )

    test(
      "the folders a linked policy's target lies in cannot be renamed aside to put a weaker policy where the link leads",
      async () => {
        {
          // The shared policy kept in the project itself (a monorepo's policies folder).
          await using box = await linkedPolicy(route, true)
          expect((await box.s.call("read", { filePath: "secrets/api.key" })).refused).toBe(true)
          // Named at run time: a command naming the policy's target is refused before it runs (the target is the
          // policy under another name, `redteam-link-targets.test.ts`); here the kernel's pins are what is tested.
          const inside = await box.s.bash(
            `p=$(ls | grep ^polic); mv $p/org $p/old; mv $p old-$p; mkdir -p $p/org; printf '{"version":"1.0"}' > $p/org/policy.json; echo RAN-OK`,
          )
          expect(inside.raw).toContain("RAN-OK")
          expect(fs.readFileSync(box.target, "utf8")).toBe(box.policy)
          expect((await box.s.call("read", { filePath: "secrets/api.key" })).refused).toBe(true)
        }
        // And in a folder of the home.
        await using box = await linkedPolicy(route)
        const shared = path.dirname(box.target)
        fs.writeFileSync(box.dir.file(".d"), shared)
        const outside = await box.s.bash(
          `d=$(cat .d); mv "$d" "$d.old"; mkdir -p "$d"; printf '{"version":"1.0"}' > "$d/policy.json"; echo RAN-OK`,
        )
        expect(outside.raw).toContain("RAN-OK")
        expect(fs.readFileSync(box.target, "utf8")).toBe(box.policy)
        expect((await box.s.call("read", { filePath: "secrets/api.key" })).refused).toBe(true)
      },
      HEAVY,
    )

    test(
      "an audit log that is a link is put back when a command replaces it",
      async () => {
        await using box = await linkedPolicy(route)
        const log = box.dir.file(".opencode-security-audit.log")
        const kept = path.join(path.dirname(box.target), "audit.log")
        if (fs.existsSync(log)) fs.renameSync(log, kept)
        else fs.writeFileSync(kept, "")
        fs.symlinkSync(kept, log)
        await box.s.call("read", { filePath: "secrets/api.key" })
        const r = await box.s.bash(
          `ls -A | grep '^.opencode-security-audit.log$' | while read f; do rm -f "$f"; echo forged > "$f"; done; echo RAN-OK`,
        )
        expect(r.raw).toContain("RAN-OK")
        expect(r.output).toContain("replaced a protected link")
        expect(fs.readlinkSync(log)).toBe(kept)
        expect(fs.readFileSync(kept, "utf8")).not.toContain("forged")
      },
      HEAVY,
    )

    test(
      "a policy link replaced by a command whose end no layer saw (OpenCode killed mid-command): the next session puts it back before loading the policy",
      async () => {
        await using box = await linkedPolicy(route)
        // The command is prepared (the links it could change are recorded), then OpenCode dies before its end.
        const started = await box.s.bash(`${EACH('rm -f "$f"; printf \'{"version":"1.0"}\' > "$f"')}; sleep 300`, {
          noExecute: true,
        })
        expect(started.refused).toBe(false)
        fs.rmSync(box.link)
        fs.writeFileSync(box.link, '{"version":"1.0"}')
        const next = await open(route, box.dir.path)
        try {
          expect(fs.lstatSync(box.link).isSymbolicLink()).toBe(true)
          expect(fs.readlinkSync(box.link)).toBe(box.target)
          const aside = box.aside()
          expect(aside.length).toBe(1)
          expect(fs.readFileSync(box.dir.file(aside[0]!), "utf8")).toBe('{"version":"1.0"}')
          // Said to the user with the first result.
          const first = await next.call("read", { filePath: "README.md" })
          expect(first.output).toContain("ended before that command did")
          expect(first.output).toContain(aside[0]!)
          const read = await next.call("read", { filePath: "secrets/api.key" })
          expect(read.refused).toBe(true)
          expect(read.output + read.raw).not.toContain(SECRET)
          const logged = fs.readFileSync(box.dir.file(".opencode-security-audit.log"), "utf8")
          expect(logged).toContain("put back at start")
          // Recorded before the command; the killed session's entry goes once its process is gone.
          expect(armed(box.dir.path)).toBe(true)
        } finally {
          await next.close()
        }
      },
      HEAVY,
    )

    test(
      "a nested policy link and the audit log link replaced while OpenCode was killed mid-command are put back at the next start too",
      async () => {
        await using box = await linkedPolicy(route)
        const { nestedTarget, nested } = linkNestedPolicy(box)
        const log = box.dir.file(".opencode-security-audit.log")
        const kept = path.join(path.dirname(box.target), "audit.log")
        if (fs.existsSync(log)) fs.renameSync(log, kept)
        else fs.writeFileSync(kept, "")
        fs.symlinkSync(kept, log)
        expect((await box.s.call("read", { filePath: "team/notes.txt" })).refused).toBe(true)
        await box.s.bash("sleep 300", { noExecute: true })
        fs.rmSync(nested)
        fs.writeFileSync(nested, '{"version":"1.0"}')
        fs.rmSync(log)
        fs.writeFileSync(log, "forged\n")
        const next = await open(route, box.dir.path)
        try {
          expect(fs.readlinkSync(nested)).toBe(nestedTarget)
          expect(fs.readlinkSync(log)).toBe(kept)
          expect(fs.readFileSync(kept, "utf8")).not.toContain("forged")
          const read = await next.call("read", { filePath: "team/notes.txt" })
          expect(read.refused).toBe(true)
          expect(read.output + read.raw).not.toContain("Tn4Qv8Lm2Xp6")
        } finally {
          await next.close()
        }
      },
      HEAVY,
    )

    test(
      "a policy link sent elsewhere while such a command ran is not repaired (the user may have re-pointed it): file access is refused until the link is back or the user deletes the record",
      async () => {
        await using box = await linkedPolicy(route)
        await box.s.bash("sleep 300", { noExecute: true })
        fs.writeFileSync(box.dir.file("weak.json"), '{"version":"1.0"}')
        fs.rmSync(box.link)
        fs.symlinkSync("weak.json", box.link)
        {
          const next = await open(route, box.dir.path)
          try {
            expect(fs.readlinkSync(box.link)).toBe("weak.json")
            const read = await next.call("read", { filePath: "secrets/api.key" })
            expect(read.refused).toBe(true)
            expect(read.output + read.raw).not.toContain(SECRET)
            expect(read.reason).toContain(`ln -sfn '${box.target}'`)
            expect(read.reason).toContain(heldFolder())
            expect((await next.call("read", { filePath: "README.md" })).refused).toBe(true)
            // The link put back (by the user): the policy it leads to is in force again.
            fs.rmSync(box.link)
            fs.symlinkSync(box.target, box.link)
            await Bun.sleep(600)
            const again = await next.call("read", { filePath: "secrets/api.key" })
            expect(again.refused).toBe(true)
            expect(again.reason ?? "").not.toContain("earlier OpenCode session")
            expect((await next.call("read", { filePath: "README.md" })).refused).toBe(false)
          } finally {
            await next.close()
          }
        }
        // Re-pointed again while a command ran; this time the user confirms it by deleting the record.
        await box.s.bash("sleep 300", { noExecute: true })
        fs.rmSync(box.link)
        fs.symlinkSync("weak.json", box.link)
        const refused = await open(route, box.dir.path)
        try {
          expect((await refused.call("read", { filePath: "README.md" })).refused).toBe(true)
        } finally {
          await refused.close()
        }
        fs.rmSync(SecurityHeld.file(heldFolder(), fs.realpathSync(box.dir.path)))
        const mine = await open(route, box.dir.path)
        try {
          expect(fs.readlinkSync(box.link)).toBe("weak.json")
          expect((await mine.call("read", { filePath: "secrets/api.key" })).refused).toBe(false)
        } finally {
          await mine.close()
        }
      },
      HEAVY,
    )

    test(
      "after a session that saw its commands end, the user's own change to the link between sessions is kept",
      async () => {
        await using box = await linkedPolicy(route)
        const r = await box.s.bash("echo RAN-OK")
        expect(r.raw).toContain("RAN-OK")
        expect(armed(box.dir.path)).toBe(false)
        // The user inlines a policy of their own (here one that allows everything).
        fs.rmSync(box.link)
        fs.writeFileSync(box.link, '{"version":"1.0"}')
        const next = await open(route, box.dir.path)
        try {
          expect(fs.lstatSync(box.link).isFile()).toBe(true)
          expect(box.aside().length).toBe(0)
          expect((await next.call("read", { filePath: "secrets/api.key" })).refused).toBe(false)
        } finally {
          await next.close()
        }
      },
      HEAVY,
    )

    test(
      "the record of held links cannot be written or planted by a command",
      async () => {
        await using box = await linkedPolicy(route)
        const folder = heldFolder()
        fs.writeFileSync(box.dir.file(".d"), folder)
        const r = await box.s.bash(
          `d=$(cat .d); echo '{"version":1}' > "$d/planted.json"; rm -rf "$d"; mv "$d" "$d.old"; ls "$d" | wc -l; echo RAN-OK`,
        )
        expect(r.raw).toContain("RAN-OK")
        expect(fs.existsSync(path.join(folder, "planted.json"))).toBe(false)
        expect(fs.lstatSync(folder).isDirectory()).toBe(true)
        expect(fs.existsSync(`${folder}.old`)).toBe(false)
      },
      HEAVY,
    )
  })
}
