// Red team GA3: knowledge injection put a knowledge-base article's body into the prompt after the `llm` scan only, so a
// segment denied for `read` alone reached the model whole. Article bodies now get the scan `resource-load`'s output
// gets (segments the role may not read, `read` or `llm`), in the same redaction form, on both routes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { POLICY, project } from "./fixture"
import { isolateHome } from "./redteam-helpers"
import { ROUTES, open } from "./own-session"

let home: ReturnType<typeof isolateHome>
beforeAll(() => {
  home = isolateHome()
})
afterAll(() => home.restore(), 60_000)

const withOps = (ops: string[]) => ({
  ...POLICY,
  segments: {
    markers: POLICY.segments.markers.map((m) => (m.start === "@secure-start" ? { ...m, deniedOperations: ops } : m)),
  },
})

const ARTICLE =
  "---\ntitle: Billing deploys\ndescription: How the ops team deploys the billing service\ntags: [billing, deploy]\n---\nDeploy the billing service with the script.\n<!-- @secure-start -->\npin=Qv7Lm2\nthe billing deploy passphrase is orange kettle nine\n<!-- @secure-end -->\nThen check the billing logs.\n"

/** The article's body as a text shows it, from its first line to its last. */
const body = (text: string) => {
  const from = text.indexOf("Deploy the billing service with the script.")
  const to = text.indexOf("Then check the billing logs.")
  return from >= 0 && to > from ? text.slice(from, to) : undefined
}

describe.each(ROUTES)("route %s: knowledge", (route) => {
  for (const ops of [["read"], ["read", "llm"]])
    test(`GA3 the knowledge block of an article with a ${ops.join("+")} segment shows it redacted, as resource-load does`, async () => {
      await using dir = await project({ ".opencode/knowledge-base/ops-deploy.md": ARTICLE }, withOps(ops))
      const session = await open(route, dir.path)
      try {
        const parts = await session.prompt("how do we deploy the billing service?")
        const added = parts
          .slice(1)
          .map((p) => p.text ?? "")
          .join("\n")
        expect(added).toContain('<article id="ops-deploy"')
        expect(added).toContain("Then check the billing logs")
        expect(added).not.toContain("Qv7Lm2")
        expect(added).not.toContain("orange kettle nine")
        expect(added).toContain("[REDACTED: protected segment]")
        // The same body, in the same form, as the product's own resource-load shows it.
        const loaded = await session.call("resource-load", { id: "ops-deploy" })
        expect(loaded.output).not.toContain("orange kettle nine")
        expect(body(added)).toBeDefined()
        expect(body(added)).toBe(body(loaded.output))
      } finally {
        await session.close()
      }
    }, 60_000)
})
