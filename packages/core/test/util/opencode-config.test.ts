import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { OpenCodeConfig } from "../../util/opencode-config"
import { tmpdir } from "../fixture"

describe("OpenCodeConfig.files", () => {
  test("global files, OPENCODE_CONFIG, the project's from the worktree down, .opencode likewise, OPENCODE_CONFIG_DIR", () => {
    const files = OpenCodeConfig.files({
      directory: "/repo/app",
      worktree: "/repo",
      env: { HOME: "/home/me", OPENCODE_CONFIG: "/etc/oc.json", OPENCODE_CONFIG_DIR: "/cfg" },
    })
    expect(files).toEqual([
      "/home/me/.config/opencode/config.json",
      "/home/me/.config/opencode/opencode.json",
      "/home/me/.config/opencode/opencode.jsonc",
      "/etc/oc.json",
      "/repo/opencode.json",
      "/repo/opencode.jsonc",
      "/repo/app/opencode.json",
      "/repo/app/opencode.jsonc",
      "/repo/.opencode/opencode.json",
      "/repo/.opencode/opencode.jsonc",
      "/repo/app/.opencode/opencode.json",
      "/repo/app/.opencode/opencode.jsonc",
      "/cfg/opencode.json",
      "/cfg/opencode.jsonc",
    ])
  })

  test("XDG_CONFIG_HOME moves the global files; OPENCODE_DISABLE_PROJECT_CONFIG drops the project's; a directory outside the worktree is alone", () => {
    expect(
      OpenCodeConfig.files({
        directory: "/repo",
        env: { HOME: "/home/me", XDG_CONFIG_HOME: "/x", OPENCODE_DISABLE_PROJECT_CONFIG: "true" },
      }),
    ).toEqual(["/x/opencode/config.json", "/x/opencode/opencode.json", "/x/opencode/opencode.jsonc"])
    expect(OpenCodeConfig.files({ directory: "/elsewhere", worktree: "/repo", env: { HOME: "/h" } }).slice(3)).toEqual([
      "/elsewhere/opencode.json",
      "/elsewhere/opencode.jsonc",
      "/elsewhere/.opencode/opencode.json",
      "/elsewhere/.opencode/opencode.jsonc",
    ])
  })
})

describe("OpenCodeConfig.sources", () => {
  test("reads what exists in order, comments and trailing commas allowed, OPENCODE_CONFIG_CONTENT last", async () => {
    await using dir = await tmpdir({
      "xdg/opencode/opencode.json": '{ "agent": { "a": { "disable": true } } }',
      "repo/opencode.jsonc": '// project\n{ "agent": { "b": {}, }, }',
    })
    const env = { HOME: dir.file("home"), XDG_CONFIG_HOME: dir.file("xdg"), OPENCODE_CONFIG_CONTENT: '{"x": 1}' }
    const { sources, problems } = OpenCodeConfig.sources({ directory: dir.file("repo"), env })
    expect(problems).toEqual([])
    expect(sources.map((s) => s.file)).toEqual([
      dir.file("xdg/opencode/opencode.json"),
      dir.file("repo/opencode.jsonc"),
      OpenCodeConfig.CONTENT,
    ])
    expect(sources[1].config).toEqual({ agent: { b: {} } })
    expect(sources[2].config).toEqual({ x: 1 })
  })

  test("syntax errors in words with line and column, never the parser's codes; bytes that are not UTF-8 named as such", () => {
    const error = (text: string) => {
      const parsed = OpenCodeConfig.parse(text)
      return "error" in parsed ? parsed.error : undefined
    }
    expect(error('{ "plugin": [')).toBe(
      "line 1, column 14: expected ']': a list is not closed (the text ends early: cut off?)",
    )
    expect(error('{ "a": 1 "b": 2 }')).toBe("line 1, column 10: expected ',' between two entries")
    expect(error("{ oops }")).toBe("line 1, column 3: unexpected character 'o'")
    expect(error('{ "a" 1 }')).toBe("line 1, column 7: expected ':' after the property name")
    expect(error('{ "a": "b }')).toContain("a string is not closed")
    for (const text of ['{ "plugin": [', '{ "a": 1 "b": 2 }', "{ oops }", "\u0000\u0001"])
      expect(error(text)).not.toMatch(/[A-Z][a-z]+[A-Z][a-z]+(Expected|Symbol|Token)/)
    expect(OpenCodeConfig.parseBytes(Buffer.from([0x80, 0xde, 0xad]))).toEqual({
      error: "is not UTF-8 text (byte 0); save it as UTF-8",
    })
    expect(OpenCodeConfig.parseBytes(Buffer.from('\uFEFF{ "a": 1 }'))).toEqual({ config: { a: 1 } })
  })

  test("a file that does not parse, is not an object or is a folder is a problem with the reason; the others are read", async () => {
    await using dir = await tmpdir({
      "repo/opencode.json": '{\n  "agent": {\n    "a": { "disable": true }\n  ]\n}',
      "repo/opencode.jsonc": "[1, 2]",
      "repo/.opencode/opencode.json": '{ "ok": true }',
    })
    await fs.mkdir(dir.file("repo/.opencode/opencode.jsonc"))
    const { sources, problems } = OpenCodeConfig.sources({ directory: dir.file("repo"), env: { HOME: dir.file("h") } })
    expect(sources.map((s) => s.config)).toEqual([{ ok: true }])
    expect(problems).toEqual([
      { file: dir.file("repo/opencode.json"), error: "line 4, column 3: expected ',' between two entries" },
      { file: dir.file("repo/opencode.jsonc"), error: "not a JSON object" },
      { file: dir.file("repo/.opencode/opencode.jsonc"), error: "not a regular file" },
    ])
  })

  test("a file is parsed again when it changes, and not while it stays the same", async () => {
    await using dir = await tmpdir({ "repo/opencode.json": '{ "v": 1 }' })
    const input = { directory: dir.file("repo"), env: { HOME: dir.file("h") } }
    const first = OpenCodeConfig.sources(input).sources[0].config
    expect(OpenCodeConfig.sources(input).sources[0].config).toBe(first)
    await fs.writeFile(dir.file("repo/opencode.json"), '{ "v": 22 }')
    await fs.utimes(dir.file("repo/opencode.json"), new Date(), new Date(Date.now() + 5000))
    expect(OpenCodeConfig.sources(input).sources[0].config).toEqual({ v: 22 })
    await fs.rm(dir.file("repo/opencode.json"))
    expect(OpenCodeConfig.sources(input).sources).toEqual([])
    expect(path.isAbsolute(OpenCodeConfig.files(input)[0])).toBe(true)
  })
})
