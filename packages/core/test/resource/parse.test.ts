import { describe, expect, test } from "bun:test"
import { ResourceParse } from "../../resource/parse"
import type { Resource } from "../../resource/schema"

const input = (type: Resource.Type, relativePath: string, text: string) => ({
  type,
  relativePath,
  path: `/project/${relativePath}`,
  size: Buffer.byteLength(text),
  lastModified: 1_700_000_000_000,
  text,
})

describe("markdown frontmatter", () => {
  test("every field of the spec is read, with YAML arrays, dates and numbers", () => {
    const text = [
      "---",
      "id: git-ops",
      "title: Git Operations",
      "category: vcs",
      "tags:",
      "  - git",
      "  - vcs",
      "description: How we use git",
      "version: 1.2",
      "references: [pre-commit]",
      "referencedBy: [release-manager]",
      "author: team",
      "created: 2025-01-10",
      "updated: 2025-02-01T10:30:00Z",
      "difficulty: hard",
      "status: stable",
      "extra:",
      "  nested: { deep: [1, 2] }",
      "---",
      "# Body",
    ].join("\n")
    const { metadata, refs, warnings } = ResourceParse.parse(
      input("knowledge-base", ".opencode/knowledge-base/a.md", text),
    )
    expect(warnings).toEqual([])
    expect(metadata).toMatchObject({
      id: "git-ops",
      type: "knowledge-base",
      name: "Git Operations",
      category: "vcs",
      tags: ["git", "vcs"],
      description: "How we use git",
      version: "1.2",
      referencedBy: ["release-manager"],
      author: "team",
      created: "2025-01-10",
      updated: "2025-02-01T10:30:00.000Z",
      difficulty: "hard",
      status: "stable",
      relativePath: ".opencode/knowledge-base/a.md",
      path: "/project/.opencode/knowledge-base/a.md",
      size: Buffer.byteLength(text),
      lastModified: 1_700_000_000_000,
    })
    expect(refs).toEqual([{ kind: "id", value: "pre-commit" }])
  })

  test("name falls back from title to name to the file name in Title Case; id to the file name", () => {
    const byName = ResourceParse.parse(input("task", ".opencode/task/x.md", "---\nname: Named\n---\n"))
    expect(byName.metadata.name).toBe("Named")
    const derived = ResourceParse.parse(input("task", ".opencode/task/ship-the_release.md", "no frontmatter"))
    expect(derived.metadata.id).toBe("ship-the_release")
    expect(derived.metadata.name).toBe("Ship The Release")
    expect(derived.metadata.tags).toEqual([])
  })

  test("tags may be a comma-separated string; duplicates and empty entries are dropped", () => {
    const r = ResourceParse.parse(input("task", ".opencode/task/x.md", "---\ntags: 'git, vcs,, git'\n---\n"))
    expect(r.metadata.tags).toEqual(["git", "vcs"])
  })

  test("domain comes from the folders under the type folder, never from where the project lives", () => {
    const domain = (rel: string) => ResourceParse.domainFromPath(rel, "task")
    expect(domain(".opencode/task/dev/x.md")).toBe("dev")
    expect(domain(".opencode/task/area/docs/x.md")).toBe("docs")
    expect(domain(".opencode/task/opencode/x.md")).toBe("opencode")
    expect(domain(".opencode/task/core/x.md")).toBe("core")
    expect(domain(".opencode/task/x.md")).toBe("common")
    // A file named like a domain is not a folder.
    expect(domain(".opencode/task/dev.md")).toBe("common")
    // The project itself living under /home/me/dev/ does not matter: paths are project-relative.
    const r = ResourceParse.parse({
      ...input("task", ".opencode/task/x.md", "x"),
      path: "/home/me/dev/p/.opencode/task/x.md",
    })
    expect(r.metadata.domain).toBe("common")
  })

  test("a valid frontmatter domain overrides the path; an unknown one is ignored", () => {
    expect(
      ResourceParse.parse(input("task", ".opencode/task/dev/x.md", "---\ndomain: docs\n---\n")).metadata.domain,
    ).toBe("docs")
    expect(
      ResourceParse.parse(input("task", ".opencode/task/dev/x.md", "---\ndomain: moon\n---\n")).metadata.domain,
    ).toBe("dev")
  })

  test("malformed frontmatter is reported and the file is still indexed by its name", () => {
    const r = ResourceParse.parse(
      input("checklist", ".opencode/checklist/broken.md", "---\ntitle: [unclosed\n---\nbody"),
    )
    expect(r.warnings).toHaveLength(1)
    expect(r.warnings[0]).toMatchObject({
      severity: "error",
      code: "malformed-frontmatter",
      path: ".opencode/checklist/broken.md",
    })
    expect(r.metadata.id).toBe("broken")
    expect(r.metadata.name).toBe("Broken")
  })

  test("frontmatter that is not a mapping is reported", () => {
    const r = ResourceParse.parse(input("task", ".opencode/task/list.md", "---\n- a\n- b\n---\nbody"))
    expect(r.warnings.map((w) => w.code)).toEqual(["malformed-frontmatter"])
  })

  test("an empty file is indexed with a warning", () => {
    const r = ResourceParse.parse(input("task", ".opencode/task/empty.md", ""))
    expect(r.metadata.id).toBe("empty")
    expect(r.warnings.map((w) => [w.code, w.severity])).toEqual([["empty-file", "warning"]])
  })

  test("a page without a title is named by its level-one heading when it starts with one, else by its file name", () => {
    // compose-spec's 05-services.md starts with "# Services top-level element" and has no frontmatter.
    const name = (text: string) =>
      ResourceParse.parse(input("knowledge-base", ".opencode/knowledge-base/05-services.md", text)).metadata.name
    expect(name("# Services top-level element\n\nA service is…\n")).toBe("Services top-level element")
    expect(name("Services\n========\n\ntext\n")).toBe("Services")
    expect(name("---\ntags: [a]\n---\n\n# From the heading #\n")).toBe("From the heading")
    expect(name("---\ntitle: Declared\n---\n# Heading\n")).toBe("Declared")
    for (const text of ["Intro line.\n# Later heading\n", "## Second level\n", "#hashtag\n", ""])
      expect([text, name(text)]).toEqual([text, "05 Services"])
  })
})

