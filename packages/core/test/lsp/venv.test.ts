import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Builtins, BuiltinsSeams } from "../../builtins"
import type { Host } from "../../host"
import { LspServers } from "../../lsp/servers"
import { Lsp } from "../../lsp/service"
import { LspTools } from "../../lsp/tools"
import type { HostSessions } from "../../sessions"
import { Logger } from "../../util/log"
import { project as securedProject } from "../security/fixture"
import { isolateHome } from "../security/redteam-helpers"
import { processesIn, project, toolContext } from "./fixtures"
import { execFileSync } from "../spawn-sync"

const log = Logger.silent

/** A real virtual environment (`python3 -m venv`, no pip) at `dir`; its site-packages folder. */
function venv(dir: string) {
  execFileSync("python3", ["-m", "venv", "--without-pip", dir])
  const lib = path.join(dir, "lib")
  return path.join(lib, fs.readdirSync(lib)[0]!, "site-packages")
}

function tool(dir: string) {
  const host: Host = { directory: dir, worktree: dir, log }
  const service = Lsp.create({ directory: dir, worktree: dir, log, config: true })
  return { service, lsp: LspTools.create(host, () => service).lsp }
}

const MONEY =
  'class Amount:\n    def __init__(self, v: int) -> None:\n        self.v = v\n\n    def add(self, o: "Amount") -> "Amount":\n        return Amount(self.v + o.v)\n'
const CART = {
  "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1"\n',
  "src/shop/__init__.py": "",
  "src/shop/cart.py": "from money import Amount\n\n\ndef total(a: Amount, b: Amount) -> Amount:\n    return a.add(b)\n",
}

// Real-world tester AC, AC-1: a Python project with its virtual environment in `.venv` (what `uv sync`, Poetry with
// in-project venvs and `python -m venv .venv` create; OpenCode's own pyright picks VIRTUAL_ENV, .venv or venv and sends
// its python as pythonPath). The tool's pyright used the python on PATH: every import of an installed package was
// reported `reportMissingImports`, hovers said `Unknown`, definitions into the package found nothing. Real pyright.
describe("pyright uses the project's Python environment (AC-1)", () => {
  test("imports of a package installed in .venv resolve: no reportMissingImports, definition found", async () => {
    await using proj = await project(CART)
    const site = venv(path.join(proj.dir, ".venv"))
    fs.mkdirSync(path.join(site, "money"))
    fs.writeFileSync(path.join(site, "money", "__init__.py"), MONEY)
    // the interpreter of .venv runs the file: the import is real
    execFileSync(path.join(proj.dir, ".venv", "bin", "python"), ["-c", "import money"])
    const { service, lsp } = tool(proj.dir)
    try {
      const diag = String(
        await lsp.execute({ operation: "diagnostics", filePath: "src/shop/cart.py" }, toolContext(proj.dir)),
      )
      expect(diag).not.toContain("reportMissingImports")
      expect(diag).toContain("no diagnostics")
      const def = String(
        await lsp.execute(
          { operation: "goToDefinition", filePath: "src/shop/cart.py", line: 5, character: 14 },
          toolContext(proj.dir),
        ),
      )
      expect(def).toContain("money/__init__.py")
    } finally {
      await service.stop()
    }
  }, 120_000)

  test("a pyrightconfig.json naming its own venv keeps it: a package only there resolves, .venv is not forced", async () => {
    await using proj = await project({
      ...CART,
      "pyrightconfig.json": JSON.stringify({ venvPath: "envs", venv: "shop" }),
    })
    venv(path.join(proj.dir, ".venv"))
    const site = venv(path.join(proj.dir, "envs", "shop"))
    fs.mkdirSync(path.join(site, "money"))
    fs.writeFileSync(path.join(site, "money", "__init__.py"), MONEY)
    const { service, lsp } = tool(proj.dir)
    try {
      const diag = String(
        await lsp.execute({ operation: "diagnostics", filePath: "src/shop/cart.py" }, toolContext(proj.dir)),
      )
      expect(diag).toContain("no diagnostics")
      const pyright = LspServers.resolve({ directory: proj.dir, worktree: proj.dir, config: true, env: {} })
      const launch = pyright.specs.find((s) => s.id === "pyright")!.find(proj.dir, pyright.ctx)
      expect(launch?.initialization).toBeUndefined()
    } finally {
      await service.stop()
    }
  }, 120_000)

  // Under a policy the server starts in the kernel sandbox (where bubblewrap is installed), and pyright runs the
  // environment's interpreter there: the environment is found and read inside it too.
  test("under a security policy (the composition root, servers in the kernel sandbox) the .venv is used as well", async () => {
    const home = isolateHome()
    try {
      await using dir = await securedProject(CART)
      const site = venv(dir.file(".venv"))
      fs.mkdirSync(path.join(site, "money"))
      fs.writeFileSync(path.join(site, "money", "__init__.py"), MONEY)
      const sessions = { get: async (id: string) => ({ id }) } as unknown as HostSessions
      const host: Host = { directory: dir.path, worktree: dir.path, log, messages: async () => [], sessions }
      const instance = await Builtins.create(host, { options: {}, logger: () => log, native: () => false })
      try {
        const lsp = (instance.hooks.tool as Record<string, any>).lsp
        const out = String(
          await lsp.execute({ operation: "diagnostics", filePath: "src/shop/cart.py" }, toolContext(dir.path)),
        )
        expect(out).toContain("no diagnostics")
      } finally {
        await BuiltinsSeams.from(instance).dispose()
      }
      expect(await processesIn(dir.path)).toEqual([])
    } finally {
      await home.restore()
    }
  }, 120_000)

  test("which environment: $VIRTUAL_ENV, else the nearest .venv, venv, env or .env (those two only with pyvenv.cfg) from the root up to the worktree", async () => {
    const python = (dir: string) => path.join(dir, "bin", "python")
    await using proj = await project({
      "repo/.venv/bin/python": "",
      "repo/.venv/pyvenv.cfg": "",
      "repo/svc/pyproject.toml": "",
      "repo/svc/env/bin/python": "",
      "repo/lib/pyproject.toml": "",
      "repo/lib/env/bin/python": "",
      "repo/lib/env/pyvenv.cfg": "",
      "repo/tool/pyproject.toml": "",
      "repo/tool/.env": "SECRET=1\n",
      "repo/venvs/only/venv/bin/python": "",
      "active/bin/python": "",
      "outside/.venv/bin/python": "",
      "outside/inner/pyproject.toml": "",
    })
    const repo = path.join(proj.dir, "repo")
    const ctx = { directory: repo, worktree: repo, env: {} }
    const found = (root: string, c: LspServers.Context = ctx) => LspServers.pythonEnv(path.join(repo, root), c)?.python
    // the nearest from the root up: svc's `env` has no pyvenv.cfg (not an environment), so the repository's .venv
    expect(found("svc")).toBe(python(path.join(repo, ".venv")))
    expect(found("lib")).toBe(python(path.join(repo, "lib/env")))
    // a `.env` file is never taken (nor read) for an environment
    expect(found("tool")).toBe(python(path.join(repo, ".venv")))
    expect(found("venvs/only")).toBe(python(path.join(repo, "venvs/only/venv")))
    // an activated environment wins
    const active = path.join(proj.dir, "active")
    expect(found("lib", { ...ctx, env: { VIRTUAL_ENV: active } })).toBe(python(active))
    // not above the worktree: `outside/.venv` is not the environment of a project in `outside/inner`
    const inner = path.join(proj.dir, "outside", "inner")
    expect(LspServers.pythonEnv(inner, { directory: inner, worktree: inner, env: {} })).toBeUndefined()
    // the launch: python.pythonPath for pyright's `python` section; none when the configuration names a venv
    const resolved = LspServers.resolve({ ...ctx, config: true })
    const spec = resolved.specs.find((s) => s.id === "pyright")!
    expect(spec.find(path.join(repo, "lib"), resolved.ctx)?.initialization).toEqual({
      python: { pythonPath: python(path.join(repo, "lib/env")) },
    })
    fs.writeFileSync(path.join(repo, "lib/pyproject.toml"), '[tool.pyright]\nvenvPath = "."\nvenv = "env"\n')
    expect(LspServers.pyrightChoosesVenv(path.join(repo, "lib"))).toBe(true)
    expect(spec.find(path.join(repo, "lib"), resolved.ctx)?.initialization).toBeUndefined()
    fs.writeFileSync(
      path.join(repo, "lib/pyproject.toml"),
      '[tool.pyright]\ninclude = ["src"]\n\n[tool.other]\nvenv = "x"\n',
    )
    expect(LspServers.pyrightChoosesVenv(path.join(repo, "lib"))).toBe(false)
  })
})

