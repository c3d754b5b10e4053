import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import type { Host } from "../../host"
import { LspScope } from "../../lsp/scope"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import { Logger } from "../../util/log"
import { bunSpawnSync } from "../spawn-sync"
import { processesIn, project, toolContext } from "./fixtures"

// Python packages shipping `.pyi` stubs, as attrs does (tester RX, RX1): `pkg/__init__.pyi` declares what
// `pkg/__init__.py` re-exports from `pkg/_funcs.py`. pyright holds the stub's declaration for another symbol than the
// implementation: a rename from `_funcs.py` renamed 3 places in 2 files and left the stub and its users, and
// `import attrs` broke. Real pyright from node_modules.
const log = Logger.silent

const STUBBED = {
  "pkg/__init__.py": 'from ._funcs import has, resolve_types\n\n__all__ = ["has", "resolve_types"]\n',
  "pkg/__init__.pyi":
    "def has(cls: type) -> bool: ...\ndef resolve_types(cls: type, globalns: dict | None = None) -> type: ...\n",
  "pkg/_funcs.py":
    'def has(cls):\n    return hasattr(cls, "__attrs_attrs__")\n\n\ndef resolve_types(cls, globalns=None):\n    return cls\n',
  "tests/test_it.py": "from pkg import resolve_types\n\n\ndef test_it():\n    assert resolve_types(int) is int\n",
}
/** `resolve_types` in `pkg/_funcs.py` (1-based, as the tool takes it). */
const IMPLEMENTATION = { filePath: "pkg/_funcs.py", line: 5, character: 5 }

async function call(dir: string, args: Record<string, unknown>) {
  const host: Host = { directory: dir, worktree: dir, log }
  const service = Lsp.create({ directory: dir, worktree: dir, log, config: true })
  const lsp = LspTools.create(host, () => service).lsp
  try {
    return await lsp.execute(args as any, toolContext(dir) as any).then(
      (out) => ({ out: String(out), error: undefined as Error | undefined }),
      (error: Error) => ({ out: "", error }),
    )
  } finally {
    await service.stop()
    expect(await processesIn(dir)).toEqual([])
  }
}

function python(dir: string, script: string) {
  const proc = bunSpawnSync(["python3", "-c", script], { cwd: dir })
  return { code: proc.exitCode, out: proc.stdout.toString() + proc.stderr.toString() }
}

async function snapshot(dir: string, files: Record<string, string>) {
  const out: Record<string, string> = {}
  for (const rel of Object.keys(files)) out[rel] = await fs.readFile(path.join(dir, rel), "utf8")
  return out
}

