import { describe, expect, test } from "bun:test"
import { SecurityEdit } from "../../security/edit"
import { SecurityPatch } from "../../security/patch"
import { SecuritySegments } from "../../security/segments"

const env = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")
const parse = (text: string, directory?: string) => SecurityPatch.parse(text, { directory })
const problems = (text: string, directory?: string) => parse(text, directory).problems.join("\n")
const only = (text: string) => {
  const { files } = parse(text)
  expect(files).toHaveLength(1)
  return files[0]
}
const derive = (patch: string, current: string, version: SecurityPatch.Version) =>
  SecurityPatch.derive(only(patch), current, version)
const content = (patch: string, current: string, version: SecurityPatch.Version) => {
  const d = derive(patch, current, version)
  return d.ok ? d.content : `FAIL: ${d.reason}`
}

const MARKERS = [{ start: "@locked-start", end: "@locked-end" }]
const touches = (current: string, patch: string, side?: "source" | "destination") =>
  SecurityEdit.touches(current, { kind: "patch", file: only(patch), side }, SecuritySegments.find(current, MARKERS))
const LOCKED = ["top", "// @locked-start", "const key = 'k1'", "// @locked-end", "bottom", ""].join("\n")

describe("SecurityPatch.parse: OpenCode's reading", () => {
  test("an ordinary patch: add, update with context and end-of-file marker, delete; nothing to refuse", () => {
    const text = env(
      "*** Add File: docs/new.md",
      "+# New",
      "+",
      "*** Update File: src/app.ts",
      "@@ function main() {",
      " const a = 1",
      "-const b = 2",
      "+const b = 3",
      "*** End of File",
      "*** Delete File: old.txt",
    )
    const { files, problems } = parse(text, "/repo")
    expect(problems).toEqual([])
    expect(files).toEqual([
      { change: "add", path: "docs/new.md", chunks: [], content: "# New\n", line: 2, core: true },
      {
        change: "update",
        path: "src/app.ts",
        chunks: [
          {
            context: "function main() {",
            old: ["const a = 1", "const b = 2"],
            new: ["const a = 1", "const b = 3"],
            eof: true,
          },
        ],
        line: 5,
        core: true,
      },
      { change: "delete", path: "old.txt", chunks: [], line: 11, core: true },
    ])
  })

  test("a move keeps its destination; the 1.18 core stack, which rejects moves, is marked as not applying it", () => {
    const file = only(env("*** Update File: a.txt", "*** Move to: secrets/a.txt", "@@", "-x", "+y"))
    expect(file).toMatchObject({ change: "move", path: "a.txt", to: "secrets/a.txt", core: false })
    expect(SecurityPatch.resolve("/repo", file.to!)).toBe("/repo/secrets/a.txt")
    expect(parse(env("*** Update File: a.txt", "*** Move to: secrets/a.txt", "@@", "-x", "+y")).problems).toEqual([])
  })

  test("paths resolve like path.resolve: absolute kept, no ~ expansion, .. collapsed", () => {
    expect(SecurityPatch.resolve("/repo", "/etc/x")).toBe("/etc/x")
    expect(SecurityPatch.resolve("/repo", "~/x")).toBe("/repo/~/x")
    expect(SecurityPatch.resolve("/repo", "~/../.opencode-security.json")).toBe("/repo/.opencode-security.json")
  })

  test("a heredoc wrapper is removed as OpenCode does", () => {
    const text = "cat <<'EOF'\n" + env("*** Delete File: a.txt") + "\nEOF\n"
    expect(parse(text)).toEqual({
      files: [{ change: "delete", path: "a.txt", chunks: [], line: 2, core: true }],
      problems: [],
    })
  })
})

