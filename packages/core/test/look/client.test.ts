import { describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { LookClient } from "../../look/client"
import { LocalSeal } from "../../learning/seal"
import { LookOrphans } from "../../look/orphans"
import { tmpdir } from "../fixture"
import { spawnSync } from "../spawn-sync"

/**
 * An SDK client keeping sessions in memory, the shape LookClient uses (OpenCode's own client answers the same
 * routes; the end-to-end test `look.test.ts` runs the real one).
 */
function sdk(options: { onPrompt?: () => Promise<void> | void; deleteFails?: boolean } = {}) {
  const sessions = new Map<string, { parentID?: string; title?: string }>()
  let n = 0
  const client = {
    config: { providers: async () => ({ data: { providers: [] } }) },
    session: {
      async get(o: any) {
        const s = sessions.get(o.path.id)
        if (!s) return { error: { name: "NotFoundError" }, response: { status: 404 } }
        return { data: { id: o.path.id, ...s } }
      },
      async create(o: any) {
        const id = o.body.id ?? `ses_child${++n}`
        sessions.set(id, { parentID: o.body.parentID, title: o.body.title })
        return { data: { id } }
      },
      async prompt() {
        await options.onPrompt?.()
        return { data: { info: {}, parts: [{ type: "text", text: "a chart" }] } }
      },
      async abort() {},
      async delete(o: any) {
        if (options.deleteFails) return { error: { name: "UnknownError" }, response: { status: 500 } }
        if (!sessions.delete(o.path.id)) return { error: { name: "NotFoundError" }, response: { status: 404 } }
        return { data: true }
      },
    },
  }
  return { client, sessions }
}

/** The id of a process that has ended. */
function deadPid(): number {
  return Number(spawnSync("sh", ["-c", "echo $$"]).stdout.toString().trim())
}

const call = { sessionID: "ses_parent", model: { providerID: "p", modelID: "m" }, title: "look_at a.png", parts: [] }

describe("look_at child sessions left behind by a killed OpenCode (red team CE-5)", () => {
  test("a child session is recorded while its call runs and forgotten once deleted", async () => {
    await using dir = await tmpdir({})
    const folder = LookOrphans.folder(dir.path)
    let during: string[] = []
    const { client, sessions } = sdk({ onPrompt: () => void (during = fs.readdirSync(folder)) })
    const host = LookClient.fromSdk(client, { directory: dir.path })
    expect(await host.child!(call as any)).toBe("a chart")
    expect(during).toEqual(["ses_child1.json"])
    expect(fs.readdirSync(folder)).toEqual([])
    expect(sessions.size).toBe(0)
  })

  test("the next start deletes the recorded child sessions of a process that is gone, and only those", async () => {
    await using dir = await tmpdir({})
    const { client, sessions } = sdk()
    // What a killed OpenCode left: its child session (holding the image) and its record.
    await client.session.create({ body: { parentID: "ses_parent", title: "look_at a.png" } })
    await client.session.create({ body: { parentID: "ses_parent", title: "look_at b.pdf" } })
    LookOrphans.record(dir.path, "ses_child1", "ses_parent")
    LookOrphans.record(dir.path, "ses_child2", "ses_parent")
    const file = (id: string) => path.join(LookOrphans.folder(dir.path), `${id}.json`)
    // Records as look_at seals them (LocalSeal), with another owner.
    const rewrite = (id: string, pid: number) => {
      const { seal: _, ...entry } = JSON.parse(fs.readFileSync(file(id), "utf8"))
      fs.writeFileSync(file(id), LocalSeal.seal(file(id), "look-at", JSON.stringify({ ...entry, pid })))
    }
    rewrite("ses_child1", deadPid())
    // ses_child2 belongs to a process still running (another OpenCode in the project, mid-call): kept.
    const other = Bun.spawn(["sleep", "30"])
    rewrite("ses_child2", other.pid)
    // A record whose session is already gone (deleted by hand) is forgotten too.
    LookOrphans.record(dir.path, "ses_gone", "ses_parent")
    rewrite("ses_gone", deadPid())
    try {
      const host = LookClient.fromSdk(client, { directory: dir.path })
      expect(await host.childOrphans!()).toBe(2)
      expect([...sessions.keys()]).toEqual(["ses_child2"])
      expect(fs.readdirSync(LookOrphans.folder(dir.path))).toEqual(["ses_child2.json"])
      // A deletion that fails keeps the record for a later start.
      const failing = sdk({ deleteFails: true })
      await failing.client.session.create({
        body: { id: "ses_child3", parentID: "ses_parent", title: "look_at c.png" },
      })
      LookOrphans.record(dir.path, "ses_child3", "ses_parent")
      rewrite("ses_child3", deadPid())
      expect(await LookClient.fromSdk(failing.client, { directory: dir.path }).childOrphans!()).toBe(0)
      expect(fs.existsSync(file("ses_child3"))).toBe(true)
    } finally {
      other.kill()
    }
  })

  // Red team DD, finding DD-O1: the sweep deleted whatever session a record named. With no policy the records' folder
  // is an ordinary project folder (the agent's write tool can write one); a record naming the user's own top-level
  // session had the next start delete it, and every child session below it.
  test("DD-O1 a record naming a session that is not look_at's child of the recorded parent is dropped, nothing deleted", async () => {
    await using dir = await tmpdir({})
    const { client, sessions } = sdk()
    await client.session.create({ body: { id: "ses_usermain", title: "my long conversation" } })
    // A child of the recorded parent that look_at did not make (a subagent's), and one of another parent.
    await client.session.create({ body: { id: "ses_task", parentID: "ses_parent", title: "explore the code" } })
    await client.session.create({ body: { id: "ses_elsewhere", parentID: "ses_other", title: "look_at a.png" } })
    await client.session.create({ body: { id: "ses_mine", parentID: "ses_parent", title: "look_at a.png" } })
    const folder = LookOrphans.folder(dir.path)
    fs.mkdirSync(folder, { recursive: true })
    // Records in look_at's format naming other sessions. What the agent writes with its write tool is skipped, never
    // acted on (no seal: test/learning/seal-stores.test.ts); these are sealed, as if genuine, to test the check that
    // stands behind the seal.
    for (const [id, parentID] of [
      ["ses_usermain", "ses_whatever"],
      ["ses_task", "ses_parent"],
      ["ses_elsewhere", "ses_parent"],
      ["ses_mine", "ses_parent"],
    ])
      fs.writeFileSync(
        path.join(folder, `${id}.json`),
        LocalSeal.seal(
          path.join(folder, `${id}.json`),
          "look-at",
          JSON.stringify({ id, parentID, pid: deadPid(), host: os.hostname(), at: 0 }),
        ),
      )
    expect(await LookClient.fromSdk(client, { directory: dir.path }).childOrphans!()).toBe(1)
    expect([...sessions.keys()].sort()).toEqual(["ses_elsewhere", "ses_task", "ses_usermain"])
    expect(fs.readdirSync(folder)).toEqual([])
  })
})
