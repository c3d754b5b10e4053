import { describe, expect, test } from "bun:test"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"
import { Serve } from "./serve"

const TODOS = [
  { content: "Write the parser", status: "in_progress", priority: "high" },
  { content: "Document the format", status: "pending", priority: "medium" },
]
/** A stop the user-text rule does not read as one (asserted in `continuation/hooks.test.ts`). */
const UNSEEN_STOP = "ugh this is going nowhere, I'll sort it out myself later"

const lastUserText = (r: ModelServer.RecordedRequest) => ModelServer.userTexts(r).at(-1) ?? ""

/**
 * A session whose first turn ends asking the user (no continuation), then the user's second message and the model's
 * text-only answer `reply`. Returns the user texts of the requests that followed the second message.
 */
async function afterSecondMessage(bin: string, reply: string): Promise<string[]> {
  const scripted = ModelServer.start([
    ModelServer.call("todowrite", { todos: TODOS }),
    ModelServer.text("Parser started. Should I also document the format?"),
    ModelServer.text(reply),
    ...Array.from({ length: 4 }, (_, i) => ModelServer.text(`Reply ${i}.`)),
  ])
  await using project = await Harness.project({ bin })
  await using serve = await Serve.start(project, scripted)
  try {
    const id = await serve.createSession()
    await serve.promptAsync(id, "Build the parser and document the format")
    await serve.waitFor(async () => scripted.turns().length >= 2 && (await serve.busy(id)) === false, 120_000)
    const before = scripted.turns().length
    expect(before).toBe(2)
    await serve.promptAsync(id, UNSEEN_STOP)
    await serve.waitFor(async () => scripted.turns().length > before, 60_000)
    await serve.waitFor(async () => (await serve.busy(id)) === false, 90_000)
    return scripted.turns().slice(before).map(lastUserText)
  } finally {
    scripted.stop()
  }
}

for (const target of targets()) {
  describe(`todo continuation: the model's acknowledgement of a stop, on stock opencode ${target.label}`, () => {
    test(
      "a stop in words the rule does not know, answered without work by 'I'll leave it there': no continuation",
      async () => {
        const after = await afterSecondMessage(target.bin, "Understood, I'll leave it there. Two todos are still open.")
        expect(after).toEqual([UNSEEN_STOP])
      },
      { timeout: 200_000 },
    )
    test(
      "control: the same message answered by a reply that does not say it stops is continued",
      async () => {
        const after = await afterSecondMessage(target.bin, "The parser handles the header now.")
        expect(after[0]).toBe(UNSEEN_STOP)
        expect(after[1]).toContain("[todo continuation 1/3]")
      },
      { timeout: 200_000 },
    )
  })
}