describe("SecurityPatch.parse: refuses what readers could take differently", () => {
  test("a header ending in CR CR: OpenCode applies it (path trimmed), the guard refuses", () => {
    const text = env("*** Update File: .opencode-security.json\r\r", "@@", "-a", "+b")
    expect(only(text).path).toBe(".opencode-security.json")
    expect(problems(text)).toContain("carriage return or other line break")
  })

  test("headers ending in U+2028, U+2029: trimmed away by OpenCode, refused", () => {
    for (const sep of ["\u2028", "\u2029"]) {
      const text = env(`*** Delete File: .opencode-security-audit.log${sep}`)
      expect(only(text).path).toBe(".opencode-security-audit.log")
      expect(problems(text)).toContain("line break")
    }
  })

  test("headers ending in U+0085 or NUL: kept in the path by OpenCode, refused", () => {
    for (const odd of ["\u0085", "\u0000"]) {
      const text = env(`*** Update File: a.txt${odd}`, "@@", "-a", "+b")
      expect(only(text).path).toBe(`a.txt${odd}`)
      expect(problems(text)).not.toBe("")
    }
  })

  test("tabs, extra spaces or no space around a path are refused (OpenCode trims them)", () => {
    for (const header of [
      "*** Delete File:\ta.txt",
      "*** Delete File:  a.txt",
      "*** Delete File: a.txt ",
      "*** Delete File:a.txt",
    ]) {
      expect(only(env(header)).path).toBe("a.txt")
      expect(problems(env(header))).toContain("whitespace around its path")
    }
    expect(problems(env("*** Delete File: a\u00a0b.txt"))).toContain("whitespace other than plain spaces")
    expect(problems(env("*** Delete File: a\u200bb.txt"))).toContain("format")
  })

  test("a decoy add next to a hidden update: both are read, the hidden one is refused", () => {
    const text = env("*** Add File: notes.txt", "+hi", "*** Update File: secrets/key\u2028", "@@", "-a", "+b")
    expect(parse(text).files.map((f) => `${f.change} ${f.path}`)).toEqual(["add notes.txt", "update secrets/key"])
    expect(problems(text)).not.toBe("")
  })

  test("header look-alikes OpenCode skips or reads as content are refused", () => {
    for (const line of [
      "***Update File: a.txt",
      "*** update file: a.txt",
      "**** Update File: a.txt",
      " *** Update File: a.txt",
      "*** Update  File: a.txt",
    ]) {
      const text = env("*** Update File: b.txt", "@@", "-x", "+y", line)
      expect(problems(text)).toContain("patch header")
    }
    // A content line hiding a header behind a carriage return.
    expect(
      problems(env("*** Update File: b.txt", "@@", "-x", "+y\r*** Delete File: .opencode-security.json")),
    ).toContain("line break")
  })

  test("the same target twice (Add + Update, a move onto a named file, spellings that resolve alike) is refused", () => {
    expect(problems(env("*** Add File: a.txt", "+x", "*** Update File: a.txt", "@@", "-x", "+y"))).toContain(
      "more than once",
    )
    expect(
      problems(env("*** Delete File: b.txt", "*** Update File: a.txt", "*** Move to: b.txt", "@@", "-x", "+y")),
    ).toContain("more than once")
    expect(problems(env("*** Delete File: a.txt", "*** Delete File: /repo/a.txt"), "/repo")).toContain("more than once")
    expect(problems(env("*** Delete File: A.TXT", "*** Delete File: ./x/../a.txt"), "/repo")).toContain(
      "more than once",
    )
  })

  test("lines OpenCode skips are refused: before the first @@, unknown prefixes, after *** End of File", () => {
    expect(problems(env("*** Update File: a.txt", "-a", "+b"))).toContain("skips this line")
    expect(problems(env("*** Update File: a.txt", "@@", "-a", "\t+b"))).toContain("skips this line")
    expect(problems(env("*** Add File: a.txt", "+x", "y"))).toContain("skips this line")
    const tail = env("*** Update File: a.txt", "@@", "-a", "+A", "*** End of File", "@@", "-c", "+C")
    expect(only(tail).chunks).toHaveLength(1)
    expect(problems(tail)).toContain("skips this line")
    expect(problems(tail)).toContain("read this patch differently")
  })

  test("empty lines are skipped by OpenCode and allowed", () => {
    const file = only(env("*** Update File: a.txt", "@@", " a", "", "-b", "+B"))
    expect(file.chunks[0].old).toEqual(["a", "b"])
    expect(parse(env("*** Update File: a.txt", "@@", " a", "", "-b", "+B")).problems).toEqual([])
  })

  test("headers without a path, empty moves and updates without chunks are refused", () => {
    expect(problems(env("*** Update File: ", "@@", "-a", "+b"))).not.toBe("")
    expect(problems(env("*** Update File: a.txt", "*** Move to:", "@@", "-a", "+b"))).toContain("names no path")
    expect(only(env("*** Update File: a.txt", "*** Move to:", "@@", "-a", "+b")).change).toBe("update")
    expect(problems(env("*** Update File: a.txt"))).toContain("no @@ chunk")
  })

  test("text outside the envelope, several envelopes and a padded end marker are refused", () => {
    expect(problems(env("*** Delete File: a.txt") + "\n*** Delete File: .opencode-security.json")).toContain(
      "outside the *** Begin Patch",
    )
    expect(problems("note\n" + env("*** Delete File: a.txt"))).toContain("outside")
    expect(problems(env("*** Delete File: a.txt") + "\n" + env("*** Delete File: b.txt"))).toContain("more than one")
    // OpenCode finds a padded end marker by trimming, but its sections read on past it.
    const padded = "*** Begin Patch\n*** Add File: a.txt\n+x\n  *** End Patch\n+planted"
    expect(only(padded).content).toBe("x\nplanted\n")
    expect(problems(padded)).toContain("extra characters")
  })

  test("no envelope, a unified diff, or no file at all: OpenCode fails and the guard refuses", () => {
    expect(problems("*** Delete File: a.txt")).toContain("no *** Begin Patch")
    expect(problems("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")).toContain("unified diffs")
    expect(problems(env("*** Update File: a.txt", "@@", "--- a/x", "+++ b/x"))).toContain("unified diff")
    expect(problems(env())).toContain("names no file")
    expect(parse("*** End Patch\n*** Begin Patch").files).toEqual([])
  })
})