describe("ids", () => {
  test.each([
    ["../etc/passwd", "it contains a path separator"],
    ["a/b", "it contains a path separator"],
    ["a\\b", "it contains a path separator"],
    ["x..y", "it contains '..'"],
    ["has space", "it contains whitespace or control characters"],
    ["-dash", "it must start with a letter or digit"],
    ["a,b", "it contains one of"],
    ["", "it is empty"],
    ["x".repeat(201), "longer than 200"],
  ])("'%s' is refused (%s)", (id, reason) => {
    expect(ResourceParse.invalidIdReason(id)).toContain(reason)
  })

  test.each(["git-operations", "v1.2_notes", "Ünïcode-ok", "a"])("'%s' is a valid id", (id) => {
    expect(ResourceParse.invalidIdReason(id)).toBeUndefined()
  })

  test("an invalid declared id is reported and replaced by the file name", () => {
    const r = ResourceParse.parse(input("task", ".opencode/task/safe.md", "---\nid: ../../escape\n---\n"))
    expect(r.metadata.id).toBe("safe")
    expect(r.warnings[0]).toMatchObject({ code: "invalid-id", id: "../../escape" })
  })

  test("a file name that is not a valid id becomes a slug", () => {
    const r = ResourceParse.parse(input("task", ".opencode/task/My Release Notes!.md", "x"))
    expect(r.metadata.id).toBe("my-release-notes")
    expect(r.metadata.name).toBe("My Release Notes!")
  })

  test("README, index, _index and SKILL files take their folder's name; in the type folder itself, their own", () => {
    const cases: [string, string, string][] = [
      [".opencode/knowledge-base/skills/api-design/SKILL.md", "api-design", "Api Design"],
      [".opencode/knowledge-base/guides/Deploying Apps/README.md", "deploying-apps", "Deploying Apps"],
      [".opencode/knowledge-base/content/en/functions/_index.md", "functions", "Functions"],
      [".opencode/knowledge-base/posts/my-post/index.markdown", "my-post", "My Post"],
      [".opencode/schema/user/index.json", "user", "User"],
      [".opencode/knowledge-base/README.md", "README", "README"],
      [".opencode/knowledge-base/skills/api-design/references/README-old.md", "README-old", "README Old"],
    ]
    for (const [rel, id, name] of cases) {
      const type = rel.startsWith(".opencode/schema/") ? "schema" : "knowledge-base"
      const r = ResourceParse.parse(input(type, rel, type === "schema" ? "{}" : "x"))
      expect([rel, r.metadata.id, r.metadata.name]).toEqual([rel, id, name])
      expect(ResourceParse.defaultId(rel)).toBe(id)
    }
    // A declared id still wins.
    const declared = ResourceParse.parse(
      input("knowledge-base", ".opencode/knowledge-base/a/README.md", "---\nid: intro\n---\n"),
    )
    expect(declared.metadata.id).toBe("intro")
  })
})

