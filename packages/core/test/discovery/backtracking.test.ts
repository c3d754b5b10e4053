import { isolatedCases, type IsolatedCase } from "../fixture"

/**
 * Adversarial 1 MB frontmatter lines for the `key: value` expressions that backtracked super-linearly: a value holding
 * a lone `\r` (or U+2028), which the split on `\r?\n` leaves in the line and `.` does not match, made them retry every
 * split of the blanks after the colon (31 s for 100 KB). Such a line is still not read as `key: value`, as before.
 * Each call runs in its own process, ended after 25 s (a blocked thread cannot be timed out); no timing is asserted.
 */
const N = 1_000_000

type Case = IsolatedCase

const PARSE =
  'summary(DiscoveryParse.parse({ text, filePath: "/p/.claude/commands/x.md", fallbackName: "x", type: "command", source: "local", origin: "claude" }))'

const cases: Case[] = [
  {
    name: "parse: a lone \\r after a long run of tabs (through the lenient retry and the salvage)",
    input: '"---\\nA:" + "\\t".repeat(N) + "x\\ry\\n---\\nbody"',
    call: PARSE,
    expected: { success: true, name: "x", description: "body" },
  },
  {
    name: "parse: the other salvaged fields are read, the line with the lone \\r is not",
    input: '"---\\nname: Use: here\\ndescription:" + "\\t".repeat(N) + "x\\ry\\n---\\nbody"',
    call: PARSE,
    expected: { success: true, name: "Use: here", description: "body" },
  },
  {
    name: "salvage: a value holding a lone \\r is not read",
    input: '"---\\nname: a\\ndescription:" + "\\t".repeat(N) + "x\\ry\\ntags: [t]\\n---\\nbody"',
    call: "DiscoveryParse.salvage(text)",
    expected: { data: { name: "a", tags: "t" }, body: "body" },
  },
  {
    name: "salvage: a value holding U+2028 is not read",
    input: '"---\\ndescription:" + " ".repeat(N) + "x\\u2028y\\n---\\nb"',
    call: "DiscoveryParse.salvage(text)",
    expected: { data: {}, body: "b" },
  },
  {
    name: "salvage: a value after a long run of blanks is read",
    input: '"---\\ndescription:" + "\\t ".repeat(N / 2) + "Close it \\t\\n---\\nB"',
    call: "DiscoveryParse.salvage(text)",
    expected: { data: { description: "Close it" }, body: "B" },
  },
  {
    name: "frontmatter: a lone \\r after a long run of tabs",
    input: '"---\\nA:" + "\\t".repeat(N) + "x\\ry\\n---\\nbody"',
    call: "DiscoveryLocate.frontmatter(text)?.data ?? null",
    expected: null,
  },
  {
    name: "frontmatter: a lone \\r after a long run of blanks before the colon and after it",
    input: '"---\\nname: a: b\\nA" + " ".repeat(N / 2) + ":" + " ".repeat(N / 2) + "x\\ry\\n---\\nbody"',
    call: "DiscoveryLocate.frontmatter(text)?.data ?? null",
    expected: null,
  },
  {
    name: "frontmatter: a value holding a colon after a long run of blanks is still taken as text",
    input: '"---\\ndescription:" + " ".repeat(N) + "Use when: asked\\n---\\nbody"',
    call: "DiscoveryLocate.frontmatter(text)?.data ?? null",
    expected: { description: "Use when: asked" },
  },
]

isolatedCases(
  "discovery frontmatter of 1 MB adversarial lines",
  [
    `import { DiscoveryParse } from ${JSON.stringify(require.resolve("../../discovery/parse"))}`,
    `import { DiscoveryLocate } from ${JSON.stringify(require.resolve("../../discovery/locate"))}`,
    "const summary = (r: any) => (r.success ? { success: true, name: r.item.name, description: r.item.description } : r)",
  ],
  N,
  cases,
)
