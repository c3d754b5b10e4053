import { isolatedCases, type IsolatedCase } from "../fixture"

/**
 * Adversarial 1 MB inputs for the expressions that backtracked super-linearly on one long line. Each call took minutes
 * or hours with the earlier expressions, blocking the thread, so a timeout could not stop it: each runs in its own
 * process, ended after 25 s, and the test checks what it printed. No timing is asserted.
 */
const N = 1_000_000

type Case = IsolatedCase

const link = [{ kind: "id", value: "x" }]

const cases: Case[] = [
  // F16: every unterminated opener on a line scanned to its end (8 s for 100 KB of `{{<code `). The shortcode
  // expressions gave up early (no match) on a 1 MB line in JavaScriptCore, so their text is 25 lines of 40 KB (6 s each).
  {
    name: "unterminated Hugo code shortcodes",
    input: '"[[x]]\\n" + ("{{<code ".repeat(5_000) + "\\n").repeat(N / 40_000)',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    name: "unterminated Docsy tabs in a code tab pane",
    input: '"[[x]]\\n{{< tabpane >}}\\n" + ("{{< tab ".repeat(5_000) + "\\n").repeat(N / 40_000) + "{{< /tab >}}"',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    name: "unterminated <pre> tags",
    input: '"[[x]]\\n" + "<pre ".repeat(N / 5)',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    name: "unterminated tab panes",
    input: '"[[x]]\\n" + "{{%tabpane ".repeat(N / 11)',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    name: "a long opener closed on a later line still hides the code",
    input: '"{{<code ".repeat(N / 8) + ">}}\\n[[hidden]]\\n{{< /code >}}\\n[[x]]"',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    name: "self-closing shortcodes after a long run of openers hide nothing",
    input: '"{{<code ".repeat(N / 8) + "/>}} [[x]]\\n{{< /code >}}"',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    // The earlier expression's repeated group gave up on a body this long in JavaScriptCore: no opener, code shown.
    name: "a 1 MB shortcode opener with slashes in it still hides the code",
    input: '"{{< code " + "/x".repeat(N / 2) + " >}}\\n[[hidden]]\\n{{< /code >}}\\n[[x]]"',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    // Each block cut out of a line was followed by a search of the whole line joined again: quadratic in the blocks.
    name: "many closed <pre> blocks after 500 KB of text on one line",
    input: '"[[x]] " + "<p ".repeat(N / 6) + "<pre></pre>".repeat(N / 22) + "<pre>[[a]]</pre>"',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    // Deliberate change with the above: the text left around a block cut out is not read again for an opener. Before,
    // `{% highlight x` and `%}` became one once the closed `{% highlight %}` block between them was cut out.
    name: "an opener split by a closed block is not put together",
    input: '"{% highlight x{% highlight %}a{% endhighlight %}%}\\n[[hidden]]\\n{% endhighlight %}\\n[[x]]"',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: [{ kind: "id", value: "hidden" }, ...link],
  },
  // Link reference definitions (tester AJ): `[ \t]*\n?[ \t]*` before the target retried every split of a long run
  // of blanks after `[a]:` (2 s for 40 KB); the usage scan and long labels are bounded.
  {
    name: "a definition's label followed by 1 MB of blanks and no target",
    input: '"[[x]]\\n[a]:" + " \\t".repeat(N / 2)',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    name: "a definition's label, blanks, a line break and more blanks, no target",
    input: '"[[x]]\\n[a]:" + " ".repeat(N / 2) + "\\n" + " ".repeat(N / 2)',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  {
    name: "unclosed labels, escapes and brackets after a definition",
    input:
      '"[[x]]\\n[a]: b.txt\\n" + ("[" + "\\\\a".repeat(600) + "\\n").repeat(N / 1_202) + "[".repeat(N / 4) + ("[" + "a".repeat(998)).repeat(N / 4_000)',
    call: 'ResourceParse.inlineReferences(text, "a.md")',
    expected: link,
  },
  // F18: `/[-.]+$/` retried from every `-.` of a run that does not reach the end (13 s for 100 KB).
  {
    name: "slug of a long -. run inside the text",
    input: '"a" + "-.".repeat(N / 2) + "b"',
    call: "ResourceParse.slug(text)",
    expected: "a" + "-.".repeat(99) + "-",
  },
  {
    name: "slug of a long -. run at the end",
    input: '"a" + "-.".repeat(N / 2)',
    call: "ResourceParse.slug(text)",
    expected: "a",
  },
  // F17: `/[._-]+$/` on each word, retried from every character of a run inside it (16 s for 100 KB).
  {
    name: "words with a long run of - inside",
    input: '"a" + "-".repeat(N) + "b"',
    call: "ResourceIndex.words(text)",
    expected: ["a" + "-".repeat(N) + "b"],
  },
  {
    name: "words with long runs of ._- inside and at the end",
    input: '"a" + "_.-".repeat(N / 3) + "b c" + "-".repeat(N / 3)',
    call: "ResourceIndex.words(text)",
    expected: ["a" + "_.-".repeat(N / 3) + "b", "c"],
  },
]

isolatedCases(
  "resource parsing and indexing of 1 MB adversarial lines",
  [
    `import { ResourceParse } from ${JSON.stringify(require.resolve("../../resource/parse"))}`,
    `import { ResourceIndex } from ${JSON.stringify(require.resolve("../../resource/indexer"))}`,
  ],
  N,
  cases,
)