describe("references", () => {
  test("frontmatter references win over the body; paths resolve relative to the file", () => {
    const r = ResourceParse.parse(
      input("task", ".opencode/task/dev/a.md", "---\nreferences: [b, ../../checklist/c.md]\n---\n[[ignored]]"),
    )
    expect(r.refs).toEqual([
      { kind: "id", value: "b" },
      { kind: "path", value: ".opencode/checklist/c.md" },
    ])
  })

  test("a link whose target holds a template placeholder names no file: {baseDir}, ${VAR}, Hugo's {{< ref >}}", () => {
    const body = [
      "[patterns]({baseDir}/references/patterns.md)",
      "[hooks](${CLAUDE_PLUGIN_ROOT}/docs/hooks.md)",
      '[page]({{< ref "docs/page.md" >}})',
      "[privacy](Security%20and%20privacy.md)",
      "[real](references/real.md)",
    ].join("\n")
    expect(ResourceParse.inlineReferences(body, ".opencode/knowledge-base/skills/s/SKILL.md")).toEqual([
      // A bare relative link carries the same path from the type folder, tried when it misses (Docusaurus).
      {
        kind: "path",
        value: ".opencode/knowledge-base/skills/s/Security and privacy.md",
        fallback: ".opencode/knowledge-base/Security and privacy.md",
      },
      {
        kind: "path",
        value: ".opencode/knowledge-base/skills/s/references/real.md",
        fallback: ".opencode/knowledge-base/references/real.md",
      },
    ])
  })

  test("inline: wiki links (with labels) and markdown links to resource files, not code, URLs or anchors", () => {
    const body = [
      "See [[alpha]] and [[beta|the beta guide]].",
      "Also [the checklist](../checklist/check.md#step-2) and [schema](<../schema/s.json>).",
      "Ignore [site](https://example.com/x.md), [abs](/etc/x.md), [img](pic.png), [anchor](#top).",
      "Inline `[[not-this]]` code.",
      "```md",
      "[[nor-this]] [x](../task/no.md)",
      "```",
      "~~~",
      "[[neither]]",
      "~~~",
      "[[gamma]]",
    ].join("\n")
    const r = ResourceParse.parse(input("task", ".opencode/task/a.md", body))
    expect(r.refs).toEqual([
      { kind: "id", value: "alpha" },
      // The label is kept as the other reading: Dendron writes `[[label|note]]`.
      { kind: "id", value: "beta", or: { value: "the beta guide" } },
      { kind: "id", value: "gamma" },
      { kind: "path", value: ".opencode/checklist/check.md", section: true },
      { kind: "path", value: ".opencode/schema/s.json" },
    ])
  })

  test("code of static site generators hides its [[…]]: Hugo shortcodes, Jekyll highlight, <pre>; closed ones only", () => {
    // TOML tables of arrays as gohugoio/hugoDocs writes them (content/en/methods/menu/*.md).
    const body = [
      "{{< code-toggle file=hugo >}}",
      "[[menus.main]]",
      "name = 'Services'",
      "{{< /code-toggle >}}",
      "{{< code-toggle config=menus />}} [[after-self-closing]]",
      "{{% highlight toml %}}",
      "[[module.mounts]]",
      "{{% /highlight %}}",
      "{% highlight toml %}",
      "[[jekyll.table]]",
      "{% endhighlight %}",
      "<pre>[[pre.inline]]</pre> [[between]] <pre>",
      "[[pre.block]]",
      "</pre>[[after-pre]]",
      "{{< code lang=toml >}} never closed [[kept]]",
    ].join("\n")
    expect(ResourceParse.inlineReferences(body, ".opencode/knowledge-base/a.md").map((r) => r.value)).toEqual([
      "after-self-closing",
      "between",
      "after-pre",
      "kept",
    ])
  })

  test("fences at any indentation (inside list items) and array literals are not links", () => {
    const body =
      "1. Step:\n\n      ```toml\n      [[module.mounts]]\n      ```\n\ninline = [['\\(', '\\)']] [[\"a\"]] [[ok]]"
    expect(ResourceParse.inlineReferences(body, "a.md")).toEqual([{ kind: "id", value: "ok" }])
  })

  test("an unclosed code fence hides the rest of the file", () => {
    const r = ResourceParse.parse(input("task", ".opencode/task/a.md", "[[seen]]\n```\n[[hidden]]"))
    expect(r.refs).toEqual([{ kind: "id", value: "seen" }])
  })

  test("wiki links name notes: a section is the note's (flagged), a page's own section and the .md suffix are dropped", () => {
    expect(
      ResourceParse.inlineReferences("[[Set up#Steps|steps]] [[#Intro]] [[Guide.md]] [[a/B#^x1]]", "k/a.md"),
    ).toEqual([
      { kind: "id", value: "Set up", section: true, or: { value: "steps" } },
      { kind: "id", value: "Guide" },
      { kind: "id", value: "a/B", section: true },
    ])
  })

  test("a markdown link whose text is in brackets is a link, not a wiki link (mkdocs' release notes)", () => {
    const body = "See [[1]](../guide/a.md#x) [[2]](b.md), a [[3]][ref] footnote, [[real-id]] and [[x|label]]."
    expect(ResourceParse.inlineReferences(body, ".opencode/knowledge-base/notes/n.md")).toEqual([
      { kind: "id", value: "real-id" },
      { kind: "id", value: "x", or: { value: "label" } },
      { kind: "path", value: ".opencode/knowledge-base/guide/a.md", section: true },
      { kind: "path", value: ".opencode/knowledge-base/notes/b.md", fallback: ".opencode/knowledge-base/b.md" },
    ])
  })

  test(
    "text made of unfinished links and brackets is read in linear time (a 1 MB file of them)",
    async () => {
      // Each body took minutes with the earlier expressions (quadratic backtracking), blocking the thread: run apart and
      // end the process if it does not finish.
      const shapes = [
        '"[".repeat(N) + "](a.md)"',
        '"[[a".repeat(N / 3)',
        '"[a](".repeat(N / 4)',
        '"[[x]](".repeat(N / 6)',
      ]
      const script = [
        `import { ResourceParse } from ${JSON.stringify(require.resolve("../../resource/parse"))}`,
        "const N = 1_000_000",
        `for (const body of [${shapes.join(", ")}]) ResourceParse.inlineReferences(body, "a.md")`,
        'console.log("done")',
      ].join("\n")
      const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" })
      const timer = setTimeout(() => proc.kill(), 60_000)
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]).finally(() =>
        clearTimeout(timer),
      )
      expect({ out: out.trim(), code }).toEqual({ out: "done", code: 0 })
    },
    { timeout: 90_000 },
  )
})