describe("SecurityPatch.derive: where OpenCode applies each chunk", () => {
  const both = ["1.2.15", "1.18", "1.18-core"] as const

  test("passes in order: exact, trailing whitespace, trimmed, Unicode punctuation", () => {
    const p = (old: string) => env("*** Update File: a", "@@", `-${old}`, "+X")
    expect(derive(p("k"), "k \nk\n", "1.18")).toMatchObject({ content: "k \nX\n", placed: [{ pass: "exact" }] })
    expect(derive(p("k"), " k\nk \n", "1.18")).toMatchObject({
      content: " k\nX\n",
      placed: [{ pass: "trailing whitespace ignored" }],
    })
    expect(derive(p("k"), "a\n  k\n", "1.18")).toMatchObject({ content: "a\nX\n", placed: [{ pass: "trimmed" }] })
    for (const v of both) expect(content(p('say "hi" - ok...'), "say \u201chi\u201d \u2013 ok\u2026\n", v)).toBe("X\n")
  })

  test("old lines found twice: the first after the cursor; @@ context moves the cursor past its line", () => {
    const file = "a\nk\nb\nk\n"
    for (const v of both) {
      expect(content(env("*** Update File: f", "@@", "-k", "+K"), file, v)).toBe("a\nK\nb\nk\n")
      expect(content(env("*** Update File: f", "@@ b", "-k", "+K"), file, v)).toBe("a\nk\nb\nK\n")
    }
  })

  test("*** End of File anchors only in the 1.18 core reading", () => {
    const patch = env("*** Update File: f", "@@", "-x", "+X", "*** End of File")
    expect(content(patch, "x\ny\nx\n", "1.2.15")).toBe("X\ny\nx\n")
    expect(content(patch, "x\ny\nx\n", "1.18")).toBe("X\ny\nx\n")
    expect(content(patch, "x\ny\nx\n", "1.18-core")).toBe("x\ny\nX\n")
    const a = SecurityPatch.affected(only(patch), "x\ny\nx\n")
    expect(a.ok && a.disagree).toBe(true)
    expect(a.ok && a.edits).toEqual([
      { start: 0, end: 2, insert: "X\n" },
      { start: 4, end: 6, insert: "X\n" },
    ])
  })

  test("a chunk without old lines is appended at the end, wherever its context; 1.2.15/1.18 skip a final blank line", () => {
    const patch = env("*** Update File: f", "@@ a", "+new")
    expect(content(patch, "a\nb\n", "1.18")).toBe("a\nb\nnew\n")
    expect(content(patch, "a\n\n", "1.2.15")).toBe("a\nnew\n")
    expect(content(patch, "a\n\n", "1.18")).toBe("a\nnew\n")
    expect(content(patch, "a\n\n", "1.18-core")).toBe("a\n\nnew\n")
  })

  test("line endings: lines the patch rewrites lose their CR, others keep it; a missing final newline is added; one final blank line is dropped", () => {
    const patch = env("*** Update File: f", "@@", " a", "-b", "+B")
    for (const v of both) {
      // The context line matched without its CR is rewritten from the patch, so it loses the CR too.
      expect(content(patch, "a\r\nb\r\nc\r\n", v)).toBe("a\nB\nc\r\n")
      expect(content(patch, "a\nb", v)).toBe("a\nB\n")
      expect(content(patch, "a\nb\n\n", v)).toBe("a\nB\n")
    }
  })

  test("a byte order mark: 1.2.15 searches and replaces it with the first line, 1.18 sets it aside and restores it", () => {
    const patch = env("*** Update File: f", "@@", "-a", "+A")
    expect(content(patch, "\uFEFFa\nb\n", "1.2.15")).toBe("A\nb\n")
    expect(content(patch, "\uFEFFa\nb\n", "1.18")).toBe("\uFEFFA\nb\n")
    expect(content(patch, "\uFEFFa\nb\n", "1.18-core")).toBe("\uFEFFA\nb\n")
    // 1.18 also strips a BOM the patch writes at the start, then marks the file as having one.
    expect(content(env("*** Update File: f", "@@", "-a", "+\uFEFFA"), "a\n", "1.18")).toBe("\uFEFFA\n")
  })

  test("a retry without a trailing empty old line; a later chunk cannot go back; unknown context fails", () => {
    expect(content(env("*** Update File: f", "@@", "-b", "-", "+B", "+"), "a\nb", "1.18")).toBe("a\nB\n")
    expect(content(env("*** Update File: f", "@@", "-c", "+C", "@@", "-a", "+A"), "a\nb\nc\n", "1.18")).toContain(
      "FAIL",
    )
    expect(content(env("*** Update File: f", "@@ nowhere", "-a", "+A"), "a\n", "1.2.15")).toContain("FAIL")
    const fails = SecurityPatch.affected(only(env("*** Update File: f", "@@", "-zzz", "+A")), "a\n")
    expect(fails.ok).toBe(false)
  })

  test("overlapping chunks (an append and a change of the last line) follow OpenCode's reverse splice order", () => {
    // The file ends in a blank line, so 1.2.15/1.18 append at the blank line the second chunk also replaces.
    const appendFirst = env("*** Update File: f", "@@", "+X", "@@", "-", "+Y")
    const changeFirst = env("*** Update File: f", "@@", "-", "+Y", "@@", "+X")
    expect(content(appendFirst, "a\n\n", "1.18")).toBe("a\nX\nY\n")
    expect(content(changeFirst, "a\n\n", "1.18")).toBe("a\nY\n")
  })

  test("the edits always rebuild the content; add and delete replace everything", () => {
    const cases: [string, string][] = [
      [env("*** Update File: f", "@@", " a", "-b", "+B", "+C"), "\uFEFFa\r\nb\r\n\n"],
      [env("*** Update File: f", "@@", "+tail"), "x"],
      [env("*** Update File: f", "@@ a", "-b", "+", "@@", "-d", "+D"), "a\nb\nc\nd\n"],
      [env("*** Add File: f", "+new"), "old\n"],
      [env("*** Delete File: f"), "old\n"],
    ]
    for (const [patch, current] of cases)
      for (const v of both) {
        const d = derive(patch, current, v)
        if (d.ok) expect(SecurityPatch.apply(current, d.edits)).toBe(d.content)
      }
    expect(derive(env("*** Delete File: f"), "old\n", "1.18")).toMatchObject({
      content: "",
      edits: [{ start: 0, end: 4, insert: "" }],
    })
  })
})