// Real-world tester AC, AC-2: a virtual environment inside the project that no .gitignore names (`python3 -m venv
// .venv` before Python 3.13 writes none; a project not yet under git has no ignore file) was walked as project code:
// whole-project diagnostics checked installed packages first (`.venv` sorts before `src`; a real venv holds thousands
// of .py files, over the 500-file cap, so the project's own files were never reached), and a rename's search named
// an installed package's file as one that "now breaks (rename it by hand)". Real pyright.
describe("a Python virtual environment in the project is not project code (AC-2)", () => {
  test("project diagnostics and a rename's WARNING never name files inside .venv, or a venv of another name", async () => {
    await using proj = await project({
      "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1"\n',
      "src/shop/__init__.py": "",
      "src/shop/cart.py": "def grand_total(a: int) -> int:\n    return a\n\n\nbad: int = 'x'\n",
      "tests/test_cart.py": "from shop.cart import grand_total\n\nprint(grand_total(1))\n",
    })
    for (const name of [".venv", "py311"]) {
      const site = venv(path.join(proj.dir, name))
      for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(site, `mod${i}.py`), `x: int = "s${i}"\n`)
      fs.writeFileSync(path.join(site, "stats_helper.py"), "def grand_total(x):\n    return x\n")
    }
    const { service, lsp } = tool(proj.dir)
    try {
      const diag = String(await lsp.execute({ operation: "diagnostics" }, toolContext(proj.dir)))
      expect(diag).toContain("src/shop/cart.py")
      expect(diag).toContain("1 error in 1 file of the project")
      expect(diag).not.toContain(".venv/")
      expect(diag).not.toContain("py311/")
      // named explicitly, an environment's folder is checked
      const named = String(await lsp.execute({ operation: "diagnostics", filePath: "py311" }, toolContext(proj.dir)))
      expect(named).toContain("py311/lib/")
      const out = String(
        await lsp.execute(
          { operation: "rename", filePath: "src/shop/cart.py", line: 1, character: 5, newName: "sum_total" },
          toolContext(proj.dir),
        ),
      )
      expect(fs.readFileSync(path.join(proj.dir, "tests/test_cart.py"), "utf8")).toContain("sum_total")
      expect(out).not.toContain(".venv/")
      expect(out).not.toContain("py311/")
      expect(out).toContain("All files were written.")
    } finally {
      await service.stop()
    }
  }, 120_000)
})
