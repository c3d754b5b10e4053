import { describe, expect, test } from "bun:test"
import { AddedLines } from "../../comment/added"
import { CommentCheck } from "../../comment/check"

const SLOP = [
  "// Function to add the numbers",
  "function add(a: number, b: number) {",
  "  // Initialize the sum",
  "  let sum = 0",
  "  // Add a to the sum",
  "  sum += a",
  "  // Add the second number",
  "  sum += b",
  "  // Return the sum",
  "  return sum",
  "}",
].join("\n")

const CLEAN = [
  "function add(a: number, b: number) {",
  "  // Integers only: callers pass counts, and float drift would break the totals test.",
  "  return Math.trunc(a) + Math.trunc(b)",
  "}",
].join("\n")

describe("judging one change", () => {
  test("narrating comments are flagged at every sensitivity that allows them; the PRD note leads", () => {
    const docs = AddedLines.fromWrite("/r/src/add.ts", "", SLOP)
    for (const level of ["strict", "normal", "relaxed"] as const)
      expect(CommentCheck.judge(docs, level)!.flagged).toBe(true)
    const verdict = CommentCheck.judge(docs, "normal")!
    expect(verdict.obvious.map((f) => f.line)).toEqual([1, 3, 5, 7, 9])
    const note = CommentCheck.note([verdict], "/r")
    expect(note.split("\n")[0]).toBe(
      "Note: The generated code contains excessive comments. Consider removing obvious comments.",
    )
    expect(note).toContain("- src/add.ts: 5 of 11 added lines are comments annotating code (45%, over 30%)")
    expect(note).toContain(
      '5 comments restating the code: line 1 "Function to add the numbers", line 3 "Initialize the sum"',
    )
  })

  test("the verdict lists each new comment judged for narration with the rules' reading of it", () => {
    const content = [
      "/** Adds. */",
      "function add(a: number, b: number) {",
      "  // Return the sum",
      "  return a + b // why: ints",
      "}",
    ]
    const verdict = CommentCheck.judge(AddedLines.fromWrite("/r/src/add.ts", "", content.join("\n")), "normal")!
    // The doc comment is documentation, not judged; the two plain comments are, with their code and reading.
    expect(verdict.judged.map((j) => [j.line, j.text, j.trailing, j.narration ?? null])).toEqual([
      [3, "Return the sum", false, "plain"],
      [4, "why: ints", true, null],
    ])
    expect(verdict.judged[0].code).toEqual(["  return a + b // why: ints", "}"])
  })

  test("clean code, prose files and sensitivity false get nothing", () => {
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/a.ts", "", CLEAN), "strict")!.flagged).toBe(false)
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/README.md", "", SLOP), "strict")).toBeUndefined()
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/a.ts", "", SLOP), false)).toBeUndefined()
    expect(
      CommentCheck.note([undefined, CommentCheck.judge(AddedLines.fromWrite("/r/a.ts", "", CLEAN), "normal")], "/r"),
    ).toBe("")
  })

  test("a shell here-document's markdown headings are text: no note at any sensitivity", () => {
    // obra/superpowers tests/explicit-skill-requests/run-haiku-test.sh writes a plan with `cat > … <<'EOF'`.
    const script = [
      "#!/usr/bin/env bash",
      "set -euo pipefail",
      "mkdir -p docs",
      "cat > docs/plan.md <<'EOF'",
      "# Create the user model",
      "Add the fields.",
      "## Add the auth routes",
      "Wire login and logout.",
      "## Add the tests",
      "Cover both routes.",
      "EOF",
      "git add docs/plan.md",
    ].join("\n")
    for (const level of ["strict", "normal", "relaxed"] as const) {
      const verdict = CommentCheck.judge(AddedLines.fromWrite("/p/make-plan.sh", "", script), level)!
      expect([level, verdict.flagged, verdict.named.length, verdict.density.comments]).toEqual([level, false, 0, 0])
    }
  })

  test("only comments the change added are judged: existing ones, even on edited lines, are not", () => {
    // The whole slop block already existed; the edit only renames a variable on two of its lines.
    const after = SLOP.replaceAll("sum", "total")
    const docs = AddedLines.fromEdit("/r/add.ts", SLOP, after)
    const verdict = CommentCheck.judge(docs, "strict")!
    // Comments whose text changed ("Initialize the total") are new; "Add the second number" is untouched, not judged.
    expect(verdict.obvious.map((f) => f.text)).toEqual([
      "Initialize the total",
      "Add a to the total",
      "Return the total",
    ])
    const untouched = CommentCheck.judge(AddedLines.fromEdit("/r/add.ts", SLOP, SLOP.replace("let", "var")), "strict")!
    expect(untouched.flagged).toBe(false)
    expect(untouched.obvious).toEqual([])
  })

  test("a comment that repeats its line is flagged; commented-out code and directives are not", () => {
    const dup = "function f(items: number[]) {\n  items.sort() // items sort\n  return items\n}\n"
    const verdict = CommentCheck.judge(AddedLines.fromEdit("/r/f.ts", "", dup), "normal")!
    expect(verdict.duplicates.map((d) => d.text)).toEqual(["items sort"])
    expect(verdict.reasons.join()).toContain('1 comment repeating the line of code it is on: "items sort"')
    // The next line written out again in a comment is an old version of it: commented-out code.
    const old = "function f(a: number, b: number) {\n  // return a + b\n  return a + b\n}\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/f.ts", "", old), "strict")!.flagged).toBe(false)
    const fine =
      "// eslint-disable-next-line no-console\nconsole.log(x)\n// const old = compute(x);\nconst next = compute(x)\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/f.ts", "", fine), "strict")!.flagged).toBe(false)
  })

  test("trailing tool directives are not annotations: no density note", () => {
    // The tester's tool.py: coverage, security-scanner and type-checker directives on 3 of 9 code lines.
    const tool = [
      "import os",
      "import sys",
      "",
      "def main() -> int:",
      '    if sys.platform == "win32":  # pragma: no cover',
      "        return 1",
      '    path = os.environ.get("CFG")  # nosec',
      "    data = open(path).read()  # pyright: ignore[reportArgumentType]",
      "    print(len(data))",
      "    return 0",
    ].join("\n")
    const verdict = CommentCheck.judge(AddedLines.fromWrite("/p/tool.py", "", tool), "normal")!
    expect([verdict.flagged, verdict.density.comments]).toEqual([false, 0])
    const go =
      "var a = load(1) // #nosec G104\nvar b = load(2) //lint:ignore SA1019 ok\nvar c = load(3) // nolint:gosec\n"
    const goVerdict = CommentCheck.judge(AddedLines.fromWrite("/p/a.go", "", go + "var d = 4\nvar e = 5\n"), "strict")!
    expect([goVerdict.flagged, goVerdict.density.comments]).toEqual([false, 0])
  })

  test("small edits are not judged on density; a license header does not count", () => {
    const small = "// Retry once: the socket is often reset on first use.\nawait send()\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/a.ts", "", small), "strict")!.flagged).toBe(false)
    const licensed =
      "// Copyright 2024 Example Ltd.\n// Licensed under the MIT license.\nexport const a = 1\nexport const b = 2\nexport const c = 3\nexport const d = 4\n"
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/a.ts", "", licensed), "strict")!.density.comments).toBe(0)
    // The word "license" alone does not make a header: this is a step.
    const step = "# Add license information if available\nlicense_info = entry.get('license', '').strip()\n"
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/a.py", "", step), "normal")!.named.map((f) => f.text)).toEqual([
      "Add license information if available",
    ])
  })

  test("runs of narrations, the share among non-doc comments, a likely narration beside a plain one: in changes written as sentences", () => {
    const notes = Array.from({ length: 8 }, (_, i) => [
      `// Indent ${i} marks a nested entry (format 2).`,
      `f${i}()`,
      "",
    ])
    const steps = [
      "// Save the previous server",
      "servers.push(current)",
      "// Start a new server",
      "current = { name }",
    ]
    const named = (lines: string[]) =>
      CommentCheck.judge(AddedLines.fromEdit("/r/d.ts", "", lines.join("\n")), "normal")!.named.map((f) => f.text)
    expect(named([...notes.flat(), ...steps])).toEqual(["Save the previous server", "Start a new server"])
    // Apart, they are two of ten comments: under the share.
    expect(
      named([...notes.slice(0, 4).flat(), ...steps.slice(0, 2), "", ...notes.slice(4).flat(), ...steps.slice(2)]),
    ).toEqual([])
    // Doc comments do not dilute the share of a change written in sentences; they do in a lower-case one.
    const api = ["/** Parses the catalog. */", "export function parse() {", "  run()", "}", ""]
    const body = ["// Deeper indentation marks a nested entry (format 2).", "if (depth > 2) nest()", ""]
    const withDocs = [...api, ...api, ...api, ...body, "// Save the previous server", "servers.push(current)"]
    expect(named(withDocs)).toEqual(["Save the previous server"])
    const lowerDocs = withDocs.map((l) => l.replace("// Deeper", "// deeper").replace("// Save", "// save"))
    expect(named(lowerDocs)).toEqual([])
    // A likely narration in a change whose every comment narrates counts when one of them narrates plainly; alone,
    // one word in common with its code shows no style (named at strict only).
    const lone = "# Raise an exception for HTTP errors\nresponse.raise_for_status()\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/b.py", "", lone), "normal")!.named).toEqual([])
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/b.py", "", lone), "strict")!.named).toHaveLength(1)
    const pair = "# Fetch the badge data\ndata = fetch_badge_data(url)\n\n" + lone
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/b.py", "", pair), "normal")!.named.map((f) => f.text)).toEqual([
      "Fetch the badge data",
      "Raise an exception for HTTP errors",
    ])
    // Terse lower-case step notes are a style of well-commented human code.
    const lower = steps.map((l) => l.replace("// S", "// s"))
    expect(named([...notes.flat(), ...lower])).toEqual([])
  })

  test("a step that says more than its code is not named, but counts for the change's style", () => {
    const why = (i: number) => [`// Entry ${i} is kept: the index refers to it by position.`, `keep(${i})`, ""]
    const load = ["// Load the settings file", "const settings = loadSettings(file)", ""]
    const atomic = ["// Update the state file atomically", "writeFileSync(tmp, data)", "renameSync(tmp, state)", ""]
    const named = (lines: string[]) =>
      CommentCheck.judge(AddedLines.fromEdit("/r/s.ts", "", lines.join("\n")), "normal")!.named.map((f) => f.text)
    // Two steps among six comments make the share (a third); only the one that restates its code is named.
    expect(named([...load, ...why(1), ...why(2), ...atomic, ...why(3), ...why(4)])).toEqual(["Load the settings file"])
    // Alone, the step that says how it runs names nothing.
    expect(named([...why(1), ...why(2), ...atomic, ...why(3)])).toEqual([])
  })

  test("the documents of one file are judged together: one verdict, one note line per file", () => {
    const docs = [
      ...AddedLines.fromEdit("/r/a.ts", "", "// Initialize the count\nlet count = 0"),
      ...AddedLines.fromEdit("/r/a.ts", "", "// Increment the count\ncount++"),
      ...AddedLines.fromEdit("/r/a.ts", "", "// Return the count\nreturn count"),
    ]
    const verdict = CommentCheck.judge(docs, "normal")!
    expect(verdict.obvious).toHaveLength(3)
    expect(CommentCheck.note([verdict], "/r").split("\n")).toHaveLength(2)
  })

  test("one narrating comment in an edit is enough at normal; an explanation with the same verb is not", () => {
    const narrating = "// Parse CLI arguments\nconst args = parser.parseArgs(argv)\nrun(args)\n"
    const verdict = CommentCheck.judge(AddedLines.fromEdit("/r/cli.ts", "", narrating), "normal")!
    expect(verdict.flagged).toBe(true)
    expect(verdict.named.map((f) => f.text)).toEqual(["Parse CLI arguments"])
    const explaining =
      "// Parse lazily: most commands never read their arguments\nconst args = () => parser.parseArgs(argv)\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/cli.ts", "", explaining), "strict")!.flagged).toBe(false)
  })

  test("likely narrations count at normal when two or more make up two fifths of the change's comments", () => {
    const steps = [
      "// Prepare the rows for export",
      "const rows = table.map(toRow)",
      "",
      "// Apply the filter before sampling",
      "const kept = filterRows(rows)",
      "",
      "// Region codes follow the 2019 census, not ISO 3166.",
      "const region = census[code]",
    ]
    const verdict = CommentCheck.judge(AddedLines.fromEdit("/r/e.ts", "", steps.join("\n")), "normal")!
    expect(verdict.named.map((f) => f.text)).toEqual([
      "Prepare the rows for export",
      "Apply the filter before sampling",
    ])
    const one = [
      ...steps.slice(0, 3),
      "// Sampling is uniform: the export must not favour large regions.",
      ...steps.slice(4),
    ]
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/e.ts", "", one.join("\n")), "normal")!.named).toEqual([])
    // Two likely ones among five comments are two fifths; among six, less.
    const likely = steps.slice(0, 6)
    const notes = ["// Rows are sorted by census area.", "x()", "", "// Census codes are stable.", "y()", ""]
    const five = [...likely, ...notes, "// Areas without rows stay empty.", "z()"]
    const named = (lines: string[]) =>
      CommentCheck.judge(AddedLines.fromEdit("/r/e.ts", "", lines.join("\n")), "normal")!.named.map((f) => f.text)
    expect(named(five)).toEqual(["Prepare the rows for export", "Apply the filter before sampling"])
    expect(named([...five, "", "// Empty areas are listed last.", "w()"])).toEqual([])
  })

  test("an existing comment only re-punctuated, re-cased, re-spaced, re-indented, moved or re-wrapped is not new (tester's RW3)", () => {
    // fmtlib/fmt c29b64dde7 ("Cleanup the C API"), include/fmt/fmt-c.h: a full stop added, a blank line before it.
    const code = [
      "#  if defined(_MSC_VER) && (!defined(_MSVC_TRADITIONAL) || _MSVC_TRADITIONAL)",
      '#    error "C API requires MSVC 2019+ with /Zc:preprocessor flag."',
      "#  endif",
    ].join("\n")
    const fmt = AddedLines.fromEdit(
      "/r/include/fmt/fmt-c.h",
      `// Require modern MSVC with conformant preprocessor\n${code}`,
      `\n// Require modern MSVC with conformant preprocessor.\n${code}`,
    )
    const body = "  let sum = 0\n  sum += a\n  return sum"
    const edits: [string, string, string][] = [
      ["fmt-c.h: a full stop", "", ""],
      ["re-cased", `  // return the sum\n${body}`, `  // Return the sum\n${body}`],
      ["re-spaced after //", `  //Return the sum\n${body}`, `  // Return the sum\n${body}`],
      ["spaces inside", `  // Return the  sum\n${body}`, `  // Return the sum\n${body}`],
      ["punctuation changed", `  // Return the sum.\n${body}`, `  // Return the sum:\n${body}`],
      [
        "re-indented into a block",
        `// Initialize the sum\nlet sum = 0\n// Return the sum\nreturn sum`,
        `if (ok) {\n  // Initialize the sum\n  let sum = 0\n  // Return the sum\n  return sum\n}`,
      ],
      [
        "moved a few lines",
        `// Initialize the sum\nlet sum = 0\nlet n = 1\nf(n)`,
        `let n = 1\nf(n)\n// Initialize the sum\nlet sum = 0`,
      ],
      [
        "re-wrapped over other lines",
        `// Initialize the sum and the count of\n// the items\nlet sum = 0, count = 0`,
        `// Initialize the sum\n// and the count of the items\nlet sum = 0, count = 0`,
      ],
      [
        "moved from trailing to its own line",
        `let sum = 0 // Initialize the sum`,
        `// Initialize the sum\nlet sum = 0`,
      ],
    ]
    for (const [name, before, after] of edits) {
      const docs = name.startsWith("fmt") ? fmt : AddedLines.fromEdit("/r/add.ts", before, after)
      for (const level of ["strict", "normal", "relaxed"] as const) {
        const verdict = CommentCheck.judge(docs, level)!
        expect([name, level, verdict.flagged, verdict.judged]).toEqual([name, level, false, []])
      }
    }
    // A patch that re-wraps a comment around a line it leaves as it was: the section's old text holds the comment
    // whole (its context line included), so the re-wrapped comment is the old one.
    const patch = [
      "*** Begin Patch",
      "*** Update File: add.ts",
      "@@",
      "-// Initialize the sum and the",
      "+// Initialize the sum and",
      "+// the",
      " // count of the items",
      "-// before",
      "-// the loop",
      "+// before the loop.",
      " let sum = 0, count = 0",
      "*** End Patch",
    ].join("\n")
    expect(CommentCheck.judge(AddedLines.fromPatch(patch, "/r"), "strict")!.judged).toEqual([])
    // A changed word makes a new comment, judged as before.
    const changed = CommentCheck.judge(
      AddedLines.fromEdit("/r/add.ts", `  // Return the sum.\n${body}`, `  // Return the total\n${body}`),
      "normal",
    )!
    expect(changed.named.map((f) => f.text)).toEqual(["Return the total"])
    // fmt's comment written new states a requirement of the `#if … #error` below it, not a narrated step: no note at
    // normal (`heuristics.test.ts › 'Require …' narrates loading a module only over code that loads one`).
    const fresh = CommentCheck.judge(
      AddedLines.fromEdit(
        "/r/include/fmt/fmt-c.h",
        code,
        `// Require modern MSVC with conformant preprocessor.\n${code}`,
      ),
      "normal",
    )!
    expect([fresh.judged.length, fresh.flagged]).toEqual([1, false])
  })

  test("a directive appended after an existing comment adds no comment: the old text is not judged again (tester's X1)", () => {
    // modelcontextprotocol/python-sdk 89e9c43acf ("Get baseline 100% clean coverage"), tests/server/
    // test_streamable_http_manager.py: `  # pragma: no branch` appended to four lines, one already commented.
    const before = [
      "    # Extract session ID from response headers",
      "    session_id = None",
      "    for msg in sent_messages:",
      '        if msg["type"] == "http.response.start":',
      '            for header_name, header_value in msg.get("headers", []):',
      "                if header_name.decode().lower() == MCP_SESSION_ID_HEADER.lower():",
      "                    session_id = header_value.decode()",
      "                    break",
      "            if session_id:  # Break outer loop if session_id is found",
      "                break",
    ]
    const after = before.map((l, i) => ([2, 3, 4, 8].includes(i) ? l + "  # pragma: no branch" : l))
    for (const level of ["strict", "normal", "relaxed"] as const) {
      const verdict = CommentCheck.judge(AddedLines.fromEdit("/r/t.py", before.join("\n"), after.join("\n")), level)!
      expect(verdict.flagged).toBe(false)
      expect(verdict.judged).toEqual([])
    }
    // Every directive family, after a trailing comment or a comment line of its own, in Python, Go, TypeScript, Ruby.
    const cases: [string, string, string][] = [
      ["a.py", "if session_id:  # stop once found", "  # pragma: no cover"],
      ["a.py", "x = load(path)  # Load the config", "  # type: ignore[arg-type]"],
      ["a.py", "import os  # Import os", "  # noqa: F401"],
      ["a.go", "\tdefer f.Close() // close the file when done", " //nolint:errcheck"],
      [
        "a.ts",
        "  return value as any // Return the value",
        " // eslint-disable-line @typescript-eslint/no-explicit-any",
      ],
      ["a.ts", "  // Return the value", " // @ts-expect-error"],
      ["a.rb", "  x = compute # Compute x", " # rubocop:disable Lint/UselessAssignment"],
    ]
    for (const [file, line, directive] of cases) {
      const verdict = CommentCheck.judge(
        AddedLines.fromEdit("/r/" + file, line + "\nz()", line + directive + "\nz()"),
        "strict",
      )!
      expect([file, verdict.judged]).toEqual([file, []])
    }
    // A new comment before a directive is judged on its own text, without the directive.
    const fresh = CommentCheck.judge(
      AddedLines.fromEdit("/r/a.py", "", "load(path)  # Load the path  # type: ignore"),
      "normal",
    )!
    expect(fresh.named.map((f) => f.text)).toEqual(["Load the path"])
  })

  test("a trailing comment holding runs of spaces is compared with its code, not with its own line; the note says which line", () => {
    // The comment's text has its whitespace collapsed; its line holds it with two spaces inside. Before, the code it
    // was compared with was the whole line (the comment included), so it "repeated" itself.
    const line = "result = fetch()  # Because the upstream API  rate-limits us, results are cached for an hour"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/a.py", "", line), "strict")!.judged[0]).toMatchObject({
      code: ["result = fetch()  "],
      duplicate: false,
    })
    const dup = "function f(items: number[]) {\n  items.sort() // items  sort\n  return items\n}\n"
    const verdict = CommentCheck.judge(AddedLines.fromEdit("/r/f.ts", "", dup), "normal")!
    expect(verdict.reasons.join()).toContain('1 comment repeating the line of code it is on: "items sort"')
  })

  test("a cross-reference above code whose names it repeats gets no note (tester's X3)", () => {
    // tursodatabase/turso 768559df36, a hunk of core/translate/optimizer/constraints.rs as an edit.
    const before = [
      "    let table_column = table_col_pos.and_then(|pos| table_reference.table.columns().get(pos));",
      "    let selectivity = estimate_constraint_selectivity(",
      "        schema,",
    ]
    const after = [
      before[0],
      "    // See [Constraint::null_matching].",
      "    let null_matching = operator.as_ast_operator() == Some(ast::Operator::Is)",
      "        && !is_non_null_literal(constraining_expr);",
      ...before.slice(1),
    ]
    for (const level of ["strict", "normal", "relaxed"] as const)
      expect(
        CommentCheck.judge(AddedLines.fromEdit("/r/constraints.rs", before.join("\n"), after.join("\n")), level)!
          .flagged,
      ).toBe(false)
  })

  test("Go and Ruby comments right above a declaration are documentation, not narration", () => {
    const go = "// NewServer creates a new server.\nfunc NewServer() *Server {\n\treturn &Server{}\n}\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/s.go", "", go), "strict")!.flagged).toBe(false)
    const ts = "// Create a new server\nfunction newServer() {\n  return new Server()\n}\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/s.ts", "", ts), "normal")!.flagged).toBe(true)
    // Ruby's methods and attributes are documented in class bodies: indented, still documentation.
    const rb = "class Server\n  # Returns the port the server listens on.\n  def port\n    @port\n  end\nend\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/s.rb", "", rb), "strict")!.judged).toEqual([])
  })

  test("Lua `---` doc comments above a function, a module field or a table field are documentation; `--` ones are judged (tester's RW4)", () => {
    // nvim-lua/plenary.nvim 18da662145, lua/plenary/profile.lua: `---stop profiling` over `profile.stop = p.stop()`.
    const documented: string[] = [
      "local profile = {}\n\n---stop profiling\nprofile.stop = p.stop()\n",
      "local M = {}\n\n--- Get the buffer name\nfunction M.get_name(bufnr)\n  return vim.api.nvim_buf_get_name(bufnr)\nend\n",
      "---Get the buffer name\nlocal function get_name(bufnr)\n  return vim.api.nvim_buf_get_name(bufnr)\nend\n",
      "--- Get the buffer name\nM.get_name = function(bufnr)\n  return vim.api.nvim_buf_get_name(bufnr)\nend\n",
      "local M = {}\nfunction M.setup()\n  --- Get the buffer name\n  local function get_name(bufnr)\n    return nvim_buf_get_name(bufnr)\n  end\nend\n",
      "--- Create the config\nlocal config = {\n  --- Set the timeout\n  timeout = 30,\n  --- Set the retries\n  retries = 3,\n}\n",
    ]
    for (const src of documented)
      for (const level of ["strict", "normal", "relaxed"] as const)
        expect([src, level, CommentCheck.judge(AddedLines.fromWrite("/r/a.lua", "", src), level)!.judged]).toEqual([
          src,
          level,
          [],
        ])
    // A plain `--` comment above a function is not LDoc documentation: judged, and this one narrates.
    const plain =
      "local M = {}\n\n-- Get the buffer name\nfunction M.get_name(bufnr)\n  return nvim_buf_get_name(bufnr)\nend\n"
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/a.lua", "", plain), "normal")!.flagged).toBe(true)
    // `---` over a statement in a function body documents nothing: judged.
    const body =
      "function M.f(bufnr)\n  --- Get the buffer name\n  local name = vim.api.nvim_buf_get_name(bufnr)\n  return name\nend\n"
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/a.lua", "", body), "normal")!.named.map((f) => f.text)).toEqual([
      "Get the buffer name",
    ])
  })

  test("a section banner is a heading, not narration, in every language (tester's RW4)", () => {
    // nvim-lua/plenary.nvim 08c0eabcb1, lua/plenary/curl.lua.
    const curl = [
      "local parse = {}",
      "",
      "-- Parse Request -------------------------------------------",
      "------------------------------------------------------------",
      "parse.request = function(opts)",
      "  return opts",
      "end",
      "",
      "-- Parse response ------------------------------------------",
      "------------------------------------------------------------",
      "parse.response = function(lines, dump_path, code)",
      "  return lines",
      "end",
    ].join("\n")
    const cases: [string, string][] = [
      ["curl.lua", curl],
      ["a.ts", "// Parse request\n// ---------------\nexport function parseRequest(req: Request) {\n  return req\n}\n"],
      ["a.py", "# Parse request\n# ===============\ndef parse_request(req):\n    return req\n"],
      ["b.py", "# Parse request ====================\ndef parse_request(req):\n    return req\n"],
    ]
    for (const [file, src] of cases)
      for (const level of ["strict", "normal", "relaxed"] as const) {
        const verdict = CommentCheck.judge(AddedLines.fromWrite("/r/" + file, "", src), level)!
        expect([file, level, verdict.flagged, verdict.judged.every((j) => j.heading)]).toEqual([
          file,
          level,
          false,
          true,
        ])
      }
    // The same words without the rule narrate, as before.
    const plain = "// Parse the request\nexport function parseRequest(req: Request) {\n  return req\n}\n"
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/a.ts", "", plain), "normal")!.flagged).toBe(true)
  })

  test("Go: a comment above a var or type inside a function body is judged; godoc reads top-level ones only (tester's X2)", () => {
    const body = [
      "\t// Create the buffer",
      "\tvar buf bytes.Buffer",
      "\t// Write the header",
      "\tbuf.WriteString(header)",
      "\t// Define the result",
      "\tvar result string",
      "\t// Return the result",
      "\treturn nil",
    ].join("\n")
    const verdict = CommentCheck.judge(AddedLines.fromEdit("/r/internal/x.go", "\treturn nil", body), "normal")!
    expect(verdict.named.map((f) => f.text)).toEqual([
      "Create the buffer",
      "Write the header",
      "Define the result",
      "Return the result",
    ])
    // The same comments over top-level declarations are their documentation.
    const top =
      "// Buffer holds the output.\nvar Buffer bytes.Buffer\n\n// Result is the rendered text.\ntype Result string\n"
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/x.go", "", top), "strict")!.judged).toEqual([])
  })

  test("C function header comments (style(9)) are documentation at every sensitivity; narration in a body is not", () => {
    // tmux/tmux grid.c at d13b69ece4eda6fba458711f514db9dd4dfe326c: a comment above every function definition.
    const grid = [
      "/* Get line time. */",
      "time_t",
      "grid_line_time(const struct grid_line *gl)",
      "{",
      "\tif (gl->time == 0)",
      "\t\treturn (0);",
      "\treturn (start_time.tv_sec + gl->time - 1);",
      "}",
      "",
      "/* Set line time. */",
      "static void",
      "grid_line_set_time(struct grid_line *gl)",
      "{",
      "\tgl->time = current_time - start_time.tv_sec + 1;",
      "}",
    ]
    for (const level of ["strict", "normal", "relaxed"] as const) {
      const verdict = CommentCheck.judge(AddedLines.fromWrite("/r/grid.c", "", grid.join("\n")), level)!
      expect(verdict.flagged).toBe(false)
      expect(verdict.density.comments).toBe(0)
    }
    // The same comment over a statement in a body still narrates, and a prototype is not a definition.
    const body = ["void", "f(struct grid *gd)", "{", "\t/* Get the line time. */", "\tt = grid_line_time(gl);", "}"]
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/f.c", "", body.join("\n")), "normal")!.flagged).toBe(true)
    const proto = "/* Get the line time. */\ntime_t grid_line_time(const struct grid_line *);\n"
    expect(CommentCheck.judge(AddedLines.fromWrite("/r/grid.h", "", proto), "normal")!.flagged).toBe(true)
  })

  test("a comment heading a group of test blocks is a heading, not narration, though the tests repeat its words", () => {
    // Shopify/roast test/roast/cogs/chat/config_test.rb at 0fa280457da8d84ce97e4cbf1d3308d48957d36e (shortened).
    const test = (name: string, body: string) => [`    test "${name}" do`, `      ${body}`, "    end", ""]
    const lines = [
      "class ConfigTest < ActiveSupport::TestCase",
      "    # API key configuration tests",
      ...test("api_key sets api key value", '@config.api_key("test-key-123")'),
      ...test("use_api_key_from_environment! clears explicit api key", "@config.use_api_key_from_environment!"),
      ...test("valid_api_key! raises when no api key provided", "assert_raises { @config.valid_api_key! }"),
      "    # Base URL configuration tests",
      ...test("base_url sets base url value", '@config.base_url("https://custom.api.com/v1")'),
      ...test("valid_base_url returns the configured url", "assert_equal nil, @config.valid_base_url"),
      "end",
    ]
    for (const level of ["strict", "normal", "relaxed"] as const)
      expect(CommentCheck.judge(AddedLines.fromWrite("/r/config_test.rb", "", lines.join("\n")), level)!.named).toEqual(
        [],
      )
    // The same comment glued to code above it is a step, judged as before.
    const glued = lines.map((l, i) => (i === lines.indexOf("    # Base URL configuration tests") - 1 ? "    x = 1" : l))
    const named = CommentCheck.judge(AddedLines.fromWrite("/r/config_test.rb", "", glued.join("\n")), "normal")!.named
    expect(named.map((f) => f.text)).toEqual(["Base URL configuration tests"])
  })

  test("a heading added among a list's own headings is a heading at every sensitivity (tester's X4)", () => {
    // modelcontextprotocol/python-sdk 837ef904f, src/mcp-types/mcp_types/__init__.py, as an edit of `__all__`.
    const before = [
      '    "CLIENT_CAPABILITIES_META_KEY",',
      '    "LOG_LEVEL_META_KEY",',
      "    # Type aliases and variables",
      '    "CORE_RESULT_TYPES",',
    ]
    const after = [
      ...before.slice(0, 2),
      "    # Reserved result _meta keys",
      '    "SERVER_INFO_META_KEY",',
      ...before.slice(2),
    ]
    for (const level of ["strict", "normal", "relaxed"] as const) {
      const docs = AddedLines.fromEdit("/r/__init__.py", before.join("\n"), after.join("\n"))
      const verdict = CommentCheck.judge(docs, level)!
      expect(verdict.flagged).toBe(false)
      expect(verdict.judged.map((j) => [j.text, j.heading])).toEqual([["Reserved result _meta keys", true]])
    }
    // Narration over one entry each is still named.
    const each = [
      "payload = {",
      "    # Set the model name",
      '    "model": model_name,',
      "    # Set the temperature",
      '    "temperature": temperature,',
      "}",
    ]
    expect(CommentCheck.judge(AddedLines.fromEdit("/r/a.py", "", each.join("\n")), "normal")!.named.length).toBe(2)
  })

  test("dense comments that each say why are not held against a change; dense ones that narrate are (tester's R-C3)", () => {
    const levels = ["strict", "normal", "relaxed"] as const
    const judge = (docs: AddedLines.Document[], level: (typeof levels)[number]) => CommentCheck.judge(docs, level)!
    // pallets/click src/click/termui.py at a09c1c655eef3d43181eb46036b66cf058d72df4: three notes on why each branch
    // exists, 5 of 13 added lines.
    const termui = AddedLines.fromEdit(
      "/r/src/click/termui.py",
      '                echo(_("Error: The value you entered was invalid."), err=err)',
      [
        "                repr_val = repr(value)",
        "                if repr_val in e.message:",
        "                    # Built-in type pattern: mask the repr'd value.",
        `                    msg = e.message.replace(repr_val, "'***'")`,
        "                elif value in e.message:",
        "                    # Raw value found: could be a coincidental or",
        "                    # unquoted match. Ambiguous, use generic.",
        '                    msg = _("The value you entered was invalid.")',
        "                else:",
        "                    # Value not found: show as-is, assuming custom",
        "                    # types with hide_input=True avoid leaking input.",
        "                    msg = e.message",
        "",
        '                echo(_("Error: {msg}").format(msg=msg), err=err)',
      ].join("\n"),
    )
    // honojs/hono src/helper/css/common.ts at cd3f6f7194f0e5c9d4b26ae0cf232018d0f388fc (a security fix, two hunks).
    const css = [
      ...AddedLines.fromEdit(
        "/r/src/helper/css/common.ts",
        "const isValidClassName = (name: string): boolean => /^-?[_a-zA-Z][_a-zA-Z0-9-]*$/.test(name)\n",
        [
          "const isValidClassName = (name: string): boolean => /^-?[_a-zA-Z][_a-zA-Z0-9-]*$/.test(name)",
          "",
          "// `<`, `{`, `}` never appear in valid class names but can break out of a <style> element",
          "// or inject a CSS rule when an external cx() class name is used as a selector.",
          "const hasUnsafeSelectorChar = (name: string): boolean => /[<{}]/.test(name)",
          "",
        ].join("\n"),
      ),
      ...AddedLines.fromEdit(
        "/r/src/helper/css/common.ts",
        "        [EXTERNAL_CLASS_NAMES]: [arg],",
        [
          "        // drop names that are unsafe to emit as a selector",
          "        [EXTERNAL_CLASS_NAMES]: hasUnsafeSelectorChar(arg) ? [] : [arg],",
        ].join("\n"),
      ),
    ]
    // pallets/click tests/test_utils/test_style.py at 71f2bafa541e7f798834e74076786ff4281ac83e: labels of
    // parametrised cases, one citing a standard.
    const style = AddedLines.fromEdit(
      "/r/tests/test_utils/test_style.py",
      '@pytest.mark.parametrize(("text", "expect"), [("\\x1b[?25lx y\\x1b[?25h", "x y")])',
      [
        "@pytest.mark.parametrize(",
        '    ("text", "expect"),',
        "    [",
        '        ("\\x1b[?25lx y\\x1b[?25h", "x y"),',
        "        # Colon-delimited true-color SGR (ISO 8613-6).",
        '        ("\\x1b[38:2:255:0:0mx y\\x1b[0m", "x y"),',
        "        # 256-color with colon sub-parameters.",
        '        ("\\x1b[38:5:200mx y\\x1b[0m", "x y"),',
        "        # SGR mouse reporting.",
        '        ("\\x1b[<0;1;1Mx y\\x1b[<0;1;1m", "x y"),',
        "        # Intermediate byte before the final byte.",
        '        ("\\x1b[0 qx y", "x y"),',
        "        # Non-letter final byte.",
        '        ("x\\x1b[3~y", "xy"),',
        "    ],",
        ")",
      ].join("\n"),
    )
    // Shopify/roast test/roast/cogs/agent/config_test.rb at f792e1eaa7f527260214309b7113d512dc0e037e (three of its four
    // tests): the set-up's purpose, 3 of 7 added lines.
    const block = (name: string, body: string[]) => [`        test "${name}" do`, ...body, "        end", ""]
    const [enable, disable, skip] = [
      "apply_permissions! enables",
      "no_apply_permissions! disables",
      "skip_permissions! is",
    ]
    const purpose = "          # ensure that configured value is initially the opposite of what we want to test"
    const roastBefore = [
      ...block(enable, ["          @config.apply_permissions!", "", "          assert @config.apply_permissions?"]),
      ...block(disable, ["          @config.apply_permissions!", "          @config.no_apply_permissions!"]),
      ...block(skip, ["          @config.apply_permissions!", "          @config.skip_permissions!"]),
    ]
    const roastAfter = [
      ...block(enable, [
        purpose,
        "          @config.no_apply_permissions!",
        "          refute @config.apply_permissions?",
        "",
        "          @config.apply_permissions!",
        "",
        "          assert @config.apply_permissions?",
      ]),
      ...block(disable, [
        purpose,
        "          @config.apply_permissions!",
        "          assert @config.apply_permissions?",
        "",
        "          @config.no_apply_permissions!",
      ]),
      ...block(skip, [
        purpose,
        "          @config.apply_permissions!",
        "          assert @config.apply_permissions?",
        "",
        "          @config.skip_permissions!",
      ]),
    ]
    const roast = AddedLines.fromWrite(
      "/r/test/roast/cogs/agent/config_test.rb",
      roastBefore.join("\n"),
      roastAfter.join("\n"),
    )
    for (const [name, docs, dense] of [
      ["termui", termui, { comments: 5, lines: 13 }],
      ["css", css, { comments: 3, lines: 5 }],
      ["style", style, { comments: 5, lines: 16 }],
      ["roast", roast, { comments: 3, lines: 7 }],
    ] as const)
      for (const level of levels) {
        const verdict = judge(docs, level)
        // Still counted as annotations (the figures the tester's notes showed); not held against the change.
        expect([name, level, verdict.density.comments, verdict.density.lines]).toEqual([
          name,
          level,
          dense.comments,
          dense.lines,
        ])
        expect([name, level, verdict.flagged, verdict.reasons]).toEqual([name, level, false, []])
      }
    // Dense comments one of which narrates: the density note stands, though one narration in four is under the share.
    const narrated = [
      "def load(path):",
      "    # Open the file",
      "    handle = open(path)",
      "    # tolerate a BOM from Windows editors",
      '    text = handle.read().lstrip("\\ufeff")',
      "    # one record per line",
      "    rows = text.splitlines()",
      "    # header row first",
      "    return rows[1:]",
    ].join("\n")
    const verdict = judge(AddedLines.fromWrite("/r/load.py", "", narrated), "normal")
    expect(verdict.named).toEqual([])
    expect(verdict.reasons).toEqual(["4 of 9 added lines are comments annotating code (44%, over 30%)"])
  })
})