describe("SecurityEdit.touches on apply_patch sections", () => {
  test("changing or inserting lines inside a segment is refused; Unicode look-alikes match the protected line", () => {
    expect(touches(LOCKED, env("*** Update File: f", "@@", "-const key = 'k1'", "+const key = 'k2'"))).toContain(
      "write-protected",
    )
    expect(
      touches(LOCKED, env("*** Update File: f", "@@", " // @locked-start", "+planted", " const key = 'k1'")),
    ).toContain("inserts text inside")
    // OpenCode's punctuation pass matches curly quotes in the patch against the straight ones in the file.
    expect(touches(LOCKED, env("*** Update File: f", "@@", "-const key = \u2018k1\u2019", "+x"))).toContain(
      "write-protected",
    )
  })

  test("an insertion right before the end marker and an append to an unclosed segment are refused", () => {
    expect(
      touches(LOCKED, env("*** Update File: f", "@@", " const key = 'k1'", "+planted", " // @locked-end")),
    ).toContain("write-protected")
    const open = "a\n// @locked-start\nsecret\n"
    expect(touches(open, env("*** Update File: f", "@@", "+appended"))).toContain("end of the file")
  })

  test("a context that exists twice: the copy OpenCode picks decides", () => {
    const twice = ["// @locked-start", "x = 1", "// @locked-end", "x = 1", ""].join("\n")
    expect(touches(twice, env("*** Update File: f", "@@", "-x = 1", "+x = 2"))).toContain("write-protected")
    expect(touches(twice, env("*** Update File: f", "@@ // @locked-end", "-x = 1", "+x = 2"))).toBeUndefined()
  })

  test("deleting, moving away, overwriting by a move, or adding over a file with segments is refused", () => {
    expect(touches(LOCKED, env("*** Delete File: f"))).toContain("deletes")
    expect(touches(LOCKED, env("*** Update File: f", "*** Move to: g", "@@", "-top", "+TOP"))).toContain("moves")
    expect(touches(LOCKED, env("*** Update File: g", "*** Move to: f", "@@", "-a", "+A"), "destination")).toContain(
      "overwrites",
    )
    expect(touches(LOCKED, env("*** Add File: f", "+fresh"))).toContain("Add File")
  })

  test("the file ending in a blank line after a segment: the dropped blank line is outside it", () => {
    const text = "a\n// @locked-start\nk\n// @locked-end\n\n"
    expect(touches(text, env("*** Update File: f", "@@", "-a", "+A"))).toBeUndefined()
  })

  test("a patch OpenCode cannot place in a file with segments is refused", () => {
    expect(touches(LOCKED, env("*** Update File: f", "@@", "-nothing like this", "+x"))).toContain("could not apply")
  })

  test("benign: lines around a segment, with its marker lines as context, and additions at the end pass", () => {
    expect(touches(LOCKED, env("*** Update File: f", "@@", "-top", "+TOP"))).toBeUndefined()
    expect(
      touches(
        LOCKED,
        env(
          "*** Update File: f",
          "@@",
          "-top",
          "+TOP",
          " // @locked-start",
          " const key = 'k1'",
          " // @locked-end",
          "-bottom",
          "+BOTTOM",
        ),
      ),
    ).toBeUndefined()
    expect(touches(LOCKED, env("*** Update File: f", "@@", "+appended"))).toBeUndefined()
    expect(touches(LOCKED, env("*** Update File: f", "@@", " top", "+above the segment"))).toBeUndefined()
    expect(
      touches(
        LOCKED,
        env(
          "*** Add File: f",
          "+new",
          ...LOCKED.trimEnd()
            .split("\n")
            .map((l) => `+${l}`),
        ),
      ),
    ).toBeUndefined()
    expect(touches("no segments\n", env("*** Delete File: f"))).toBeUndefined()
  })
})
