import { describe, expect, test } from "bun:test"
import { CommentHeuristics } from "../../comment/heuristics"

describe("comment heuristics", () => {
  test("obvious: the PRD's six patterns, and the added narration verbs", () => {
    for (const text of [
      "Initialize the counter",
      "Create a new user",
      "Return the result",
      "Log the error",
      "Loop through the items",
      "Iterate over the keys",
      "Check if the list is empty",
      "Validate the input",
      "Import React",
      "Function to parse the config",
      "Increment the count",
      "Add the price to the sum",
      "Set count to zero",
      "This function adds two numbers",
      "Helper function to sleep",
      "Constructor",
    ])
      expect([text, CommentHeuristics.obvious(text)]).toEqual([text, true])
  })

  test("not obvious: explanations, long sentences, directives, markers", () => {
    for (const text of [
      "Retry with backoff because the registry rate-limits bursts",
      "Check that the path exists before reading, since stat may race with the writer and fail later",
      "eslint-disable-next-line no-console",
      "TODO: return the cached value once invalidation works",
      "@ts-expect-error the types lag behind",
      "Constants",
      "The result of this call is cached for the whole session",
    ])
      expect([text, CommentHeuristics.obvious(text)]).toEqual([text, false])
  })

  test("directives and markers are whole words: 'TODO:' is a marker, 'Today …' and 'Nothing …' are prose", () => {
    for (const text of ["TODO: cache it", "NOTE: slow", "eslint-disable-next-line", "@ts-expect-error", "#region io"])
      expect([text, CommentHeuristics.isDirective(text)]).toEqual([text, true])
    for (const text of [
      "Today's entries first",
      "Nothing to flush",
      "Hacky but fast",
      "Notes go last",
      "Regions sorted",
    ])
      expect([text, CommentHeuristics.isDirective(text)]).toEqual([text, false])
  })

  test("tool directives by family are directives: type checkers, linters, formatters, coverage, security scanners", () => {
    for (const text of [
      // Type checkers.
      "pyright: ignore[reportArgumentType]",
      "type: ignore[import]",
      "pyre-fixme[6]",
      "typed: strict",
      "$FlowFixMe",
      "@phpstan-ignore-next-line",
      "@psalm-suppress InvalidArgument",
      // Linters.
      "ruff: noqa",
      "noqa: E501",
      "#nosec G104",
      "lint:ignore SA1019 deprecated but needed",
      "nolint:errcheck",
      "NOLINTNEXTLINE(bugprone-use-after-move)",
      "deno-lint-ignore no-explicit-any",
      "oxlint-disable-line",
      "NOSONAR",
      "shellcheck disable=SC2086",
      "swiftlint:disable:next force_cast",
      "phpcs:ignore",
      "rubocop:disable Metrics/AbcSize",
      "noinspection SpellCheckingInspection",
      "cspell:disable-next-line",
      // Formatters.
      "isort: skip",
      "fmt: off",
      "rustfmt::skip",
      "clang-format off",
      "@formatter:off",
      "prettier-ignore",
      // Coverage.
      "pragma: no cover",
      "pragma: no branch",
      "istanbul ignore next",
      "c8 ignore next",
      "v8 ignore next",
      "LCOV_EXCL_LINE",
      ":nocov:",
      // Security scanners.
      "nosec",
      "nosemgrep: python.lang.security",
      "checkov:skip=CKV_AWS_20",
      "gitleaks:allow",
      "pragma: allowlist secret",
      // Bundlers, runtimes, language servers.
      "@vite-ignore",
      'webpackChunkName: "admin"',
      "@__PURE__",
      "frozen_string_literal: true",
      "language=SQL",
    ])
      expect([text, CommentHeuristics.isDirective(text)]).toEqual([text, true])
    for (const text of [
      "Pragma once is enough here",
      "Typed arrays are faster",
      "Lint the files first",
      "Language model output",
      "Standard output only",
      "Ruffle the entries",
      "Shellchecked below",
    ])
      expect([text, CommentHeuristics.isDirective(text)]).toEqual([text, false])
  })

  test("restates: within 30% Levenshtein of the next line after splitting identifiers and dropping filler", () => {
    expect(CommentHeuristics.normalize("return this.userName;")).toBe("return user name")
    expect(CommentHeuristics.restates("return the result", "return result")).toBe(true)
    expect(CommentHeuristics.restates("get user name", "const userName = getUserName()")).toBe(false)
    expect(CommentHeuristics.restates("return a + b", "return a + b")).toBe(true)
    expect(CommentHeuristics.restates("Set the user name", "setUserName(name)")).toBe(false) // the argument adds a word
    expect(CommentHeuristics.restates("ok", "ok")).toBe(false) // too short to judge
    expect(CommentHeuristics.restates("Cache misses fall back to disk", "return readDisk(key)")).toBe(false)
  })

  test("narration: a narration verb whose words the code repeats, or an obvious pattern; never an explanation", () => {
    const cases: [string, string[], string | undefined][] = [
      ["Parse CLI arguments", ["args = parser.parse_args()"], "plain"],
      ["Load and parse skill content", ["const raw = await readFile(file)", "const skill = parseSkill(raw)"], "plain"],
      ["Display line counts", ['print(f"Lines in {path}: {len(lines)}")'], "plain"],
      ["Setup the runtime", ["get_runtime_cls(config.runtime).setup(config)"], "plain"],
      ["Initialize the counter", [], "plain"],
      ["Path to the sample code base", ['sample_code_base = Path(__file__).parent / "sample"'], "plain"],
      ["Path to the sample code", ['sample_code_base = Path(__file__).parent / "sample"'], "likely"],
      // Two content words without a verb name a case or a group: a heading ("String delimiter").
      ["String delimiter", ['check("a,b", delimiter=str_delim)'], undefined],
      ["If the file is missing, return the default", ["if (!exists) return DEFAULT"], "plain"],
      ["Parse lazily because most commands never need it", ["args = parser.parse_args()"], undefined],
      ["Write the audit event regardless of findings", ["write_audit(event)"], undefined],
      ["Reverse the expected order", ["os.Chtimes(newest, oldest, oldest)"], undefined],
      ["Block pagers", ['GIT_PAGER: "cat",'], undefined],
      ["Import", ['import: $ => seq("import", $.string)'], undefined],
      // A check over an assertion names what it asserts; an outcome or an absence says what the assertion means.
      ["Check for header and main structure", ['self.assertIn("## Announcements", result)'], "likely"],
      ["Check for subcategories (also have a suffix)", ['self.assertIn("basic-setup-", result)'], "likely"],
      ["Verify server succeeded in authenticating", ["assert r.status_code == 200"], undefined],
      ["Verify server didn't authenticate us", ["assert r.status_code == 401"], undefined],
      // A plural of a short code word, and "Helper to …" over the helper.
      ["Validate required vars", ['for var in VERCEL_ORG_ID VERCEL_PROJECT_ID; do if [ -z "${!var}" ]'], "likely"],
      ["Helper to generate bootstrap content", ["const getBootstrapContent = () => {"], "plain"],
      // "Important", "Note", "Warning" mark an explanation as a label ("Important: …"), not as an adjective.
      ["Download important files to local machine", ['print("Downloading files to local machine")'], "plain"],
      ["Download the files. Important: the sandbox expires", ['print("Downloading files")'], undefined],
      // A second clause after a semicolon or a dash adds to the step.
      ["Download with fetch() - Bun handles redirects automatically", ["const response = await fetch(url)"], undefined],
      ["Load .env.local locally; on Railway vars are already injected", ['loadEnv(".env.local")'], undefined],
      ["Reopen the database and read its meta", ["const db = openDatabase(path)", "const meta = db.meta()"], "plain"],
      // An example ("such as …", "like" before a literal) tells what the code handles, which its names do not.
      ['Split dotted ids like "5.1" into parts', ['const parts = id.split(".")'], undefined],
      ["Parse options such as the timeout", ["opts = parse_options(argv)"], undefined],
      ["Split dotted ids into parts", ['const parts = id.split(".")'], "plain"],
      // So does a parenthesis of three content words or more that the code does not hold.
      [
        "Merge built-in servers (auto-enabled by API key, respecting disabled ones)",
        ["servers.merge(builtIn)"],
        undefined,
      ],
      ["Merge built-in servers (builtIn)", ["servers.merge(builtIn)"], "plain"],
      // A reference or a list of examples ending in "etc" in parentheses points past the code.
      ["Apply control flow operators (gt-8tmz.4)", ["formula = applyControlFlow(formula)"], undefined],
      ["Apply control flow operators (#1088, JIRA-12)", ["formula = applyControlFlow(formula)"], undefined],
      ["Resolve formula (inheritance, etc)", ["resolved = resolveFormula(formula)"], undefined],
      ["Apply control flow operators (utf-8)", ["formula = applyControlFlow(formula)"], "plain"],
      // A numbered test case or a phrase in title case is a heading.
      ["Test 9: Verify main branch warning", ['assert_contains "$output" "main branch warning"'], undefined],
      ["Case 2 - parse the empty file", ['parse("")'], undefined],
      ["Read Tool Stories", ["export const ReadTool: Story = { args: { tool: 'read' } }"], undefined],
      ["Read tool stories", ["export const ReadToolStories = readTool.stories()"], "plain"],
      // A lone identifier is a heading, however many words it splits into.
      ["ZodMiniStringFormat", ["export interface ZodMiniStringFormat<Format extends string = string>"], undefined],
      ["API rule: only the final assistant message may be empty", ["const last = i === n - 1"], undefined],
      ["start is an inclusive index", ["let start = 0"], undefined],
      // A step number or a sequencing word before the imperative is passed over.
      ["2. Check that the cache and the index agree", ["if (cache.size !== index.size) fail()"], "plain"],
      ["Also drop the entry from the cache", ["cache.delete(entry.key)"], "plain"],
      // A test comment stating the expectation of the assertion right after it; a reason makes it useful.
      ["Should be trimmed", ["self.assertEqual(result.name, 'x')"], "plain"],
      ["It must not throw", ["expect(() => run()).not.toThrow()"], "plain"],
      ["Should be trimmed because the parser keeps spaces", ["self.assertEqual(result.name, 'x')"], undefined],
      ["Should be trimmed", ["name = name.trim()"], undefined],
      // The expectation's subject may be a noun or two; a longer sentence before the modal is not an expectation.
      ["Result should be joined", ['assert_equal "a\\nb", result'], "plain"],
      ["Architecture mismatch should result in a negative score", ["assert!(score < 0)"], "plain"],
      ["Result should be joined because the runner splits lines", ['assert_equal "a\\nb", result'], undefined],
      ["The first run of the parser should be cached", ["assert cache.hits == 1"], undefined],
      // Up to 12 words when it names two of the assertion's words and sets no condition.
      [
        'It should NOT be our internal "Authentication required" message',
        ['expect(message).not.toContain("Authentication required")'],
        "plain",
      ],
      [
        "The completion should raise an APIConnectionError after exhausting all retries",
        ["with self.assertRaises(APIConnectionError):"],
        undefined,
      ],
      // "Try to …" is the code's `try`: the imperative after it is judged.
      ["Try to load existing", ["existing = self.load_contract()"], "plain"],
      ["Try importing the SDK", ["from insa import sdk"], "plain"],
      ["Shutdown the global watcher", ["watcher.Shutdown()"], "plain"],
      // `Label: detail` narrates when the label is a narration verb phrase and the code repeats most of it.
      ["Build request options: retries off, timeout 5", ["opts = RequestOptions(retries=False, timeout=5)"], "plain"],
      ["Windows: use the local app data folder", ["return env.LOCALAPPDATA"], undefined],
      // A hyphenated compound is a kind, not an explanation ("read-only" holds "only").
      ["Collect names of read-only files", ["names = [f.name for f in files if f.readonly]"], "plain"],
      ["Skip entries without a name", ["if not entry.name:", "continue"], "plain"],
      // Past 12 words, an imperative narrates only when the code repeats six or more of its words.
      [
        "Mock the http client so that its first get call raises a timeout error and its second returns the page",
        ["http_client.get.side_effect = [TimeoutError(), page]"],
        undefined,
      ],
      [
        "Mock the http client get call to raise a timeout error first and return the cached page next",
        ["mock_http_client.get.side_effect = [TimeoutError('timeout'), cached_page]"],
        "plain",
      ],
      // Only the verb's family in the code ("Verify" and an `assert`) says too little: the comment names the meaning.
      ["Verify login worked", ["assert r.status_code == 200"], undefined],
      ["Verify the response status", ["assert r.status_code == 200"], "plain"],
      // Beside or above a regular expression, the comment is an example of what it matches (a trailing comment's code
      // is its own line); the same words over plain code narrate.
      ["git push origin main", ["/git\\s+push\\s+origin\\s+main\\b/,"], undefined],
      ["Match the version number", ["const version = /(?:v)?\\d+\\.\\d+/.exec(tag)"], undefined],
      ["Strip the quotes", ['value = re.sub(r"[^a-z]", "", value)'], undefined],
      ["Push to origin main", ["git.push(origin, main)"], "plain"],
    ]
    for (const [text, code, want] of cases)
      expect([text, CommentHeuristics.narration(text, code)]).toEqual([text, want])
    expect(CommentHeuristics.overlap("Parse CLI arguments", ["args = parser.parse_args()"])).toEqual({
      shared: 2,
      total: 3,
    })
  })

  test("a comment in the third person describes what a declaration does: not narration; the imperative is", () => {
    // "Logs a …", "Returns the …", "Creates the …" is the style of documentation (of an enum member, a function);
    // a step narrated is an imperative ("Log a …").
    expect(CommentHeuristics.obvious("Returns the cached value")).toBe(false)
    expect(CommentHeuristics.obvious("Return the cached value")).toBe(true)
    expect(CommentHeuristics.narration("Logs a cache eviction event.", ["CACHE_EVICTION = 12,"])).toBeUndefined()
    expect(CommentHeuristics.narration("Creates the user record", ["USER_RECORD_CREATED = 3,"])).toBeUndefined()
    expect(CommentHeuristics.narration("Log a cache eviction event", ["logger.log(cacheEviction)"])).toBe("plain")
    // One that repeats its line is still a duplicate (heuristic 3).
    expect(CommentHeuristics.restates("Returns the total", "return total")).toBe(true)
  })

  test("'Require …' narrates loading a module only over code that loads one; over other code it states a requirement (tester's RW3)", () => {
    // fmtlib/fmt c29b64dde7, include/fmt/fmt-c.h.
    const guard = [
      "#  if defined(_MSC_VER) && (!defined(_MSVC_TRADITIONAL) || _MSVC_TRADITIONAL)",
      '#    error "C API requires MSVC 2019+ with /Zc:preprocessor flag."',
      "#  endif",
    ]
    expect(CommentHeuristics.narration("Require modern MSVC with conformant preprocessor.", guard)).toBeUndefined()
    expect(CommentHeuristics.narration("Require the fs module", ['const fs = require("fs")'])).toBe("plain")
    expect(CommentHeuristics.narration("Require json", ["require 'json'"])).toBe("plain")
    expect(CommentHeuristics.narration("Require the utils", ['local utils = require("plenary.utils")'])).toBe("plain")
    // Import and Include keep the PRD's pattern over any code ("Import the CSV data" over `pd.read_csv`).
    expect(CommentHeuristics.narration("Import the CSV data", ["df = pd.read_csv(path)"])).toBe("plain")
    expect(CommentHeuristics.narration("Include hidden files", ["opts.hidden = true"])).toBe("plain")
  })

  test("adds: a step that says when, how or why it runs in words its code lacks says more than its code", () => {
    const cases: [string, string[], boolean][] = [
      // A time clause two or more of whose content words the code lacks; one is the step's object.
      ["Set the theme in localStorage before the page loads", ['localStorage.setItem("theme", "dark")'], true],
      ["Apply the filter before sampling", ["tests = filter_dataset(tests)"], false],
      // A manner the code does not name.
      ["Build the binary once", ["cargo build -p cli --quiet"], true],
      ["Update the state file atomically", ['sed "s/x/y/" "$state" > "$tmp"', 'mv "$tmp" "$state"'], true],
      ["Run the tests in parallel", ["fullyParallel: true,"], false],
      // A purpose with its own subject; "for" after the verb belongs to it.
      ["Seed the session for the worker to find", ["session = Session(id=1)"], true],
      ["Wait for the server to start", ["await server.ready()"], false],
      // A verification of an absence: what a test expects not to happen.
      ["Verify the cache was not written", ["const writes = calls.filter((c) => c[0] === 'write')"], true],
      ["Verify the cache was written", ["expect(cache.write).toHaveBeenCalled()"], false],
      ["Check that the key is not empty", ["if (!key) throw new Error()"], false],
    ]
    for (const [text, code, adds] of cases) expect([text, CommentHeuristics.adds(text, code)]).toEqual([text, adds])
  })

  test("a cross-reference is not narration nor a repeat of its code, whatever words its target shares (tester's X3)", () => {
    // tursodatabase/turso 768559df36, core/translate/optimizer/constraints.rs.
    const code = [
      "    let null_matching = operator.as_ast_operator() == Some(ast::Operator::Is)",
      "        && !is_non_null_literal(constraining_expr);",
      "    let selectivity = estimate_constraint_selectivity(",
    ]
    for (const text of [
      "See [Constraint::null_matching].",
      "See also `Constraint::null_matching`",
      "@see Constraint#null_matching",
      "cf. Constraint null matching",
      "Refer to Constraint::null_matching",
    ]) {
      expect([text, CommentHeuristics.narration(text, code)]).toEqual([text, undefined])
      expect([text, CommentHeuristics.restates(text, "let null_matching = constraint null matching")]).toEqual([
        text,
        false,
      ])
    }
    // "See if …" is a step that checks, judged as before; so is a phrase the code repeats without "See".
    expect(CommentHeuristics.crossReference("See if the constraint is null matching")).toBe(false)
    expect(CommentHeuristics.narration("Constraint null matching", code)).toBe("likely")
  })

  test("commented-out code by line, in the common languages; prose with code words is not code", () => {
    for (const code of [
      "x = compute(y)",
      "fmt.Println(x)",
      "return a + b",
      "from os import path",
      "#include <ncurses.h>",
      "if let Some(ext) = parsed.ext() {",
      "for i in range(10):",
      "items.each do |i|",
      '"Hello World!"',
      "end",
      "assert {'life': 42} == r.json()['json']",
    ])
      expect([code, CommentHeuristics.codeLine(code)]).toEqual([code, true])
    for (const prose of [
      "Compute y and keep it in x.",
      "for compat",
      "import is lazy",
      "Return the result",
      "CTRL-A",
      "assert the invariant holds",
    ])
      expect([prose, CommentHeuristics.codeLine(prose)]).toEqual([prose, false])
    expect(CommentHeuristics.looksLikeCode(["get '/' do", '  "Hello World!"', "end"])).toBe(true)
    expect(
      CommentHeuristics.looksLikeCode(["Binding", "An instruction requiring binding is in one of three states:"]),
    ).toBe(false)
  })

  test("density: annotation lines among added non-blank lines only", () => {
    const kinds = ["comment", "code", "comment", "code", "blank", "code"] as const
    const d = CommentHeuristics.density({
      kinds: [...kinds],
      added: [true, true, false, false, true, true],
      annotations: new Set([0, 2]),
    })
    expect(d).toEqual({ comments: 1, lines: 3, ratio: 1 / 3 })
  })

  test("sensitivity: the PRD's density thresholds, narration counts measured on real history; false is off", () => {
    expect(CommentHeuristics.THRESHOLDS.strict.density).toBe(0.15)
    expect(CommentHeuristics.THRESHOLDS.normal.density).toBe(0.3)
    expect(CommentHeuristics.THRESHOLDS.relaxed.density).toBe(0.5)
    expect([1, 1, 2]).toEqual(
      ["strict", "normal", "relaxed"].map((l) => CommentHeuristics.THRESHOLDS[l as "strict"].obvious),
    )
    expect(CommentHeuristics.Sensitivity.safeParse(false).success).toBe(true)
    expect(CommentHeuristics.Sensitivity.safeParse("loud").success).toBe(false)
    expect(CommentHeuristics.Sensitivity.safeParse(true).success).toBe(false)
  })
})
