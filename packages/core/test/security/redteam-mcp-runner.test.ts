/**
 * Red team N4: OpenCode starts a configured local MCP server at every start, on the host, outside the sandbox. The
 * entry `init --mcp` writes (`npx -y opencode-builtins mcp`) ran a `node_modules/.bin/opencode-builtins` that one
 * sandboxed command of the agent created, in the project or in any folder above it (npm exec looks in each), at the
 * next start. What a package runner or a bare command name would resolve to is held on both routes, present or not;
 * one a command creates is moved aside. Names are unique per run: the folder above the project is the shared /tmp.
 */
import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { SecurityMcp } from "../../security/mcp"
import { ROUTES, isolateHome, withMcp, type Result } from "./redteam-helpers"

const HEAVY = { timeout: 90_000 }
const home = isolateHome()
afterAll(() => home.restore())

const fresh = withMcp

function expectTyped(r: Result) {
  expect(r.refused).toBe(true)
  expect(r.reason).toContain("Blocked by the project's security policy")
}

const unique = () => `ocb-rt-mcp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
const SCRIPT = (marker: string) => `#!/bin/sh\\ntouch ${marker}\\n`
/**
 * A shell command planting a program at `file` (relative to the project) that would touch `marker`, its name built at
 * run time: a literal one is refused before it runs (the static check knows the held paths); the sandbox is what holds.
 */
const plant = (file: string, marker: string) =>
  `d='${path.dirname(file)}'; f="$d/${runtime(path.basename(file))}"; mkdir -p "$d" && printf '${SCRIPT(marker)}' > "$f" && chmod +x "$f"; echo RAN-OK`
/** A word the static check cannot know before the command runs (read back from a file the command writes). */
const runtime = (word: string) => `$(printf '%s' '${word}' > .w && cat .w)`
const asides = (folder: string, name: string) =>
  fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => f.startsWith(name + ".blocked-by-security-")) : []

