// The contained search and the file tools against a file ripgrep decodes as UTF-16 while its text is UTF-8, and against
// a home folder reached through a symbolic link (red team AF).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { ROUTES, isolateHome, open, redteamProject } from "./redteam-helpers"
import { APP } from "./fixture"

setDefaultTimeout(120_000)
const home = isolateHome()
afterAll(() => home.restore(), 60_000)

for (const route of ROUTES) {
  describe(`route ${route}: AF1 a file ripgrep decodes as UTF-16 (FF FE first) while the layer numbers its UTF-8 lines`, () => {
    test("grep does not show a read-protected segment of a file that starts with the bytes FF FE", async () => {
      await using dir = await redteamProject({})
      // The user's file: two bytes FF FE, then ordinary UTF-8 text with a read-protected segment on lines 4-6.
      fs.writeFileSync(path.join(dir.path, "src/bom.ts"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(APP)]))
      const s = await open(route, dir.path)
      try {
        const r = await s.call("read", { filePath: path.join(dir.path, "src/bom.ts") })
        const g = await s.call("grep", { pattern: ".", path: "src/bom.ts" })
        // What ripgrep shows is the UTF-8 bytes read as UTF-16LE: decode it back to see what the model got.
        const back =
          Buffer.from(g.output, "utf16le").toString("utf8") + Buffer.from(g.output.slice(1), "utf16le").toString("utf8")
        expect(r.output).not.toContain("confidential pricing")
        expect(back).not.toContain("confidential pricing")
      } finally {
        await s.close()
      }
    })

    test("grep does not show a read-protected segment of a file that starts with the bytes FE FF (UTF-16BE mark)", async () => {
      await using dir = await redteamProject({})
      fs.writeFileSync(path.join(dir.path, "src/bom.ts"), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(APP)]))
      const s = await open(route, dir.path)
      try {
        const g = await s.call("grep", { pattern: ".", path: "src/bom.ts" })
        // UTF-16BE: swap each pair of bytes back.
        const be = (t: string) => {
          const b = Buffer.from(t, "utf16le")
          b.swap16()
          return b.toString("utf8")
        }
        const back = [g.output, g.output.slice(1)].map((t) => be(t.length % 2 ? t.slice(0, -1) : t)).join("\n")
        expect(g.output.length).toBeGreaterThan(0)
        expect(back).not.toContain("confidential pricing")
      } finally {
        await s.close()
      }
    })

    test("(held) a genuine UTF-16LE file with a byte-order mark and a segment: no line of it is shown", async () => {
      await using dir = await redteamProject({})
      fs.writeFileSync(
        path.join(dir.path, "src/wide.ts"),
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(APP, "utf16le")]),
      )
      const s = await open(route, dir.path)
      try {
        const g = await s.call("grep", { pattern: "pricing|visible", path: "src" })
        expect(g.output).not.toContain("confidential pricing")
        expect(g.output).not.toContain("wide.ts")
      } finally {
        await s.close()
      }
    })
  })
}

// AF2: a home folder spelled through a link (Fedora Silverblue/Kinoite/CoreOS: /home -> var/home, HOME=/home/<user>).
// The host paths the layer hides (`SecurityGuard.hostHidden`: OpenCode's auth.json, its database, snapshots, logs) are
// placed by the link spelling only; the same files by their real path are read, searched and listed.
for (const route of ROUTES) {
  describe(`route ${route}: AF2 HOME spelled through a link`, () => {
    test("grep, glob and read by the real path do not show OpenCode's auth.json", async () => {
      const link = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-linked-home-")) + "/home"
      fs.symlinkSync(home.home, link)
      const data = path.join(home.home, ".local/share/opencode")
      fs.mkdirSync(data, { recursive: true })
      fs.writeFileSync(path.join(data, "auth.json"), '{"anthropic":{"type":"api","key":"AUTHSECRET123"}}\n')
      const saved = { HOME: process.env.HOME, XDG_DATA_HOME: process.env.XDG_DATA_HOME }
      process.env.HOME = link
      process.env.XDG_DATA_HOME = path.join(link, ".local/share")
      try {
        await using dir = await redteamProject({})
        const s = await open(route, dir.path)
        try {
          // Control: by the link spelling (as HOME names it) the read is refused.
          const ctl = await s.call("read", { filePath: path.join(link, ".local/share/opencode/auth.json") })
          expect(ctl.refused).toBe(true)
          const seen: string[] = []
          const read = await s.call("read", { filePath: path.join(data, "auth.json") })
          if (read.output.includes("AUTHSECRET123")) seen.push("read <real home>/.local/share/opencode/auth.json")
          for (const p of [home.home, link]) {
            const g = await s.call("grep", { pattern: "AUTHSECRET", path: p })
            if (g.output.includes("AUTHSECRET123"))
              seen.push(`grep AUTHSECRET in ${p === link ? "<HOME>" : "<real home>"}`)
            const names = await s.call("glob", { pattern: "**/auth.json", path: p })
            if (names.output.includes("opencode/auth.json"))
              seen.push(`glob **/auth.json in ${p === link ? "<HOME>" : "<real home>"}`)
          }
          expect(seen).toEqual([])
        } finally {
          await s.close()
        }
      } finally {
        Object.assign(process.env, saved)
        fs.rmSync(path.dirname(link), { recursive: true, force: true })
      }
    })
  })
}
