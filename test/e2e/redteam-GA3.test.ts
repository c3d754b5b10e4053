/**
 * Red team GA3 on stock OpenCode: knowledge injection of a knowledge-base article holding a segment denied for `read`
 * only (the `llm` scan does not see it). The block now shows the article with that segment redacted, as resource-load
 * does — for the user's first message and for a subagent session a `task` prompt starts. Before the fix the whole
 * segment reached the model.
 */
import { describe, expect, test } from "bun:test"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { segmentPolicy } from "./segment-policy"
import { targets } from "./targets"

const POLICY = segmentPolicy(["read"])

const FILES = {
  ".opencode-security.json": JSON.stringify(POLICY, null, 2),
  ".opencode/knowledge-base/ops-deploy.md":
    "---\ntitle: Billing deploys\ndescription: How the ops team deploys the billing service\ntags: [billing, deploy]\n---\nDeploy the billing service with the script.\n<!-- @secure-start -->\npin=Qv7Lm2\nthe billing deploy passphrase is orange kettle nine\n<!-- @secure-end -->\nThen check the billing logs.\n",
}

for (const target of targets()) {
  describe(`GA3 on stock opencode ${target.label}`, () => {
    for (const via of ["user", "task"] as const)
      test(`GA3 the knowledge block of an article with a read-only segment shows it redacted (${via} prompt)`, async () => {
        const server = ModelServer.start(
          via === "task"
            ? [
                // The user's prompt matches nothing; the agent's task prompt matches the article.
                ModelServer.call("task", {
                  subagent_type: "general",
                  description: "billing deploys",
                  prompt: "how do we deploy the billing service?",
                }),
                ModelServer.text("Subagent done."),
                ModelServer.text("Done."),
              ]
            : [ModelServer.text("Use the script.")],
        )
        await using project = await Harness.project({ bin: target.bin, files: FILES })
        try {
          await Harness.run(
            project,
            server,
            via === "task" ? "please tidy up the readme wording" : "how do we deploy the billing service?",
          )
          const all = server.requests.map((r) => r.raw).join("\n")
          expect(all).toContain("Then check the billing logs")
          expect(all).toContain("[REDACTED: protected segment]")
          expect(all).not.toContain("Qv7Lm2")
          expect(all).not.toContain("orange kettle nine")
        } finally {
          server.stop()
        }
      }, 240_000)
  })
}