describe("rename of a symbol also declared in a stub (.pyi)", () => {
  test(
    "from the implementation: the stub's declaration and every use typed through it are renamed; the package imports",
    async () => {
      await using proj = await project(STUBBED)
      const { out, error } = await call(proj.dir, { operation: "rename", ...IMPLEMENTATION, newName: "resolve_hints" })
      expect(error).toBeUndefined()
      expect(out.split("\n")).toEqual([
        "Renamed `resolve_types` to `resolve_hints`: 6 edits in 4 files (pyright). All files were written.",
        "pkg/_funcs.py: 1 edit",
        "pkg/__init__.py: 2 edits",
        "pkg/__init__.pyi: 1 edit",
        "tests/test_it.py: 2 edits",
        "[NOTE] `resolve_types` is also declared in the stub pkg/__init__.pyi:2, which pyright holds for another symbol; its uses from there were renamed as well.",
      ])
      const after = await snapshot(proj.dir, STUBBED)
      for (const [file, text] of Object.entries(after))
        expect({ file, old: /\bresolve_types\b/.test(text) }).toEqual({ file, old: false })
      expect(after["pkg/__init__.pyi"]).toContain("def resolve_hints(cls: type")
      // `has` in the same stub is another symbol: untouched.
      expect(after["pkg/__init__.pyi"]).toStartWith("def has(cls: type) -> bool: ...\n")
      const script =
        "import sys; sys.path.insert(0, 'tests'); import pkg, test_it; test_it.test_it(); print(pkg.resolve_hints)"
      const ran = python(proj.dir, script)
      expect(ran.code).toBe(0)
      expect(ran.out).toContain("<function resolve_hints")
    },
    { timeout: 60_000 },
  )

  test(
    "a stub re-exporting with `as` (pyright links it itself): every place renamed once, none twice",
    async () => {
      const files = {
        ...STUBBED,
        "pkg/__init__.pyi": "from ._funcs import has as has, resolve_types as resolve_types\n",
      }
      await using proj = await project(files)
      const { out, error } = await call(proj.dir, { operation: "rename", ...IMPLEMENTATION, newName: "resolve_hints" })
      expect(error).toBeUndefined()
      expect(out.split("\n")[0]).toBe(
        "Renamed `resolve_types` to `resolve_hints`: 7 edits in 4 files (pyright). All files were written.",
      )
      expect(await fs.readFile(path.join(proj.dir, "pkg/__init__.pyi"), "utf8")).toBe(
        "from ._funcs import has as has, resolve_hints as resolve_hints\n",
      )
      expect(python(proj.dir, "import pkg; pkg.resolve_hints").code).toBe(0)
    },
    { timeout: 60_000 },
  )

  test(
    "a stub of another package declaring the same name is another symbol: left alone and named in the WARNING",
    async () => {
      const files = {
        ...STUBBED,
        "other/__init__.py": "def resolve_types(x):\n    return x\n",
        "other/__init__.pyi": "def resolve_types(x: int) -> int: ...\n",
      }
      await using proj = await project(files)
      const { out, error } = await call(proj.dir, { operation: "rename", ...IMPLEMENTATION, newName: "resolve_hints" })
      expect(error).toBeUndefined()
      const lines = out.split("\n")
      expect(lines[0]).toStartWith("Renamed `resolve_types` to `resolve_hints`: 6 edits in 4 files (pyright).")
      expect(lines).toContain("  other/__init__.pyi:1")
      expect(await fs.readFile(path.join(proj.dir, "other/__init__.pyi"), "utf8")).toBe(files["other/__init__.pyi"])
      expect(python(proj.dir, "import pkg, other; pkg.resolve_hints; other.resolve_types").code).toBe(0)
    },
    { timeout: 60_000 },
  )

  test(
    "when the stub's uses cannot be established, nothing is written and the error names the stub",
    async () => {
      // More mentions in the stub than the tool asks the server about (comments here): it cannot tell them apart.
      const comments = Array.from({ length: Lsp.MAX_STUB_QUERIES + 1 }, (_, i) => `# resolve_types note ${i}\n`)
      const files = { ...STUBBED, "pkg/__init__.pyi": comments.join("") + STUBBED["pkg/__init__.pyi"] }
      await using proj = await project(files)
      const { out, error } = await call(proj.dir, { operation: "rename", ...IMPLEMENTATION, newName: "resolve_hints" })
      expect(out).toBe("")
      expect(error?.name).toBe("LspRenameStubNotCovered")
      expect(error?.message).toContain("`resolve_types` may also be declared in the stub pkg/__init__.pyi")
      expect(error?.message).toContain("Nothing was changed")
      expect(await snapshot(proj.dir, files)).toEqual(files)
    },
    { timeout: 60_000 },
  )

  test(
    "from a use pyright refuses (the stub outside [tool.pyright]'s include): the error says the symbol is declared in the stub and where to start",
    async () => {
      const files = { ...STUBBED, "pyproject.toml": '[project]\nname = "pkg"\n\n[tool.pyright]\ninclude = ["tests"]\n' }
      await using proj = await project(files)
      const use = { filePath: "tests/test_it.py", line: 1, character: 17 }
      const refused = await call(proj.dir, { operation: "rename", ...use, newName: "resolve_hints" })
      expect(refused.error?.name).toBe("LspCannotRename")
      expect(refused.error?.message).toBe(
        "Cannot rename here (tests/test_it.py): the server says this element cannot be renamed: `resolve_types` is " +
          "declared in the stub pkg/__init__.pyi:2:5; start the rename at its implementation, pkg/_funcs.py:5:5 (the " +
          "rename there includes the stub and its uses)",
      )
      expect(await snapshot(proj.dir, files)).toEqual(files)
      const check = await call(proj.dir, { operation: "prepareRename", ...use })
      expect(check.out).toContain(
        "is declared in the stub pkg/__init__.pyi:2:5; start the rename at its implementation",
      )
      // A keyword in the stub is no symbol declared there: the server's reason alone.
      const keyword = await call(proj.dir, {
        operation: "prepareRename",
        filePath: "pkg/__init__.pyi",
        line: 1,
        character: 1,
      })
      expect(keyword.out).toStartWith("Cannot rename at pkg/__init__.pyi:1:1: ")
      expect(keyword.out).not.toContain("declared in the stub")
      // A symbol of the server's own stubs (typeshed's `int`) is not the project's: no hint to rename it.
      const builtin = await call(proj.dir, {
        operation: "prepareRename",
        filePath: "tests/test_it.py",
        line: 5,
        character: 26,
      })
      expect(builtin.out).toStartWith("Cannot rename at tests/test_it.py:5:26: ")
      expect(builtin.out).not.toContain("declared in the stub")
      // Where it says to start, the whole rename is made.
      const { out, error } = await call(proj.dir, { operation: "rename", ...IMPLEMENTATION, newName: "resolve_hints" })
      expect(error).toBeUndefined()
      expect(out.split("\n")[0]).toBe(
        "Renamed `resolve_types` to `resolve_hints`: 6 edits in 4 files (pyright). All files were written.",
      )
      expect(python(proj.dir, "import sys; sys.path.insert(0, 'tests'); import test_it; test_it.test_it()").code).toBe(
        0,
      )
    },
    { timeout: 60_000 },
  )
})

