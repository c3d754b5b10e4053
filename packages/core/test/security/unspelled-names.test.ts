// Names that are not valid UTF-8 made by a call that writes outside the sandbox (another plugin's tool): renamed once,
// with one note; and one that can be neither renamed nor removed (an immutable folder) is named once and never makes
// the after hook loop. Both routes: the plugin hooks and the fork's composition.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { composed, ROUTES, text } from "./composed"
import { project } from "./fixture"
import { isolateHome } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

/** `dir/folder/x\xff` made with the exact bytes (a JavaScript string cannot spell the name). */
function makeUnspelled(dir: string, folder: string) {
  fs.mkdirSync(path.join(dir, folder), { recursive: true })
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(dir, folder) + "/x"), Buffer.from([0xff])]), "made\n")
}

const notes = (output: string) => output.split("\n").filter((l) => l.startsWith("[security] The command made"))

describe.each(ROUTES)("route %s: a name that is not UTF-8 made by a writer outside the sandbox", (route) => {
  test("is renamed to its spelling, with one note and no claim that anything was removed", async () => {
    await using dir = await project({})
    const c = await composed(route, dir.path, {}, "ses_unspelled")
    try {
      const r = await c.hooked("codemod_run", { recipe: "x" }, async () => (makeUnspelled(dir.path, "made"), "done"))
      expect(notes(text(r))).toEqual([expect.stringContaining("it was renamed to made/x%FF")])
      expect(text(r)).not.toContain("removed")
      expect(fs.readFileSync(dir.file("made/x%FF"), "utf8")).toBe("made\n")
    } finally {
      await c.seams.dispose()
    }
  }, 60_000)

  test("one that can be neither renamed nor removed (an immutable folder) is named once; the call returns", async () => {
    await using dir = await project({})
    const frozen = dir.file("frozen")
    const c = await composed(route, dir.path, {}, "ses_unspelled")
    try {
      const r = await c.hooked("codemod_run", { recipe: "x" }, async () => {
        makeUnspelled(dir.path, "frozen")
        // An immutable folder: no entry of it can be renamed or removed, even by root (ext4, CAP_LINUX_IMMUTABLE).
        const set = spawnSync("chattr", ["+i", frozen], { encoding: "utf8" })
        expect(set.status).toBe(0)
        return "done"
      })
      expect(notes(text(r))).toEqual([expect.stringContaining("it could be neither renamed")])
    } finally {
      spawnSync("chattr", ["-i", frozen])
      await c.seams.dispose()
    }
  }, 60_000)
})
