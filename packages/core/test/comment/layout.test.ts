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

/** The first lines (1-based) of the comments `CommentLayout.entryHeadings` finds in `text`. */
function entryHeadings(file: string, text: string): number[] {
  const lines = text.split("\n")
  const { kinds, comments } = CommentSyntax.extract(lines, CommentSyntax.forFile(file)!)
  return [...CommentLayout.entryHeadings(lines, kinds, comments)].map((l) => l + 1).sort((a, b) => a - b)
}

describe("comments heading groups of entries in a list (tester's X4)", () => {
  test("python-sdk 837ef904f: a heading added to `__all__` beside the file's own, in the edit's text alone", () => {
    const edit = [
      '    "CLIENT_CAPABILITIES_META_KEY",',
      '    "LOG_LEVEL_META_KEY",',
      "    # Reserved result _meta keys",
      '    "SERVER_INFO_META_KEY",',
      "    # Type aliases and variables",
      '    "CORE_RESULT_TYPES",',
    ].join("\n")
    expect(entryHeadings("__init__.py", edit)).toEqual([3, 5])
  })

  test("python-sdk ecdf09d44: headings of parameter groups whose entries span lines (`]` / `| None = None,`)", () => {
    const param = (name: string) => [
      `        ${name}: Callable[`,
      "            [Ctx, Params],",
      "            Awaitable[R],",
      "        ]",
      "        | None = None,",
    ]
    const signature = [
      "    def __init__(",
      "        self,",
      "        name: str,",
      "        *,",
      "        lifespan: Callable[",
      "            [Server[LifespanResultT]],",
      "        ] = lifespan,",
      "        # Request handlers",
      ...param("on_list_tools"),
      ...param("on_call_tool"),
      "        # Notification handlers",
      ...param("on_progress"),
      "    ) -> None:",
      "        pass",
    ].join("\n")
    expect(entryHeadings("server.py", signature)).toEqual([8, 19])
    // A JavaScript object literal and a Go composite literal, groups separated by blank lines.
    const js = [
      "const routes = {",
      "  // Users",
      "  list: listUsers,",
      "  show: showUser,",
      "",
      "  // Admin",
      "  audit: audit,",
      "}",
    ]
    expect(entryHeadings("routes.ts", js.join("\n"))).toEqual([2, 6])
    const go = [
      "var defaults = map[string]int{",
      "\t// Timeouts",
      '\t"read": 5,',
      '\t"write": 5,',
      "\t// Limits",
      '\t"conns": 100,',
      "}",
    ]
    expect(entryHeadings("d.go", go.join("\n"))).toEqual([2, 5])
  })

  test("not headings: one entry per comment, a single comment, statements in a body, a comment not right above an entry", () => {
    const each = [
      "config = {",
      "    # Set the timeout",
      '    "timeout": 30,',
      "    # Set the retries",
      '    "retries": 3,',
      "}",
    ]
    expect(entryHeadings("a.py", each.join("\n"))).toEqual([])
    const single = ["__all__ = [", "    # Request types", '    "A",', '    "B",', "]"]
    expect(entryHeadings("a.py", single.join("\n"))).toEqual([])
    const body = [
      "def run(items):",
      "    # Load the config",
      "    config = load(path,",
      "        strict=True)",
      "    total = 0",
      "    # Count the items",
      "    count(items, config)",
      "    other(items, config)",
    ]
    expect(entryHeadings("a.py", body.join("\n"))).toEqual([])
    const apart = ["x = [", "    # First group", "", '    "a",', '    "b",', "    # Second group", "", '    "c",', "]"]
    expect(entryHeadings("a.py", apart.join("\n"))).toEqual([])
  })
})

describe("section banners (tester's RW4)", () => {
  /** The first lines (1-based) of the comments `CommentLayout.banners` finds in `text`. */
  function banners(file: string, text: string): number[] {
    const lines = text.split("\n")
    const { comments } = CommentSyntax.extract(lines, CommentSyntax.forFile(file)!)
    return [...CommentLayout.banners(lines, comments)].map((l) => l + 1).sort((a, b) => a - b)
  }

  test("a line of words ending in a run, or words with a rule line, in any language's comments", () => {
    // nvim-lua/plenary.nvim 08c0eabcb1, lua/plenary/curl.lua.
    const curl = [
      "-- Parse Request -------------------------------------------",
      "------------------------------------------------------------",
      "parse.request = function(opts)",
    ]
    expect(banners("curl.lua", curl.join("\n"))).toEqual([1])
    expect(banners("a.lua", "-- Parse response\n------------------\nparse.response = function() end")).toEqual([1])
    expect(banners("a.ts", "// Parsers\n// --------\nexport function parse() {}")).toEqual([1])
    expect(banners("a.py", "# ==== Helpers ====\ndef helper():\n    pass")).toEqual([1])
    expect(banners("a.py", "# ----\n# Setup\n# ----\nsetup()")).toEqual([1])
    expect(banners("a.c", "/* Parse request ---- */\nint parse(void);")).toEqual([1])
    expect(banners("a.sh", "# Setup fzf\n# ---------\nsetup_fzf")).toEqual([1])
  })

  test("not banners: plain comments, dashes inside a sentence, short runs, a rule line alone, trailing comments", () => {
    expect(banners("a.ts", "// Parse the request\nparse(req)")).toEqual([])
    expect(banners("a.ts", "// Parse the request -- it may be empty\nparse(req)")).toEqual([])
    expect(banners("a.ts", "// Loading...\nload()")).toEqual([])
    expect(banners("a.ts", "// x---\nx--")).toEqual([])
    // LDoc's empty doc line `---` is not a rule.
    expect(banners("a.lua", "--- Get the name\n---\nlocal function name() end")).toEqual([])
    expect(banners("a.ts", "// ----------\nf()")).toEqual([])
    expect(banners("a.ts", "f() // Parse it ----")).toEqual([])
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
