import { describe, expect, test } from "bun:test"
import { CommentLayout } from "../../comment/layout"
import { CommentSyntax } from "../../comment/syntax"

/** The first lines (1-based) of the comments `CommentLayout.headings` finds in `text`. */
function headings(file: string, text: string): number[] {
  const lines = text.split("\n")
  const { kinds, comments } = CommentSyntax.extract(lines, CommentSyntax.forFile(file)!)
  return [...CommentLayout.headings(lines, kinds, comments)].map((l) => l + 1).sort((a, b) => a - b)
}

// Shape of Shopify/roast test/roast/cogs/ruby_test.rb at c9945d21aa084152b5004452d2538b4ea2071c7e (shortened): a
// heading over one `test` block, then one over several, separated by blank lines.
const ROAST = [
  "class OutputTest < ActiveSupport::TestCase",
  "  # Constructor tests",
  '  test "initialize sets value" do',
  '    output = Output.new("test value")',
  "  end",
  "",
  "  # call tests",
  '  test "call invokes value when it is a Proc" do',
  "    output = Output.new(->(x) { x * 2 })",
  "    assert_equal 10, output.call(5)",
  "  end",
  "",
  '  test "call passes block to Proc value" do',
  "    assert_equal [2, 4, 6], output.call([1, 2, 3]) { |n| n * 2 }",
  "  end",
  "end",
].join("\n")

describe("comments heading a group of sibling blocks", () => {
  test("a comment over several sibling blocks, and one over a single block in the same run, are headings", () => {
    expect(headings("t.rb", ROAST)).toEqual([2, 7])
  })

  test("not a heading: no group of two, a control block, no blank line before, a different block word", () => {
    // One block under each comment and no group anywhere: a comment per test, not a heading.
    const single = [
      "# Parse tests",
      'test "parses" do',
      "  x",
      "end",
      "",
      "# Load tests",
      'test "loads" do',
      "  y",
      "end",
    ]
    expect(headings("t.rb", single.join("\n"))).toEqual([])
    // A comment over two loops: steps of a body, whatever follows.
    const loops = [
      "def f",
      "  # Process the items",
      "  for i in a",
      "    g(i)",
      "  end",
      "",
      "  for j in b",
      "    h(j)",
      "  end",
      "end",
    ]
    expect(headings("t.rb", loops.join("\n"))).toEqual([])
    // Code right before the comment: it is a step among statements.
    const glued = ["x = 1", "# call tests", 'test "a" do', "  y", "end", "", 'test "b" do', "  z", "end"]
    expect(headings("t.rb", glued.join("\n"))).toEqual([])
    // Blocks opening with different words are not one group.
    const mixed = ["# Setup", "setup do", "  y", "end", "", 'test "b" do', "  z", "end"]
    expect(headings("t.rb", mixed.join("\n"))).toEqual([])
  })

  test("JavaScript and Python groups: `it(…)` blocks closed by `})`, `def` blocks without a closer", () => {
    const js = [
      "describe('config', () => {",
      "  // API key tests",
      "  it('sets the key', () => {",
      "    set()",
      "  })",
      "",
      "  it('reads the key', () => {",
      "    get()",
      "  })",
      "})",
    ]
    expect(headings("t.test.ts", js.join("\n"))).toEqual([2])
    const py = ["# Parser tests", "def test_parse():", "    parse()", "", "def test_parse_empty():", "    parse('')"]
    expect(headings("t.py", py.join("\n"))).toEqual([1])
  })
})

describe("C and C++ function definitions", () => {
  const def = (text: string) => CommentLayout.cDefinition(text.split("\n"), 0)

  test("style(9) (tmux/tmux grid.c at d13b69ece4eda6fba458711f514db9dd4dfe326c), one-line heads, C++ forms", () => {
    expect(def("time_t\ngrid_line_time(const struct grid_line *gl)\n{")).toBe(true)
    expect(def("struct grid_line *\ngrid_get_line(struct grid *gd, u_int line)\n{")).toBe(true)
    expect(def("static int\nfoo(struct a *a,\n    int b)\n{")).toBe(true)
    expect(def("static int foo(int a) {")).toBe(true)
    expect(def("static void\nf(void)\t/* why */\n{")).toBe(true)
    expect(def("std::vector<int> Parser::parse(const std::string& s) const {")).toBe(true)
    expect(def("template <typename T>\nT max(T a, T b) {")).toBe(true)
    expect(def("Foo::~Foo() {")).toBe(true)
  })

  test("not definitions: prototypes, calls, control statements, initialisers, macros, struct bodies", () => {
    expect(def("static int input_key_cmp(struct input_key_entry *, struct input_key_entry *);")).toBe(false)
    expect(def("memset(&sigact, 0, sizeof sigact);")).toBe(false)
    expect(def("if (gl->time == 0) {")).toBe(false)
    expect(def("} else if (x) {")).toBe(false)
    expect(def("TAILQ_FOREACH(loop, &list, entry) {")).toBe(false)
    expect(def("static const struct input_key_entry input_key_defaults[] = {")).toBe(false)
    expect(def("struct input_key_entry {")).toBe(false)
    expect(def("return (f(x)) {")).toBe(false)
    expect(def("#define X(a) {")).toBe(false)
  })
})
