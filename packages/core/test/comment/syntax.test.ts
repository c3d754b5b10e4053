import { describe, expect, test } from "bun:test"
import { CommentSyntax } from "../../comment/syntax"

const extract = (file: string, text: string) => CommentSyntax.extract(text.split("\n"), CommentSyntax.forFile(file)!)

describe("comment syntax by file extension", () => {
  test("the PRD's table: // and /* for C-like files, # for scripts, <!-- for markup, /* for CSS, -- for SQL/Lua", () => {
    expect(CommentSyntax.forFile("a.ts")!.line).toEqual(["//"])
    expect(CommentSyntax.forFile("a.PY")!.line).toEqual(["#"])
    expect(CommentSyntax.forFile("a.yml")!.line).toEqual(["#"])
    expect(CommentSyntax.forFile("a.html")!.block).toEqual([["<!--", "-->"]])
    expect(CommentSyntax.forFile("a.css")!.block).toEqual([["/*", "*/"]])
    expect(CommentSyntax.forFile("a.sql")!.line).toEqual(["--"])
    expect(CommentSyntax.forFile("a.lua")!.line).toEqual(["--"])
    expect(CommentSyntax.forFile("Dockerfile")!.line).toEqual(["#"])
    expect(CommentSyntax.forFile("a.unknown")).toBe(CommentSyntax.ANY) // unknown: every syntax
    for (const prose of ["README.md", "notes.txt", "package.json"]) expect(CommentSyntax.forFile(prose)).toBeUndefined()
  })

  test("line comments form paragraphs; a blank line ends one; prefixes are stripped", () => {
    const { comments, kinds } = extract("a.ts", "// Load the file.\n// Then parse it.\n\n// Another\nx()\n")
    expect(comments.map((c) => [c.line, c.end, c.text])).toEqual([
      [0, 1, "Load the file. Then parse it."],
      [3, 3, "Another"],
    ])
    expect(kinds).toEqual(["comment", "comment", "blank", "comment", "code", "blank"])
  })

  test("block comments, JSDoc as doc comments, /* x */ before code makes a code line", () => {
    const { comments, kinds } = extract("a.ts", "/**\n * Adds.\n * @param a first\n */\n/* note */ f()\n/* one */\n")
    expect(comments.map((c) => [c.text, c.doc])).toEqual([
      ["Adds. @param a first", true],
      ["note", false],
      ["one", false],
    ])
    expect(kinds.slice(0, 6)).toEqual(["doc", "doc", "doc", "doc", "code", "comment"])
  })

  test("Python docstrings are doc comments; # comments; a shebang is not a comment", () => {
    const { comments } = extract(
      "a.py",
      '#!/usr/bin/env python\ndef f():\n    """Add things."""\n    # Return it\n    return 1\n',
    )
    expect(comments.map((c) => [c.text, c.doc])).toEqual([
      ["Add things.", true],
      ["Return it", false],
    ])
  })

  test("trailing comments after code, never inside strings or URLs, not `x--`", () => {
    const trailing = (file: string, line: string) => CommentSyntax.trailingComment(line, CommentSyntax.forFile(file)!)
    expect(trailing("a.ts", "x = 1 // set x")).toBe("set x")
    expect(trailing("a.ts", 'const u = "http://a.b/c" // the url')).toBe("the url")
    expect(trailing("a.ts", 'const u = "a // b"')).toBeUndefined()
    expect(trailing("a.ts", "const u = http://x")).toBeUndefined()
    expect(trailing("a.lua", "i = i -- 1")).toBe("1") // in Lua, -- always starts a comment
    expect(trailing("a.lua", "x = 1 -- count")).toBe("count")
    expect(trailing("a.py", "x = {'#': 1}  # map")).toBe("map")
    expect(trailing("a.c", "i--;")).toBeUndefined()
  })

  test("multi-line strings are code: a triple-quoted Python string, a template literal, a Go raw string", () => {
    const py = extract("t.py", 'code = """\n# not a comment\n"""  # noqa\ndef f():\n    """Doc."""\n')
    expect(py.comments.map((c) => [c.text, c.doc, c.trailing])).toEqual([
      ["noqa", false, true],
      ["Doc.", true, false],
    ])
    expect(py.kinds.slice(0, 3)).toEqual(["code", "code", "code"])
    const ts = extract("t.ts", "const sql = `\n  -- pick // them\n  select 1` // query\n")
    expect(ts.comments.map((c) => c.text)).toEqual(["query"])
    const go = extract("t.go", "var usage = `\n// Usage: x\n`\n// Real\nfunc f() {}\n")
    expect(go.comments.map((c) => c.text)).toEqual(["Real"])
  })

  test("here-document bodies are text, never comments: shell, Ruby, Perl, PHP", () => {
    // obra/superpowers tests/explicit-skill-requests/run-haiku-test.sh: a plan written with markdown headings.
    const sh = extract(
      "make-plan.sh",
      [
        "#!/usr/bin/env bash",
        "mkdir -p docs",
        "cat > docs/plan.md <<'EOF' # write the plan",
        "# Create the user model",
        "## Add the auth routes",
        "EOF",
        "# Commit it",
        "cat <<-END",
        "\t# indented body",
        "\tEND",
        'echo "$((1 << 2))" # shift',
        "git add docs/plan.md",
      ].join("\n"),
    )
    expect(sh.comments.map((c) => [c.line, c.text])).toEqual([
      [2, "write the plan"],
      [6, "Commit it"],
      [10, "shift"],
    ])
    expect(sh.kinds.slice(3, 6)).toEqual(["code", "code", "code"])
    const rb = extract("a.rb", "x = <<~HEREDOC.strip # the text\n  # in heredoc\n  HEREDOC\nlist <<item\n# Real\n")
    expect(rb.comments.map((c) => [c.line, c.text])).toEqual([
      [0, "the text"],
      [4, "Real"],
    ])
    const pl = extract("a.pl", 'print <<"END";\n# in heredoc\nEND\n# Real\n')
    expect(pl.comments.map((c) => c.text)).toEqual(["Real"])
    const php = extract("a.php", "<?php\n$s = <<<EOT\n  // in heredoc\n  EOT;\n// Real\n")
    expect(php.comments.map((c) => c.text)).toEqual(["Real"])
  })

  test("Lua long strings and Rust raw strings are text; Rust block comments nest", () => {
    const lua = extract(
      "a.lua",
      "local s = [[\n-- in long string\n]]\nlocal t = [==[ -- x ]] ]==] -- real\n--[[ block\n]]\n",
    )
    expect(lua.comments.map((c) => [c.line, c.text])).toEqual([
      [3, "real"],
      [4, "block"],
    ])
    const rs = extract(
      "a.rs",
      [
        'let u = r##"a "# // still string"##; // real',
        'let v = r#"',
        '// in raw string "quoted" # not its end',
        '"#;',
        "fn f<'a>(x: &'a str) {} // lifetimes",
        "/* a /* b */ c */",
        "let w = 1;",
        "/* outer",
        "/* inner */",
        "still outer */",
        "let z = 2;",
      ].join("\n"),
    )
    expect(rs.comments.map((c) => [c.line, c.end, c.text])).toEqual([
      [0, 0, "real"],
      [4, 4, "lifetimes"],
      [5, 5, "a /* b */ c"],
      [7, 9, "outer /* inner still outer"],
    ])
    expect([rs.kinds[6], rs.kinds[10]]).toEqual(["code", "code"])
    // Not nested in C-like languages without nesting: the comment ends at the first `*/`.
    expect(extract("a.ts", "/* a /* b */\nx()\n").kinds.slice(0, 2)).toEqual(["comment", "code"])
  })
})
