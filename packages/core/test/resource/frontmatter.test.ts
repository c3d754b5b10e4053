import { describe, expect, test } from "bun:test"
import { ResourceFrontmatter } from "../../resource/frontmatter"
import { Frontmatter } from "../../util/frontmatter"

/** gray-matter + js-yaml (through `Frontmatter.parse`) is the oracle: the scanner gives the same or steps aside. */
function same(text: string) {
  const fast = ResourceFrontmatter.fast(text)
  if (fast === undefined) return false
  const oracle = Frontmatter.parse(text)
  expect(fast).toEqual(oracle)
  expect(Object.keys(fast.data)).toEqual(Object.keys(oracle.data))
  return true
}

const doc = (header: string, body = "# Body\n") => `---\n${header}\n---\n${body}`

describe("ResourceFrontmatter: the fast scanner agrees with gray-matter", () => {
  test("the shapes resource files use are read by the scanner, exactly as gray-matter reads them", () => {
    const accepted = [
      // This project's documented frontmatter (docs/resources.md).
      doc(
        [
          "id: git-operations",
          "title: Git Operations",
          "description: Branching and recovering work with git",
          "tags: [git, vcs]",
          "category: version-control",
          "domain: dev",
          'version: "1.2.0"',
          "references: [pre-commit, ../task/ship-release.md]",
          "referencedBy: [release-manager]",
          "author: platform-team",
          "created: 2025-01-10",
          "updated: 2025-02-01",
          "difficulty: intermediate",
          "status: stable",
        ].join("\n"),
      ),
      // Claude Code agents (wshobson/agents, VoltAgent collections): name, description, model, tools.
      doc(
        "name: backend-architect\ndescription: Expert backend architect. Use PROACTIVELY when designing APIs.\nmodel: inherit",
      ),
      doc("name: code-reviewer\ndescription: Reviews code\ntools: Read, Write, Edit, Bash, Glob, Grep\nmodel: sonnet"),
      // Block lists, indented or not, with quoted items and comments between them.
      doc("tags:\n  - git\n  - 'it''s'\n  # a comment\n  - \"vcs\"\ntitle: T"),
      doc("aliases:\n- /old/path\n- /older/path"),
      // Scalars js-yaml types: numbers, booleans, nulls, dates, versions.
      doc(
        "weight: 10\nratio: 1.10\nneg: -3\ndraft: false\nok: True\nnothing: ~\nempty:\nversion: 1.2.0\ndate: 2024-02-29",
      ),
      doc("title: 10 tips for git\nkeywords: [1, 2.5, true, null, a b]\nflow: []"),
      doc("# leading comment\ntitle: A # B"),
    ]
    // The last one has a comment after a value: left to gray-matter.
    expect(accepted.map(same)).toEqual([true, true, true, true, true, true, true, false])
  })

  test("anything outside the subset is left to gray-matter (never read differently)", () => {
    const left = [
      doc("params:\n  returnType: navigation.Menu\n  signatures: [MENU.ByName]"), // nested mapping (Hugo)
      doc("description: |\n  Multi-line\n  text"), // block scalar
      doc("description: >-\n  folded"),
      doc("title: first\ntitle: second"), // duplicate key: js-yaml's error
      doc('title: "escaped \\" quote"'),
      doc("title: a: b"), // a mapping where a scalar was expected
      doc("when: 2001-12-14t21:59:43.10-05:00"),
      doc("date: 2025-02-30"), // rolls over in js-yaml
      doc("octal: 010\nhex: 0x1F\nsexagesimal: 1:20"),
      doc("anchor: &a value\nalias: *a"),
      doc("tagged: !!str 5"),
      doc("list: [a, [b]]\n"),
      doc("list: [a, b,]"),
      doc("title: multi\n  line plain"),
      doc("- just a list"),
      doc("#"),
      "---\r\ntitle: crlf\r\n---\r\nbody",
      "--- \ntitle: space after the delimiter\n---\n",
      doc("title:\ttab"),
      doc("__proto__: x"),
    ]
    for (const text of left) expect(ResourceFrontmatter.fast(text)).toBeUndefined()
    // And the public parse still gives gray-matter's answer for them.
    for (const text of left) expect(ResourceFrontmatter.parse(text)).toEqual(Frontmatter.parse(text))
  })

  test("bodies and delimiters follow gray-matter: first \\n--- closes, one newline dropped, BOM stripped, unclosed", () => {
    const cases = [
      "---\ntitle: A\n---\n\nbody",
      "---\ntitle: A\n---",
      "---\ntitle: A\n----\nbody after a longer fence",
      "---\ntitle: A\n---trailing text\nbody",
      "\ufeff---\ntitle: A\n---\nbody",
      "---\ntitle: A\n",
      "no frontmatter at all\n---\ntitle: x\n---\n",
      "",
    ]
    for (const text of cases) {
      const fast = ResourceFrontmatter.fast(text)
      expect(fast).toBeDefined()
      expect(fast).toEqual(Frontmatter.parse(text))
    }
  })

  test("generated headers: every accepted one matches gray-matter", () => {
    // Deterministic combinations of keys, scalars and list forms.
    const scalars = ["plain", "two words", "'single'", '"double"', "42", "-7", "3.14", "1.2.3", "true", "FALSE", "~"]
    const more = [
      "null",
      "2025-01-31",
      "10 apples",
      "a,b",
      "x-y_z",
      "ünïcode",
      "it's",
      "'it''s'",
      "[]",
      "[a, 'b c', 3]",
    ]
    const values = [...scalars, ...more]
    let accepted = 0
    for (let i = 0; i < values.length; i++)
      for (let j = 0; j < values.length; j++) {
        const header = `a: ${values[i]}\nb:\n  - ${values[j]}\n  - ${values[i]}\nc: [${values[j]}]`
        if (same(doc(header))) accepted++
      }
    expect(accepted).toBeGreaterThan(values.length * values.length * 0.5)
  })
})
