import { describe, expect, test } from "bun:test"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const EXAMPLE = path.join(Harness.ROOT, "examples/resources")
// Distinctive lines of the example resources' bodies.
const GIT_OPS = "git reflog"
const PRE_COMMIT = "The commit message says why"
const SHIP = "Tag `vX.Y.Z`, push the tag"
const TIMEOUT = { timeout: 240_000 }

for (const target of targets()) {
  describe(`resource loader on stock opencode ${target.label}`, () => {
    test(
      "query → load with references → release: the next requests no longer carry the released content",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("resource-query", { query: "git" }),
          ModelServer.call("resource-load", { id: "git-operations", includeReferences: true }),
          ModelServer.call("resource-list-loaded", {}),
          ModelServer.call("resource-release", { ids: ["git-operations", "pre-commit"] }),
          ModelServer.call("resource-list-loaded", {}),
          ModelServer.text("done"),
        ])
        await using project = await Harness.project({ bin: target.bin, files: await Harness.filesOf(EXAMPLE) })
        try {
          const result = await Harness.run(project, server, "Use the project's git resources")
          expect(result.exitCode).toBe(0)
          expect(result.tools.map((t) => [t.tool, t.status])).toEqual([
            ["resource-query", "completed"],
            ["resource-load", "completed"],
            ["resource-list-loaded", "completed"],
            ["resource-release", "completed"],
            ["resource-list-loaded", "completed"],
          ])
          const [query, load, listBefore, release, listAfter] = result.tools
          expect(JSON.parse(query.output).results.map((r: any) => r.id)).toEqual([
            "git-operations",
            "pre-commit",
            "ship-release",
          ])
          expect(load.output).toContain(
            "loaded=git-operations,pre-commit,ship-release,release-notes,deployment-runbook",
          )
          expect(JSON.parse(listBefore.output).loaded.map((l: any) => l.status)).toEqual(Array(5).fill("active"))
          expect(JSON.parse(release.output).released).toEqual(["git-operations", "pre-commit"])
          const after = Object.fromEntries(JSON.parse(listAfter.output).loaded.map((l: any) => [l.id, l.status]))
          expect(after).toEqual({
            "git-operations": "released",
            "pre-commit": "released",
            "ship-release": "active",
            "release-notes": "active",
            "deployment-runbook": "active",
          })

          const turns = server.turns()
          expect(turns).toHaveLength(6)
          expect(server.overruns).toBe(0)
          // turns[2] is the first request after the load, turns[4] the first after the release.
          for (const turn of turns.slice(2, 4)) {
            expect(turn.raw).toContain(GIT_OPS)
            expect(turn.raw).toContain(PRE_COMMIT)
          }
          for (const turn of turns.slice(4)) {
            expect(turn.raw).not.toContain(GIT_OPS)
            expect(turn.raw).not.toContain(PRE_COMMIT)
            expect(turn.raw).toContain(SHIP)
            expect(turn.raw).toContain("'git-operations' released")
          }
          // Until the release, every request re-sends the earlier messages unchanged (warm prompt caches).
          const prefix = (r: ModelServer.RecordedRequest, n: number) => JSON.stringify(r.body.messages.slice(0, n))
          const n = turns[2].body.messages.length
          expect(prefix(turns[3], n)).toBe(prefix(turns[2], n))
          expect(prefix(turns[4], n)).not.toBe(prefix(turns[2], n))
          const m = turns[4].body.messages.length
          expect(prefix(turns[5], m)).toBe(prefix(turns[4], m))
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )

    test(
      "across separate runs of one session: loaded, still sent while flagged, pruned after the next turn",
      async () => {
        const server = ModelServer.start([
          ModelServer.call("resource-load", { id: "pre-commit" }),
          ModelServer.text("loaded it"),
        ])
        await using project = await Harness.project({ bin: target.bin, files: await Harness.filesOf(EXAMPLE) })
        try {
          const first = await Harness.run(project, server, "Load the pre-commit checklist")
          expect(first.exitCode).toBe(0)
          expect(first.tools[0].output).toContain(PRE_COMMIT)

          server.push(ModelServer.call("resource-list-loaded", {}), ModelServer.text("second answer"))
          const second = await Harness.run(project, server, "Anything else?", { args: ["--continue"] })
          expect(second.exitCode).toBe(0)
          expect(JSON.parse(second.tools[0].output).loaded[0]).toMatchObject({ id: "pre-commit", status: "flagged" })
          const secondTurns = server.turns().slice(2)
          expect(secondTurns[0].raw).toContain(PRE_COMMIT)

          server.push(ModelServer.call("resource-list-loaded", {}), ModelServer.text("third answer"))
          const third = await Harness.run(project, server, "And now?", { args: ["--continue"] })
          expect(third.exitCode).toBe(0)
          expect(JSON.parse(third.tools[0].output).loaded[0]).toMatchObject({ id: "pre-commit", status: "pruned" })
          for (const turn of server.turns().slice(4)) {
            expect(turn.raw).not.toContain(PRE_COMMIT)
            expect(turn.raw).toContain("'pre-commit' pruned")
          }
          expect(server.overruns).toBe(0)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}
