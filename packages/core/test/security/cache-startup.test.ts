// Red team GG4: what the user's interactive zsh sources from the cache folder at every start is held like
// `SecurityGuard.HOME_RUN`'s other entries (its `cache` group): Powerlevel10k's instant prompt
// `~/.cache/p10k-instant-prompt-<user>.zsh` (sourced at the top of every p10k user's `~/.zshrc`), its dump, the
// gitstatus daemon it runs and the frameworks' completion dumps. Since red team GI3 the whole host cache folder is
// read-only in the sandbox (commands have caches of their own: host-caches.test.ts), so a command can create none of
// them; the write tools are refused them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { ROUTES, fresh, isolateHome } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

let home: ReturnType<typeof isolateHome>
let marks: string
beforeAll(() => {
  home = isolateHome()
  marks = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-cache-startup-"))
})
afterAll(() => {
  fs.rmSync(marks, { recursive: true, force: true })
  home.restore()
}, 60_000)

/** The name zsh's `%n` gives, which p10k puts in the file's name. */
const user = spawnSync("id", ["-un"], { encoding: "utf8" }).stdout.trim()

/** Runs the host's interactive zsh with p10k wizard's first lines in `~/.zshrc`, as the user's next terminal would. */
function hostZsh() {
  fs.writeFileSync(
    path.join(home.home, ".zshrc"),
    'if [[ -r "${XDG_CACHE_HOME:-$HOME/.cache}/p10k-instant-prompt-${(%):-%n}.zsh" ]]; then\n  source "${XDG_CACHE_HOME:-$HOME/.cache}/p10k-instant-prompt-${(%):-%n}.zsh"\nfi\n',
  )
  try {
    spawnSync("zsh", ["-i", "-c", "true"], {
      env: { HOME: home.home, PATH: process.env.PATH!, XDG_CACHE_HOME: path.join(home.home, ".cache") },
      encoding: "utf8",
    })
  } finally {
    fs.rmSync(path.join(home.home, ".zshrc"), { force: true })
  }
}

describe.each([...ROUTES])("route %s", (route) => {
  test.skipIf(spawnSync("sh", ["-c", "command -v zsh"]).status !== 0)(
    "p10k's instant prompt a command writes in ~/.cache is refused (read-only), and the host's zsh runs nothing of it",
    async () => {
      const cache = path.join(home.home, ".cache")
      const prompt = path.join(cache, `p10k-instant-prompt-${user}.zsh`)
      const mark = path.join(marks, `created-${route}`)
      await using box = await fresh(route)
      // The name spelled at run time, as a command hides it from the static check: the sandbox holds it.
      const r = await box.s.bash(`echo 'touch ${mark}' > ~/.cache/p10k-instant-prompt-$(id -un).zsh; echo rc=$?`)
      expect(r.raw).toContain("Read-only file system")
      expect(fs.existsSync(prompt)).toBe(false)
      hostZsh()
      expect(fs.existsSync(mark)).toBe(false)
      for (const n of fs.readdirSync(cache)) if (n.startsWith("p10k-")) fs.rmSync(path.join(cache, n), { force: true })
    },
    120_000,
  )

  test("a present instant prompt and gitstatus are read-only, like the rest of the host's ~/.cache", async () => {
    const cache = path.join(home.home, ".cache")
    const prompt = path.join(cache, `p10k-instant-prompt-${user}.zsh`)
    const daemon = path.join(cache, "gitstatus", "gitstatusd-linux-x86_64")
    fs.mkdirSync(path.dirname(daemon), { recursive: true })
    fs.writeFileSync(prompt, "# p10k\n")
    fs.writeFileSync(daemon, "#!/bin/sh\n")
    try {
      await using box = await fresh(route)
      const r = await box.s.bash(
        `c=~/.cache; echo x >> $c/p10k-instant-prompt-$(id -un).zsh; echo a=$?; echo x > $c/git""status/${path.basename(daemon)}; echo b=$?; echo x > $c/tool-cache; echo c=$?`,
      )
      expect(r.raw).toContain("a=1")
      expect(r.raw).toContain("b=1")
      expect(r.raw).toContain("c=1")
      expect(fs.readFileSync(prompt, "utf8")).toBe("# p10k\n")
      expect(fs.readFileSync(daemon, "utf8")).toBe("#!/bin/sh\n")
      expect((await box.s.call("write", { filePath: prompt, content: "touch /tmp/x\n" })).refused).toBe(true)
      expect(fs.readFileSync(prompt, "utf8")).toBe("# p10k\n")
    } finally {
      fs.rmSync(prompt, { force: true })
      fs.rmSync(path.join(cache, "gitstatus"), { recursive: true, force: true })
      fs.rmSync(path.join(cache, "tool-cache"), { force: true })
    }
  }, 120_000)
})
