import { describe, expect, test } from "bun:test"
import path from "path"
import { ResourceLint } from "../../resource/lint"
import { ResourceLoader } from "../../resource/loader"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

const KB = (body: string) =>
  "---\ntitle: Writing routers\ndescription: How we write routers\ntags: [router]\n---\n" + body

// A knowledge-base article of a real monorepo (trpc/trpc layout) linking to the repository's own docs (tester Q, Q4).
describe("resource links to existing files of the project", () => {
  test("Q4 a link to an existing Markdown file outside .opencode (CONTRIBUTING.md, a package README) is not a dangling-reference error", async () => {
    await using dir = await tmpdir({
      "CONTRIBUTING.md": "# Contributing\n",
      "packages/server/README.md": "# @trpc/server\n",
      "packages/server/src/index.ts": "export {}\n",
      ".opencode/knowledge-base/routers.md": KB(
        "Read [CONTRIBUTING](../../CONTRIBUTING.md), [the server readme](../../packages/server/README.md) " +
          "and [the entry](../../packages/server/src/index.ts).\n",
      ),
    })
    const report = await ResourceLint.run(dir.path)
    const errors = report.problems.filter((p) => p.severity === "error").map((p) => p.message)
    expect(errors).toEqual([])
  })

  test("Q4 the shapes of real links: ./, ../, #anchor, ?query, URL-encoded names, folders; only missing targets are dangling", async () => {
    await using dir = await tmpdir({
      "CONTRIBUTING.md": "# Contributing\n",
      "docs/My Guide.md": "# Guide\n",
      "docs/api/index.md": "# API\n",
      "schemas/user.json": '{"type":"object"}\n',
      ".opencode/knowledge-base/notes.md": "---\ntitle: Notes\ndescription: Notes\n---\nNotes.\n",
      ".opencode/knowledge-base/routers.md": KB(
        [
          "- [notes](./notes.md) and [notes again](notes.md#setup)",
          "- [contributing](../../CONTRIBUTING.md#pull-requests)",
          "- [source view](../../CONTRIBUTING.md?plain=1)",
          "- [guide](../../docs/My%20Guide.md) and [guide](<../../docs/My Guide.md>)",
          "- [api](../../docs/api/index.md) and [the docs folder](../../docs/)",
          "- [user schema](../../schemas/user.json)",
          "- [missing](../../nope.md) and [missing with anchor](../../docs/gone.md#x)",
          "- [missing with query](./gone-too.md?plain=1)",
        ].join("\n") + "\n",
      ),
    })
    const report = await ResourceLint.run(dir.path)
    const errors = report.problems.filter((p) => p.severity === "error")
    expect(errors.map((p) => [p.code, p.message])).toEqual([
      [
        "dangling-reference",
        "'routers' references 'nope.md', 'docs/gone.md', '.opencode/knowledge-base/gone-too.md', which match no resource",
      ],
    ])
    // Loading the article says what each existing file is instead of leaving it out unsaid; notes is loaded along.
    const loader = ResourceLoader.create({ directory: dir.path, worktree: dir.path, log: Logger.silent })
    const text = await loader.load(
      { id: "routers", includeReferences: true },
      { sessionID: "ses_1", messageID: "msg_1" },
    )
    expect(text).toContain("Reference 'CONTRIBUTING.md' not loaded: a file of the project, not a resource")
    expect(text).toContain("Reference 'docs/My Guide.md' not loaded: a file of the project, not a resource")
  })

  test("a link to an existing file outside the project is a dangling-reference error: nothing outside the project is read", async () => {
    await using dir = await tmpdir({
      "outside.md": "# Not in the project\n",
      "repo/.git/HEAD": "ref: refs/heads/main\n",
      "repo/.opencode/knowledge-base/routers.md": KB("See [the outside page](../../../outside.md).\n"),
    })
    const report = await ResourceLint.run(path.join(dir.path, "repo"))
    expect(report.problems.map((p) => [p.code, p.severity, p.message])).toEqual([
      ["dangling-reference", "error", "'routers' references '../outside.md', which matches no resource"],
    ])
  })
})