describe("JSON schemas", () => {
  test("$id, title, description, x-tags and $ref", () => {
    const schema = {
      $id: "https://example.com/schemas/user.schema.json",
      title: "User",
      description: "A user",
      "x-tags": ["people", "auth"],
      "x-category": "identity",
      properties: {
        address: { $ref: "./address.json#/definitions/a" },
        other: { $ref: "https://example.com/schemas/org.json" },
        local: { $ref: "#/definitions/x" },
      },
    }
    const r = ResourceParse.parse(input("schema", ".opencode/schema/user.json", JSON.stringify(schema)))
    expect(r.warnings).toEqual([])
    expect(r.metadata).toMatchObject({
      id: "user",
      name: "User",
      description: "A user",
      tags: ["people", "auth"],
      category: "identity",
      type: "schema",
    })
    expect(r.uri).toBe("https://example.com/schemas/user.schema.json")
    expect(r.uris).toEqual(["https://example.com/schemas/user.schema.json"])
    // Relative refs resolve against the $id (and name a file as a path); absolute ones may be published elsewhere.
    expect(r.refs).toEqual([
      {
        kind: "schema",
        value: "./address.json",
        uri: "https://example.com/schemas/address.json",
        path: ".opencode/schema/address.json",
        external: false,
      },
      {
        kind: "schema",
        value: "https://example.com/schemas/org.json",
        uri: "https://example.com/schemas/org.json",
        external: true,
      },
    ])
  })

  test("a nested $id is the base below it; subschema ids and the document's own $id are internal", () => {
    const schema = {
      $id: "https://x.org/a/root.json",
      $defs: {
        inner: { $id: "https://y.org/b/inner.json", properties: { p: { $ref: "sibling.json" } } },
        again: { $ref: "https://y.org/b/inner.json" },
        self: { $ref: "root.json#/$defs/inner" },
      },
      properties: { $ref: { type: "string" }, q: { $ref: "other.json" }, r: { $ref: "other.json#/x" } },
    }
    const r = ResourceParse.parse(input("schema", ".opencode/schema/root.json", JSON.stringify(schema)))
    expect(r.refs.map((ref) => (ref.kind === "schema" ? ref.uri : ref.value))).toEqual([
      "https://y.org/b/sibling.json",
      "https://x.org/a/other.json",
    ])
  })

  test("draft-04 names documents and subschemas by `id`; the file name stays the resource id", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-04/schema#",
      id: "http://json.schemastore.org/tsoa",
      definitions: { path: { id: "path", type: "string" } },
      properties: { a: { $ref: "path" }, b: { $ref: "tsconfig#/definitions/compilerOptionsDefinition" } },
    }
    const r = ResourceParse.parse(input("schema", ".opencode/schema/tsoa.json", JSON.stringify(schema)))
    expect(r.metadata.id).toBe("tsoa")
    expect(r.uris).toEqual(["https://json.schemastore.org/tsoa"])
    expect(r.refs).toEqual([
      {
        kind: "schema",
        value: "tsconfig",
        uri: "https://json.schemastore.org/tsconfig",
        path: ".opencode/schema/tsconfig",
        external: false,
      },
    ])
  })

  test("a plain $id is the id; x-references replace $ref scanning", () => {
    const r = ResourceParse.parse(
      input(
        "schema",
        ".opencode/schema/x.json",
        JSON.stringify({ $id: "orders", "x-references": ["user"], $ref: "./y.json" }),
      ),
    )
    expect(r.metadata.id).toBe("orders")
    expect(r.refs).toEqual([{ kind: "id", value: "user" }])
  })

  test("invalid JSON and non-object JSON are reported; the file stays listed by name", () => {
    const bad = ResourceParse.parse(input("schema", ".opencode/schema/bad.json", "{ nope"))
    expect(bad.metadata.id).toBe("bad")
    expect(bad.warnings[0]).toMatchObject({ code: "invalid-json", severity: "error" })
    const array = ResourceParse.parse(input("schema", ".opencode/schema/arr.json", "[1,2]"))
    expect(array.warnings[0].message).toContain("must be a JSON object or a boolean")
    // Boolean schemas (draft-06 on) are valid: no error, named by the file.
    for (const text of ["true", " false\n"]) {
      const bool = ResourceParse.parse(input("schema", ".opencode/schema/any.json", text))
      expect({ id: bool.metadata.id, warnings: bool.warnings }).toEqual({ id: "any", warnings: [] })
    }
    const empty = ResourceParse.parse(input("schema", ".opencode/schema/empty.json", "  "))
    expect(empty.warnings[0].code).toBe("empty-file")
  })

  test("invalid JSON names the line and column of the first error (a trailing comma in a long schema, a comment)", () => {
    // The shape a tester met in compose-spec's schema/compose-spec.json (1,906 lines): one trailing comma.
    const lines = Array.from({ length: 600 }, (_, i) => `  "p${i}": { "type": "string" },`)
    const comma = `{\n${lines.join("\n")}\n  "last": { "type": "string" },\n}\n`
    const bad = ResourceParse.parse(input("schema", ".opencode/schema/compose.json", comma))
    expect(bad.warnings[0].message).toStartWith("not valid JSON at line 603, column 1: property name expected (")
    const comment = ResourceParse.parse(input("schema", ".opencode/schema/c.json", '{\n  // note\n  "a": 1\n}'))
    expect(comment.warnings[0].message).toStartWith("not valid JSON at line 2, column 3: invalid comment token (")
    expect(ResourceParse.jsonErrorAt('{"a": 1}')).toBe("")
  })
})