describe("findReferences of a symbol also declared in a stub", () => {
  test(
    "from the implementation: the uses typed through the stub are listed too (before: only the implementation's module)",
    async () => {
      await using proj = await project(STUBBED)
      const { out, error } = await call(proj.dir, { operation: "findReferences", ...IMPLEMENTATION })
      expect(error).toBeUndefined()
      const files = out
        .split("\n")
        .slice(1)
        .map((l) => l.replace(/:\d+:\d+.*$/, ""))
      expect([...new Set(files)].sort()).toEqual([
        "pkg/__init__.py",
        "pkg/__init__.pyi",
        "pkg/_funcs.py",
        "tests/test_it.py",
      ])
      expect(out.split("\n")[0]).toBe("findReferences: 6 locations")
    },
    { timeout: 60_000 },
  )

  test("Lsp.ownCode: an installed copy (site-packages, a virtual environment by its pyvenv.cfg) is no use of the project's symbol", async () => {
    await using proj = await project({ "env/pyvenv.cfg": "home = /usr\n", "src/pkg/a.py": "" })
    expect(await Lsp.ownCode(proj.dir, path.join(proj.dir, "src/pkg/a.py"))).toBe(true)
    expect(await Lsp.ownCode(proj.dir, path.join(proj.dir, "env/lib/python3.11/site-packages/pkg/a.py"))).toBe(false)
    expect(await Lsp.ownCode(proj.dir, path.join(proj.dir, "env/lib/pkg/a.py"))).toBe(false)
    expect(await Lsp.ownCode(proj.dir, "/usr/lib/python3.11/site-packages/attr/_funcs.py")).toBe(false)
    // Outside the root but no installed package: a sibling project's file.
    expect(await Lsp.ownCode(proj.dir, path.join(path.dirname(proj.dir), "other/b.py"))).toBe(true)
  })
})

// RX4: the NOTE said "(outside the files its configuration includes)" whatever the reason; a user would widen an
// `include` that does not exist.
describe("the NOTE on files the server's rename left out gives a reason only a configuration states", () => {
  test(
    "no configuration (a script in a dot-folder, which pyright leaves out by its own default): a neutral statement",
    async () => {
      const files = {
        "pkg/__init__.py": "",
        "pkg/encoding.py": "def want_bytes(s):\n    return s\n",
        ".ci/check.py": 'from pkg.encoding import want_bytes\n\nprint(want_bytes("a"))\n',
      }
      await using proj = await project(files)
      const args = { operation: "rename", filePath: "pkg/encoding.py", line: 1, character: 5, newName: "to_bytes" }
      const { out, error } = await call(proj.dir, args)
      expect(error).toBeUndefined()
      expect(out.split("\n")).toEqual([
        "Renamed `want_bytes` to `to_bytes`: 3 edits in 2 files (pyright). All files were written.",
        "pkg/encoding.py: 1 edit",
        ".ci/check.py: 2 edits",
        "[NOTE] pyright's rename left out .ci/check.py; its references there were renamed as well.",
      ])
    },
    { timeout: 60_000 },
  )

  test("LspScope.excludedBy: the reason only when pyright's configuration leaves the file out", async () => {
    await using proj = await project({
      "a/pyproject.toml":
        '[project]\nname = "a"\n\n[tool.pyright]\ninclude = ["src", "tools/*.py"]\nexclude = ["src/gen/**"]\n',
      "b/pyproject.toml": '[project]\nname = "b"\n\n[tool.mypy]\nstrict = true\n',
      "c/pyrightconfig.json": '{\n  // comments are allowed\n  "exclude": ["**/fixtures"],\n}\n',
      "c/pyproject.toml": '[tool.pyright]\ninclude = ["nothing"]\n',
    })
    const why = (root: string, file: string) =>
      LspScope.excludedBy("pyright", path.join(proj.dir, root), path.join(proj.dir, root, file))
    expect(await why("a", "tests/test_x.py")).toBe("outside the `include` of pyproject.toml [tool.pyright]")
    expect(await why("a", "src/pkg/x.py")).toBeUndefined()
    expect(await why("a", "tools/run.py")).toBeUndefined()
    expect(await why("a", "tools/sub/run.py")).toBe("outside the `include` of pyproject.toml [tool.pyright]")
    expect(await why("a", "src/gen/x.py")).toBe(
      'excluded by "src/gen/**" in the `exclude` of pyproject.toml [tool.pyright]',
    )
    // No [tool.pyright]: pyright's defaults, not a configuration of the project.
    expect(await why("b", "tests/test_x.py")).toBeUndefined()
    // pyrightconfig.json wins over pyproject.toml (as pyright reads them).
    expect(await why("c", "tests/fixtures/x.py")).toBe(
      'excluded by "**/fixtures" in the `exclude` of pyrightconfig.json',
    )
    expect(await why("c", "src/x.py")).toBeUndefined()
    // Another server: nothing known.
    expect(
      await LspScope.excludedBy("typescript", path.join(proj.dir, "a"), path.join(proj.dir, "a/tests/x.ts")),
    ).toBeUndefined()
  })
})