for (const route of ROUTES) {
  describe(`red team N4 (MCP server commands) on the ${route} route`, () => {
    test(
      "npx <pkg>: a node_modules/.bin program or package the agent creates in the project or above it is moved aside",
      async () => {
        const name = unique()
        await using box = await fresh(route, {
          [name]: { type: "local", command: ["npx", "-y", name, "mcp"] },
          pinned: { type: "local", command: ["npx", "-y", `${name}-p@1.2.3`, "mcp"] },
        })
        const marker = box.dir.file("PWNED")
        // The write tools: refused whether the file exists or not.
        expectTyped(
          await box.s.call("write", { filePath: `node_modules/.bin/${name}`, content: "#!/bin/sh\ntouch PWNED\n" }),
        )
        // One sandboxed command: the program npm exec would find first.
        expectTyped(
          await box.s.bash(`mkdir -p node_modules/.bin && cat > node_modules/.bin/${name} <<'EOF'\ntouch PWNED\nEOF`),
        )
        const r = await box.s.bash(plant(`node_modules/.bin/${name}`, marker))
        expect(r.refused).toBe(false)
        expect(r.output).toContain(`node_modules/.bin/${name} was created by the command`)
        expect(fs.existsSync(box.dir.file(`node_modules/.bin/${name}`))).toBe(false)
        expect(asides(box.dir.file("node_modules/.bin"), name).length).toBe(1)
        // The package folder (npm exec runs a package the local tree holds, pinned version or not).
        const pkg = await box.s.bash(
          `d=node_modules/${runtime(name)}; mkdir -p $d && echo '{"name":"${name}","version":"1.0.0","bin":"x.js"}' > $d/package.json; echo RAN-OK`,
        )
        expect(pkg.output).toContain(`node_modules/${name} was created by the command`)
        expect(fs.existsSync(box.dir.file(`node_modules/${name}`))).toBe(false)
        // A pinned spec: npm exec looks for `.bin/<spec as written>` first.
        await box.s.bash(plant(`node_modules/.bin/${name}-p@1.2.3`, marker))
        expect(fs.existsSync(box.dir.file(`node_modules/.bin/${name}-p@1.2.3`))).toBe(false)
        // npm exec's cache for the spec (in the test's home): a package there runs without asking the registry. The
        // host's npm cache is read-only to commands (red team GI): inside the sandbox `~/.npm` is the commands' own
        // cache, so what a command writes there never reaches the host's.
        fs.mkdirSync(path.join(home.home, ".npm"), { recursive: true })
        const cache = path.join(home.home, ".npm", "_npx", SecurityMcp.npxHash([name]))
        const cached = await box.s.bash(
          `d=${cache}/node_modules/${runtime(name)}; mkdir -p $d && echo '{"name":"${name}","version":"1.0.0","bin":"x.js"}' > $d/package.json; echo RAN-OK`,
        )
        expect(cached.refused).toBe(false)
        expect(fs.existsSync(cache)).toBe(false)
        expect(fs.readdirSync(path.join(home.home, ".npm"))).toEqual([])
        // Above the project: npm exec looks in every folder up to `/`.
        const parent = path.dirname(box.dir.path)
        const bin = path.join(parent, "node_modules", ".bin")
        const made = !fs.existsSync(path.join(parent, "node_modules"))
        try {
          const up = await box.s.bash(plant(`../node_modules/.bin/${name}`, marker))
          // Under `npm test` the check before the command already counts that folder as code OpenCode installs and
          // refuses it (seen in the full run); run alone it is moved aside after it: either way nothing is left to run.
          if (up.refused) expectTyped(up)
          else expect(asides(bin, name).length).toBe(1)
          expect(fs.existsSync(path.join(bin, name))).toBe(false)
        } finally {
          for (const f of [name, ...asides(bin, name)]) fs.rmSync(path.join(bin, f), { force: true })
          // The folders the command made in the shared parent, when it made them (and nothing else is in them).
          if (made)
            for (const dir of [bin, path.dirname(bin)])
              try {
                fs.rmdirSync(dir)
              } catch {
                // Not empty (another process uses it) or gone.
              }
        }
        expect(fs.existsSync(marker)).toBe(false)
      },
      HEAVY,
    )

    test(
      "other runners and bare names: bunx, pnpm dlx, yarn dlx (its .yarnrc.yml above the project), a bare command",
      async () => {
        const name = unique()
        await using box = await fresh(route, {
          bun: { type: "local", command: ["bunx", `${name}-b`] },
          pnpm: { type: "local", command: ["pnpm", "dlx", `@scope/${name}-s`] },
          yarn: { type: "local", command: ["yarn", "dlx", `${name}-y`], cwd: "tools/mcp" },
          bare: { type: "local", command: [`${name}-bare`, "--stdio"] },
        })
        await box.s.bash(plant(`node_modules/.bin/${name}-b`, "x"))
        await box.s.bash(plant(`node_modules/@scope/${name}-s/cli.js`, "x"))
        // The yarn server runs in tools/mcp: the project root is a folder above it.
        await box.s.bash(plant(`node_modules/.bin/${name}-y`, "x"))
        await box.s.bash(plant(`tools/node_modules/.bin/${name}-y`, "x"))
        const rc = await box.s.bash(
          "printf 'yarnPath: ./evil.cjs\\n' > $(printf .yarnrc.yml > .w && cat .w); echo RAN-OK",
        )
        expect(rc.output).toContain(".yarnrc.yml was created by the command")
        await box.s.bash(plant(`node_modules/.bin/${name}-bare`, "x"))
        // bunx's own folder in the temporary folder: what it holds runs, even offline.
        const uid = typeof process.getuid === "function" ? process.getuid() : 0
        const bunxDir = path.join(process.env.TMPDIR || os.tmpdir(), `bunx-${uid}-${name}-b@latest`)
        try {
          const bx = await box.s.bash(
            `b=${path.dirname(bunxDir)}/${runtime(path.basename(bunxDir))}; mkdir -p $b/node_modules/.bin && echo x > $b/node_modules/.bin/${name}-b; echo RAN-OK`,
          )
          expect(bx.refused).toBe(false)
          expect(bx.output).toContain("was created by the command")
          expect(fs.existsSync(bunxDir)).toBe(false)
        } finally {
          for (const f of fs.readdirSync(path.dirname(bunxDir)).filter((f) => f.startsWith(path.basename(bunxDir))))
            fs.rmSync(path.join(path.dirname(bunxDir), f), { recursive: true, force: true })
        }
        for (const p of [
          `node_modules/.bin/${name}-b`,
          `node_modules/@scope/${name}-s`,
          `node_modules/.bin/${name}-y`,
          `tools/node_modules/.bin/${name}-y`,
          ".yarnrc.yml",
          `node_modules/.bin/${name}-bare`,
        ])
          expect([p, fs.existsSync(box.dir.file(p))]).toEqual([p, false])
      },
      HEAVY,
    )

    // npm 11 runs the bin the nearest package.json declares under the name npx is given, before anything else.
    test(
      "a bin of the server's name added to the project's package.json is undone; other changes to it stay",
      async () => {
        const name = unique()
        await using box = await fresh(route, { s: { type: "local", command: ["npx", "-y", name, "mcp"] } })
        const pkg = box.dir.file("package.json")
        const before = fs.readFileSync(pkg, "utf8")
        const withBin = JSON.stringify({ ...JSON.parse(before), bin: { [name]: "evil.js" } }, null, 2)
        // By a command…
        const r = await box.s.bash(`cat > package.json <<'EOF'\n${withBin}\nEOF\necho RAN-OK`)
        expect(r.refused).toBe(false)
        expect(r.output).toContain(`package.json gained a bin named ${name}`)
        expect(fs.readFileSync(pkg, "utf8")).toBe(before)
        // … and by a write tool (a string bin is named after the package).
        const w = await box.s.call("write", {
          filePath: "package.json",
          content: JSON.stringify({ ...JSON.parse(before), name, bin: "evil.js" }),
        })
        expect(w.output).toContain(`package.json gained a bin named ${name}`)
        expect(fs.readFileSync(pkg, "utf8")).toBe(before)
        // Ordinary changes (a dependency, another bin) are the agent's to make.
        const dep = JSON.stringify({ ...JSON.parse(before), bin: { other: "x.js" }, dependencies: { a: "1" } })
        await box.s.call("write", { filePath: "package.json", content: dep })
        expect(fs.readFileSync(pkg, "utf8")).toBe(dep)
      },
      HEAVY,
    )

    test(
      "an installed node_modules/.bin program and package of an npx server are held read-only",
      async () => {
        const name = unique()
        await using box = await fresh(
          route,
          { s: { type: "local", command: ["npx", name] } },
          {
            [`node_modules/.bin/${name}`]: "#!/bin/sh\necho the real one\n",
            [`node_modules/${name}/package.json`]: `{"name":"${name}","version":"1.0.0"}\n`,
          },
        )
        const r = await box.s.bash(
          `n=${runtime(name)}; echo 'touch PWNED' >> node_modules/.bin/$n; echo '{}' > node_modules/$n/package.json; echo RAN-OK`,
        )
        expect(r.refused).toBe(false)
        expect(r.output).toContain("RAN-OK")
        expect(fs.readFileSync(box.dir.file(`node_modules/.bin/${name}`), "utf8")).toBe(
          "#!/bin/sh\necho the real one\n",
        )
        expect(fs.readFileSync(box.dir.file(`node_modules/${name}/package.json`), "utf8")).toContain('"version"')
        expectTyped(
          await box.s.call("write", { filePath: `node_modules/${name}/index.js`, content: "process.exit(1)\n" }),
        )
      },
      HEAVY,
    )

    // Red team Q1: Python puts the server's folder first on sys.path for `-m` and runs every package initialiser along
    // the name; `site` runs the import lines of a `.pth` file of the interpreter's environment; `go run` compiles
    // every .go file of the package folder. Each ran on the host at the next start, reading a read-denied file.
    test(
      "python -m, a project .venv and go run: a shadowing module, a package __init__.py, a .pth, a new .go file are held",
      async () => {
        const site = ".venv/lib/python3.11/site-packages"
        await using box = await fresh(
          route,
          {
            fetch: { type: "local", command: ["python3", "-m", "mcp_server_fetch"] },
            local: { type: "local", command: [".venv/bin/python", "-m", "tools.mcp"] },
            gomcp: { type: "local", command: ["go", "run", "./cmd/mcp"] },
          },
          {
            "tools/__init__.py": "",
            "tools/mcp.py": "print('server')\n",
            ".venv/pyvenv.cfg": "home = /usr/bin\n",
            [`${site}/ok.pth`]: "/tmp\n",
            "go.mod": "module example.com/m\n\ngo 1.19\n",
            "cmd/mcp/main.go": "package main\n\nfunc main() {}\n",
          },
        )
        // The module `python3 -m mcp_server_fetch` would find in the project before the installed one.
        const shadow = await box.s.bash(
          `d=${runtime("mcp_server_fetch")}; mkdir -p $d && echo 'import os' > $d/__main__.py; echo RAN-OK`,
        )
        expect(shadow.refused).toBe(false)
        expect(shadow.output).toContain("mcp_server_fetch/__main__.py was created by the command")
        expect(fs.existsSync(box.dir.file("mcp_server_fetch/__main__.py"))).toBe(false)
        expect(
          (await box.s.bash(`echo 'import os' > ${runtime("mcp_server_fetch.py")}; echo RAN-OK`)).output,
        ).toContain("mcp_server_fetch.py was created by the command")
        expect(fs.existsSync(box.dir.file("mcp_server_fetch.py"))).toBe(false)
        // A cached module Python would run in place of a source of the size and time it records; the cache folder stays
        // the agent's (its own test runs write there).
        const pyc = await box.s.bash(
          `mkdir -p tools/__pycache__ && echo x > tools/__pycache__/${runtime("mcp.cpython-311.pyc")}; echo x > tools/__pycache__/own.pyc; echo RAN-OK`,
        )
        expect(pyc.output).toContain("tools/__pycache__/mcp.cpython-311.pyc was created by the command")
        expect(fs.existsSync(box.dir.file("tools/__pycache__/mcp.cpython-311.pyc"))).toBe(false)
        expect(fs.existsSync(box.dir.file("tools/__pycache__/own.pyc"))).toBe(true)
        // The package initialiser Python runs before tools/mcp.py, by a write tool and by a command.
        expectTyped(await box.s.call("write", { filePath: "tools/__init__.py", content: "import os\n" }))
        await box.s.bash(`echo 'import os' >> tools/${runtime("__init__.py")}; echo RAN-OK`)
        expect(fs.readFileSync(box.dir.file("tools/__init__.py"), "utf8")).toBe("")
        // A .pth file of the project's virtual environment (its import lines run at interpreter start).
        expectTyped(await box.s.call("write", { filePath: `${site}/zz.pth`, content: "import os\n" }))
        await box.s.bash(`echo 'import os' > ${site}/${runtime("zz.pth")}; echo RAN-OK`)
        expect(fs.existsSync(box.dir.file(`${site}/zz.pth`))).toBe(false)
        expect(fs.readFileSync(box.dir.file(`${site}/ok.pth`), "utf8")).toBe("/tmp\n")
        // The package go run compiles: its file, and a new one beside it.
        expectTyped(await box.s.call("write", { filePath: "cmd/mcp/main.go", content: "package main\n" }))
        await box.s.bash(`echo 'package main' > cmd/mcp/${runtime("zz.go")}; echo RAN-OK`)
        expect(fs.existsSync(box.dir.file("cmd/mcp/zz.go"))).toBe(false)
        expect(fs.readFileSync(box.dir.file("cmd/mcp/main.go"), "utf8")).toBe("package main\n\nfunc main() {}\n")
        // The rest of the project stays the agent's.
        expect((await box.s.call("write", { filePath: "tools/other.py", content: "x = 1\n" })).refused).toBe(false)
      },
      HEAVY,
    )

    // A server started as `python3 -m <module>` has the project folder first on sys.path: a `json.py` or an
    // `mcp/__init__.py` the agent creates there shadows the standard library's or an installed package's module for
    // every import the server makes, and ran on the host at the next start. So does a folder PYTHONPATH names.
    test(
      "python -m and PYTHONPATH: a module shadowing the standard library or an installed package is held, present or not",
      async () => {
        await using box = await fresh(
          route,
          {
            fetch: { type: "local", command: ["python3", "-m", "mcp_server_fetch"] },
            vendored: {
              type: "local",
              command: ["python3", "-P", "-m", "vsrv"],
              cwd: "srv",
              environment: { PYTHONPATH: "../vendor" },
            },
            isolated: { type: "local", command: ["python3", "-I", "-m", "isrv"], cwd: "iso" },
          },
          {
            "util.py": "X = 1\n",
            "mcp/__init__.py": "",
            "mcp/server.py": "print('deeper')\n",
            "vendor/keep.txt": "",
            "iso/keep.txt": "",
            "srv/keep.txt": "",
          },
        )
        // The write tools: a new name, a present module, a package initialiser; deeper files and other files stay.
        for (const file of ["json.py", "util.py", "mcp/__init__.py", "asyncio/__init__.py", "vendor/httpx.py"])
          expectTyped(await box.s.call("write", { filePath: file, content: "import os\n" }))
        expectTyped(await box.s.call("edit", { filePath: "util.py", oldString: "X = 1", newString: "import os" }))
        // apply_patch: a new module, a file moved onto a held name; ast_grep_replace over a present module.
        const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")
        expectTyped(await box.s.call("apply_patch", { patchText: patch("*** Add File: typing.py", "+import os") }))
        fs.writeFileSync(box.dir.file("notes.txt"), "import os\n")
        expectTyped(
          await box.s.call("apply_patch", {
            patchText: patch(
              "*** Update File: notes.txt",
              "*** Move to: asyncio.py",
              "@@",
              "-import os",
              "+import sys",
            ),
          }),
        )
        expect(fs.existsSync(box.dir.file("typing.py")) || fs.existsSync(box.dir.file("asyncio.py"))).toBe(false)
        const ast = await box.s.call("ast_grep_replace", {
          pattern: "X = $V",
          rewrite: "import os",
          lang: "python",
          paths: ["util.py"],
          dryRun: false,
        })
        if (ast.refused) expectTyped(ast)
        expect(fs.readFileSync(box.dir.file("util.py"), "utf8")).toBe("X = 1\n")
        for (const file of ["mcp/server.py", "notes.md", "iso/json.py", "srv/json.py", "my-notes.py"])
          expect([file, (await box.s.call("write", { filePath: file, content: "x = 1\n" })).refused]).toEqual([
            file,
            false,
          ])
        // Commands: names built at run time, so only the sandbox and the sweep stand between.
        const shadow = await box.s.bash(`echo 'import os' > ${runtime("json.py")}; echo RAN-OK`)
        expect(shadow.refused).toBe(false)
        expect(shadow.output).toContain("RAN-OK")
        expect(shadow.output).toContain("json.py was created by the command")
        expect(fs.existsSync(box.dir.file("json.py"))).toBe(false)
        expect(asides(box.dir.path, "json.py").length).toBe(1)
        await box.s.bash(`d=${runtime("pydantic")}; mkdir -p $d && echo 'import os' > $d/__init__.py; echo RAN-OK`)
        expect(fs.existsSync(box.dir.file("pydantic/__init__.py"))).toBe(false)
        await box.s.bash(
          `mkdir -p __pycache__ && echo x > __pycache__/${runtime("typing.cpython-311.pyc")}; echo RAN-OK`,
        )
        expect(fs.existsSync(box.dir.file("__pycache__/typing.cpython-311.pyc"))).toBe(false)
        await box.s.bash(`echo x > ${runtime("_ssl.cpython-311-x86_64-linux-gnu.so")}; echo RAN-OK`)
        expect(fs.existsSync(box.dir.file("_ssl.cpython-311-x86_64-linux-gnu.so"))).toBe(false)
        // A package through a link to a folder of the project whose initialiser is a deeper file: the link is moved.
        const linked = await box.s.bash(
          `mkdir -p lib/evilpkg && echo 'import os' > lib/evilpkg/__init__.py && ln -s lib/evilpkg ${runtime("yaml")}; echo RAN-OK`,
        )
        expect(linked.output).toContain("yaml was created by the command")
        expect(fs.existsSync(box.dir.file("yaml"))).toBe(false)
        expect(fs.existsSync(box.dir.file("lib/evilpkg/__init__.py"))).toBe(true)
        await box.s.bash(`echo 'import os' > vendor/${runtime("httpx.py")}; echo RAN-OK`)
        expect(fs.existsSync(box.dir.file("vendor/httpx.py"))).toBe(false)
        // A present module and package initialiser are read-only for commands.
        await box.s.bash(
          `echo 'import os' >> ${runtime("util.py")}; echo 'import os' > mcp/${runtime("__init__.py")}; echo RAN-OK`,
        )
        expect(fs.readFileSync(box.dir.file("util.py"), "utf8")).toBe("X = 1\n")
        expect(fs.readFileSync(box.dir.file("mcp/__init__.py"), "utf8")).toBe("")
        // What no held folder's names are stays the agent's: a deeper file, a -I server's folder, a -P server's folder.
        const free = await box.s.bash(
          `echo y > mcp/${runtime("server.py")}; echo y > iso/${runtime("json.py")}; echo y > srv/${runtime("json.py")}; echo RAN-OK`,
        )
        expect(free.output).not.toContain("was created by the command")
        for (const file of ["mcp/server.py", "iso/json.py", "srv/json.py"])
          expect(fs.readFileSync(box.dir.file(file), "utf8")).toBe("y\n")
      },
      HEAVY,
    )

    // Red team S5-2: the same servers behind `env` with options, `sh -c`, and uv's global `--directory` (the MCP
    // quickstart's spelling) held nothing: each planted module ran on the host at the next start.
    test(
      "env -i, env -S, sh -c and uv --directory: the module, entry file and .venv a wrapped Python launcher runs are held",
      async () => {
        const site = "weather/.venv/lib/python3.11/site-packages"
        await using box = await fresh(
          route,
          {
            envi: { type: "local", command: ["env", "-i", "PATH=/usr/bin:/bin", "python3", "-m", "envimod"] },
            envs: { type: "local", command: ["env", "-S", "python3 -m envsmod"] },
            shc: { type: "local", command: ["sh", "-c", "python3 -m shcmod"] },
            weather: { type: "local", command: ["uv", "--directory", "weather", "run", "weather.py"] },
          },
          {
            "weather/weather.py": "print('server')\n",
            "weather/.venv/pyvenv.cfg": "home = /usr/bin\n",
            [`${site}/ok.pth`]: "/tmp\n",
          },
        )
        for (const file of ["envimod.py", "envsmod.py", "shcmod.py", "shcmod/__init__.py", "weather/weather.py"])
          expectTyped(await box.s.call("write", { filePath: file, content: "import os\n" }))
        expectTyped(await box.s.call("write", { filePath: `${site}/zz.pth`, content: "import os\n" }))
        expect((await box.s.bash(`echo 'import os' > ${runtime("envimod.py")}; echo RAN-OK`)).output).toContain(
          "envimod.py was created by the command",
        )
        expect(fs.existsSync(box.dir.file("envimod.py"))).toBe(false)
        await box.s.bash(`echo 'import os' > ${runtime("shcmod.py")}; echo RAN-OK`)
        expect(fs.existsSync(box.dir.file("shcmod.py"))).toBe(false)
        expect(fs.readFileSync(box.dir.file("weather/weather.py"), "utf8")).toBe("print('server')\n")
        expect(fs.existsSync(box.dir.file(`${site}/zz.pth`))).toBe(false)
        // The rest of the project stays the agent's.
        expect((await box.s.call("write", { filePath: "weather/notes.md", content: "x\n" })).refused).toBe(false)
      },
      HEAVY,
    )

    // Red team V3: uv reads `.python-version` from the folder it starts in and each above it to the project, any Python
    // request form, an interpreter's path included (uv's documentation; uv is not run here), and runs that interpreter
    // on the host at the next start; `uv.toml` and `pyproject.toml` choose the interpreter and environment too.
    test(
      "uv run: .python-version, uv.toml and pyproject.toml of the server's folder and above are held, present or not",
      async () => {
        await using box = await fresh(
          route,
          {
            py: { type: "local", command: ["uv", "run", "-m", "srv"] },
            weather: { type: "local", command: ["uv", "--directory", "weather", "run", "weather.py"] },
          },
          {
            "srv/__init__.py": "",
            "srv/__main__.py": "import json\n",
            "pyproject.toml": "[project]\nname = 'x'\n",
            "weather/weather.py": "print('server')\n",
          },
        )
        for (const file of [
          ".python-version",
          ".python-versions",
          "uv.toml",
          "pyproject.toml",
          "weather/.python-version",
        ])
          expectTyped(await box.s.call("write", { filePath: file, content: "./tools/python3\n" }))
        const b = await box.s.bash(`echo ./tools/python3 > ${runtime(".python-version")}; echo RAN-OK`)
        expect(b.refused).toBe(false)
        expect(b.output).toContain("RAN-OK")
        expect(b.output).toContain(".python-version was created by the command")
        expect(fs.existsSync(box.dir.file(".python-version"))).toBe(false)
        expect(asides(box.dir.path, ".python-version").length).toBe(1)
        await box.s.bash(`echo 'python-preference = "only-system"' > weather/${runtime("uv.toml")}; echo RAN-OK`)
        expect(fs.existsSync(box.dir.file("weather/uv.toml"))).toBe(false)
        await box.s.bash(`echo '[tool.uv]' >> ${runtime("pyproject.toml")}; echo RAN-OK`)
        expect(fs.readFileSync(box.dir.file("pyproject.toml"), "utf8")).toBe("[project]\nname = 'x'\n")
        // Other files of the folders stay the agent's.
        expect((await box.s.call("write", { filePath: "weather/notes.md", content: "x\n" })).refused).toBe(false)
      },
      HEAVY,
    )

    // Red team V7: CPython imports from a zip file on sys.path (zipimport): a `deps.zip` named by PYTHONPATH was taken
    // as a folder, so the archive itself could be replaced and its `json.py` shadowed the standard library's.
    test(
      "PYTHONPATH naming a zip archive (present or not): the archive is held as a file",
      async () => {
        const zip = "PK\u0005\u0006" + "\u0000".repeat(18)
        await using box = await fresh(
          route,
          {
            py: {
              type: "local",
              command: ["python3", "-m", "srv"],
              environment: { PYTHONPATH: "deps.zip:lib/new.whl" },
            },
          },
          { "srv/__init__.py": "", "srv/__main__.py": "import json\n", "deps.zip": zip, "lib/keep.txt": "" },
        )
        expectTyped(await box.s.call("write", { filePath: "deps.zip", content: "replaced" }))
        expectTyped(await box.s.call("write", { filePath: "lib/new.whl", content: "PK" }))
        await box.s.bash(`f=${runtime("deps.zip")}; rm -f "$f"; printf x > "$f"; echo RAN-OK`)
        expect(fs.readFileSync(box.dir.file("deps.zip"), "utf8")).toBe(zip)
        const made = await box.s.bash(`printf PK > lib/${runtime("new.whl")}; echo RAN-OK`)
        expect(made.output).toContain("new.whl was created by the command")
        expect(fs.existsSync(box.dir.file("lib/new.whl"))).toBe(false)
        expect((await box.s.call("write", { filePath: "lib/notes.md", content: "x\n" })).refused).toBe(false)
      },
      HEAVY,
    )
  })
}