describe("headers in TOML and JSON, as static site generators write them", () => {
  const kb = (rel: string, text: string) => ResourceParse.parse(input("knowledge-base", rel, text))

  test("a Zola/Hugo `+++` TOML header is read; its [[tables]] are never links (rust-lang/blog.rust-lang.org)", () => {
    const text = [
      "+++",
      'title = "Announcing Rust 1.42.0"',
      'description = "Empowering everyone"',
      "date = 2020-03-12",
      'tags = ["release", "rust"]',
      "",
      "[[extra.see_also]]",
      'path = "/inside-rust/"',
      "+++",
      "Body with [[real-link]].",
    ].join("\n")
    const { metadata, refs, warnings } = kb(".opencode/knowledge-base/_index.md", text)
    expect(warnings).toEqual([])
    expect(metadata).toMatchObject({
      name: "Announcing Rust 1.42.0",
      description: "Empowering everyone",
      created: undefined,
      tags: ["release", "rust"],
    })
    expect(refs).toEqual([{ kind: "id", value: "real-link" }])
    // CRLF and `---toml` are the same header.
    expect(kb(".opencode/knowledge-base/a.md", text.replaceAll("\n", "\r\n")).metadata.name).toBe(
      "Announcing Rust 1.42.0",
    )
    const dashed = text.replace(/^\+\+\+/, "---toml").replace(/\n\+\+\+\n/, "\n---\n")
    expect(kb(".opencode/knowledge-base/a.md", dashed).metadata.name).toBe("Announcing Rust 1.42.0")
  })

  test("a `---json` header is read", () => {
    const text = '---json\n{ "title": "From JSON", "tags": ["a"], "references": ["other"] }\n---\nBody'
    const { metadata, refs, warnings } = kb(".opencode/knowledge-base/a.md", text)
    expect(warnings).toEqual([])
    expect(metadata).toMatchObject({ name: "From JSON", tags: ["a"] })
    expect(refs).toEqual([{ kind: "id", value: "other" }])
  })

  test("a header that cannot be read is an error, and its text is still no link; a `---js` header is never run", () => {
    const toml = kb(".opencode/knowledge-base/a.md", '+++\ntitle = "unclosed\n[[extra.see_also]]\n+++\nBody [[b]]')
    expect(toml.warnings.map((w) => w.code)).toEqual(["malformed-frontmatter"])
    expect(toml.refs).toEqual([{ kind: "id", value: "b" }])
    const g = globalThis as { frontmatterRan?: boolean }
    const js = kb(
      ".opencode/knowledge-base/a.md",
      "---js\n(globalThis.frontmatterRan = true, { title: 'x' })\n---\nBody",
    )
    expect(g.frontmatterRan).toBeUndefined()
    expect(js.warnings.map((w) => w.message)).toEqual([
      "frontmatter could not be parsed (frontmatter in JavaScript is not read (it would be evaluated)); indexed with names derived from the file",
    ])
    expect(js.metadata.name).toBe("A")
  })
})
