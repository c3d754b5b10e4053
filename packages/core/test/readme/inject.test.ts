import { describe, expect, test } from "bun:test"
import fs from "fs"
import { ReadmeInject } from "../../readme/inject"
import { tmpdir } from "../fixture"

describe("ReadmeInject.find: a folder's README, named in any case", () => {
  test("X7: README.MD (python-sdk examples/clients/simple-chatbot), ReadMe.md and README.markdown are READMEs", async () => {
    await using dir = await tmpdir({
      "examples/clients/simple-chatbot/README.MD": "# Simple chatbot\n",
      "examples/clients/simple-chatbot/pyproject.toml": "",
      "camel/ReadMe.md": "# camel\n",
      "long/README.markdown": "# long\n",
    })
    const chatbot = dir.file("examples/clients/simple-chatbot")
    // The name it has on disk, so the block names a file that exists as written.
    expect(ReadmeInject.find(chatbot, ReadmeInject.DEFAULT_NAMES)).toBe(`${chatbot}/README.MD`)
    expect(ReadmeInject.find(dir.file("camel"), ReadmeInject.DEFAULT_NAMES)).toBe(dir.file("camel/ReadMe.md"))
    expect(ReadmeInject.find(dir.file("long"), ReadmeInject.DEFAULT_NAMES)).toBe(dir.file("long/README.markdown"))
    // Configured names match in any case too.
    expect(ReadmeInject.find(chatbot, ["readme.md"])).toBe(`${chatbot}/README.MD`)
  })

  test("several: the names' order first, then the exact spelling, then code point order; a folder named README.md is not one", async () => {
    await using dir = await tmpdir({
      "a/readme.md": "lower\n",
      "a/Readme.md": "title\n",
      "a/README.markdown": "long\n",
      "b/readme.md": "lower\n",
      "b/README.md": "exact\n",
      "c/README.md/x": "a folder\n",
      "c/readme.MD": "file\n",
    })
    const names = ReadmeInject.DEFAULT_NAMES
    expect(ReadmeInject.find(dir.file("a"), names)).toBe(dir.file("a/Readme.md"))
    expect(ReadmeInject.find(dir.file("b"), names)).toBe(dir.file("b/README.md"))
    expect(ReadmeInject.find(dir.file("c"), names)).toBe(dir.file("c/readme.MD"))
    expect(ReadmeInject.find(dir.file("a"), ["README.markdown", "README.md"])).toBe(dir.file("a/README.markdown"))
    expect(ReadmeInject.find(dir.file("missing"), names)).toBeUndefined()
  })
})

describe("ReadmeInject.chain: dependencies bring in nothing", () => {
  test.each([
    ["Go modules vendored (go mod vendor)", "vendor/github.com/spf13/cobra/command.go"],
    ["Python virtualenv in the project (uv's default .venv)", ".venv/lib/python3.12/site-packages/httpx/_client.py"],
    ["Python virtualenv named venv", "venv/lib/python3.12/site-packages/httpx/_client.py"],
    ["Ruby gems installed with bundle --path vendor/bundle", "vendor/bundle/ruby/3.3.0/gems/rack-3.1.8/lib/rack.rb"],
    ["PHP Composer", "vendor/symfony/console/Application.php"],
    ["npm, nested in a package", "packages/web/node_modules/react/index.js"],
    ["CocoaPods", "ios/Pods/Alamofire/Source/AF.swift"],
    ["vendored third-party code", "third_party/zlib/inflate.c"],
    ["pip install --target site-packages", "lambda/site-packages/requests/api.py"],
  ])("X13 %s", (_name, file) => {
    expect(ReadmeInject.chain(file, { directory: "/r", worktree: "/r", includeRoot: false })).toEqual([])
  })

  test("X13: a virtual environment under any name is found by its pyvenv.cfg; the project's own folders are not affected", async () => {
    await using dir = await tmpdir({
      "py312/pyvenv.cfg": "home = /usr/bin\n",
      "py312/lib/python3.12/site/httpx/_client.py": "x\n",
      "src/vendored_notes/app/main.py": "x\n",
    })
    const bounds = { directory: dir.path, worktree: dir.path, includeRoot: false }
    expect(ReadmeInject.chain(dir.file("py312/lib/python3.12/site/httpx/_client.py"), bounds)).toEqual([])
    expect(ReadmeInject.chain(dir.file("src/vendored_notes/app/main.py"), bounds)).toEqual([
      dir.file("src/vendored_notes/app"),
      dir.file("src/vendored_notes"),
      dir.file("src"),
    ])
    fs.rmSync(dir.file("py312/pyvenv.cfg"))
    expect(ReadmeInject.chain(dir.file("py312/lib/python3.12/site/httpx/_client.py"), bounds)).toHaveLength(5)
  })
})

describe("ReadmeInject.head: read as the security layer reads files (red team CC1)", () => {
  test("UTF-16 with a byte-order mark (LE, BE) is decoded, cut at the limit without splitting a surrogate pair", async () => {
    await using dir = await tmpdir({})
    const text = "# a\n" + "𐐀".repeat(50)
    fs.writeFileSync(dir.file("le.md"), Buffer.from("\ufeff" + text, "utf16le"))
    const be = Buffer.from("\ufeff" + text, "utf16le")
    be.swap16()
    fs.writeFileSync(dir.file("be.md"), be)
    for (const f of ["le.md", "be.md"]) {
      expect(ReadmeInject.head(dir.file(f), 1000)).toEqual({ text, more: false })
      const cut = ReadmeInject.head(dir.file(f), 6)!
      expect(cut.more).toBe(true)
      expect(text.startsWith(cut.text)).toBe(true)
      expect(/[\uD800-\uDBFF]$/.test(cut.text)).toBe(false)
    }
  })
  test("UTF-16 without a mark and other bytes holding NUL are not read; UTF-8 (with or without a mark) is", async () => {
    await using dir = await tmpdir({ "u8.md": "\ufeff# ü\n" })
    fs.writeFileSync(dir.file("raw.md"), Buffer.from("# a\n", "utf16le"))
    expect(ReadmeInject.head(dir.file("raw.md"), 100)).toBeUndefined()
    expect(ReadmeInject.head(dir.file("u8.md"), 100)).toEqual({ text: "# ü\n", more: false })
  })
})
