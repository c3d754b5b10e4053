import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { processesIn } from "../../packages/core/test/lsp/fixtures"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"
import { execFileSync } from "../../packages/core/test/spawn-sync"

/** A real virtual environment (`python3 -m venv`, no pip) in the project's `.venv`; its site-packages folder. */
function venv(dir: string) {
  execFileSync("python3", ["-m", "venv", "--without-pip", path.join(dir, ".venv")])
  const lib = path.join(dir, ".venv", "lib")
  return path.join(lib, fs.readdirSync(lib)[0]!, "site-packages")
}

const SHOP = { "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1"\n', "src/shop/__init__.py": "" }

// Real-world tester AC through stock OpenCode, the plugin's pyright (this repository's node_modules) and a real
// `.venv` no .gitignore names. AC-1: pyright ignored the project's .venv (OpenCode's own pyright sends
// VIRTUAL_ENV/.venv/venv's python as pythonPath), so an installed package's import was an error. AC-2: whole-project
// diagnostics checked the .venv as project code, before the project's own files.
for (const target of targets()) {
  describe(`lsp and a Python virtual environment on stock opencode ${target.label}`, () => {
    test("AC-1: diagnostics of a file importing a package installed in .venv report no reportMissingImports", async () => {
      await using project = await Harness.project({
        bin: target.bin,
        files: {
          ...SHOP,
          "src/shop/cart.py":
            "from money import Amount\n\n\ndef total(a: Amount, b: Amount) -> Amount:\n    return a.add(b)\n",
        },
      })
      const site = venv(project.dir)
      fs.mkdirSync(path.join(site, "money"))
      fs.writeFileSync(
        path.join(site, "money", "__init__.py"),
        'class Amount:\n    def add(self, o: "Amount") -> "Amount":\n        return o\n',
      )
      const server = ModelServer.start([
        ModelServer.call("lsp", { operation: "diagnostics", filePath: "src/shop/cart.py" }),
        ModelServer.text("done"),
      ])
      try {
        const result = await Harness.run(project, server, "check src/shop/cart.py", { timeoutMs: 150_000 })
        expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["lsp", "completed"]])
        expect(result.tools[0].output).not.toContain("reportMissingImports")
        expect(result.tools[0].output).toContain("no diagnostics")
      } finally {
        server.stop()
      }
      expect(await processesIn(project.dir)).toEqual([])
    }, 180_000)
    test("AC-2: project diagnostics report the project's own error and nothing inside .venv", async () => {
      await using project = await Harness.project({
        bin: target.bin,
        files: { ...SHOP, "src/shop/cart.py": "bad: int = 'x'\n" },
      })
      const site = venv(project.dir)
      for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(site, `mod${i}.py`), `x: int = "s${i}"\n`)
      const server = ModelServer.start([
        ModelServer.call("lsp", { operation: "diagnostics", severity: "error" }),
        ModelServer.text("done"),
      ])
      try {
        const result = await Harness.run(project, server, "check the project", { timeoutMs: 150_000 })
        expect(result.tools.map((t) => [t.tool, t.status])).toEqual([["lsp", "completed"]])
        expect(result.tools[0].output).toContain("1 error in 1 file of the project")
        expect(result.tools[0].output).toContain("src/shop/cart.py")
        expect(result.tools[0].output).not.toContain(".venv/")
      } finally {
        server.stop()
      }
      expect(await processesIn(project.dir)).toEqual([])
    }, 180_000)
  })
}
