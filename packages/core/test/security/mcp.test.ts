import { describe, expect, test } from "bun:test"
import crypto from "crypto"
import fs from "fs"
import path from "path"
import { SecurityMcp } from "../../security/mcp"
import { tmpdir } from "../fixture"

describe("SecurityMcp", () => {
  test("sanitises like OpenCode and matches the whole server name", () => {
    expect(SecurityMcp.sanitise("my.docs server")).toBe("my_docs_server")
    expect(SecurityMcp.serversOf("my_docs_server_search", ["my.docs server"])).toEqual(["my.docs server"])
    expect(SecurityMcp.serversOf("docs_search", ["doc", "docs"])).toEqual(["docs"])
    expect(SecurityMcp.serversOf("docs_", ["docs"])).toEqual([])
    expect(SecurityMcp.serversOf("read", ["docs"])).toEqual([])
  })
  test("ambiguous ids: the strictest policy of the candidate servers", () => {
    const state = {
      status: "valid",
      root: "/r",
      config: { mcp: { servers: { a: "trusted", a_b: "blocked" } }, hasExplicit: false },
    } as any
    expect(SecurityMcp.policyOfTool(state, "a_b_c", ["a", "a_b"])).toEqual({ policy: "blocked", servers: ["a", "a_b"] })
    expect(SecurityMcp.policyOfTool(state, "a_x", ["a", "a_b"])).toEqual({ policy: "trusted", servers: ["a"] })
    expect(SecurityMcp.policyOfTool(state, "zzz", ["a"])).toBeUndefined()
  })
  test("OpenCode's resource tools reach the server their argument names, or every configured one", () => {
    expect(SecurityMcp.serversOfCall("read_mcp_resource", { server: "a_b", uri: "x://y" }, ["a", "a_b"])).toEqual([
      "a_b",
    ])
    expect(SecurityMcp.serversOfCall("list_mcp_resources", {}, ["a", "a_b"])).toEqual(["a", "a_b"])
    expect(SecurityMcp.serversOfCall("list_mcp_resource_templates", { server: "" }, ["a"])).toEqual(["a"])
    expect(SecurityMcp.serversOfCall("a_b_c", { server: "a" }, ["a", "a_b"])).toEqual(["a", "a_b"])
  })
  test("the files a local MCP server runs: paths, the project's .bin programs, file arguments, -m modules", async () => {
    await using dir = await tmpdir({
      "mcp/server.ts": "x",
      "run.sh": "x",
      "tools/serve.py": "x",
      "tools/pkg/mod/__main__.py": "x",
      "node_modules/.bin/my-mcp": "x",
      "node_modules/.bin/eslint": "x",
    })
    const files = await SecurityMcp.localFiles(
      {
        a: { type: "local", command: ["bun", "mcp/server.ts", "--port", "3"] },
        b: { type: "local", command: ["./run.sh"] },
        c: { type: "local", command: ["uv", "run", "serve.py"], cwd: "tools" },
        d: { type: "local", command: ["python", "-m", "pkg.mod"], cwd: "tools" },
        e: { type: "local", command: ["npx", "-y", "my-mcp"] },
        f: { type: "local", command: ["bun", "/usr/bin/env"] },
        off: { type: "local", command: ["eslint"], enabled: false },
        remote: { type: "remote", url: "https://x" },
        broken: { type: "local", command: "bun mcp/server.ts" },
      },
      { directory: dir.path },
    )
    expect(files.map((f) => path.relative(dir.path, f)).sort()).toEqual(
      [
        "mcp/server.ts",
        "run.sh",
        "tools/serve.py",
        "tools/pkg/mod/__main__.py",
        "node_modules/.bin/my-mcp",
        // Bun starts servers a and f: its preload file and .env files of the folder, present or not.
        "bunfig.toml",
        ...SecurityMcp.BUN_ENV_FILES,
        // npm's .npmrc from each server's folder up to the project.
        ".npmrc",
        "tools/.npmrc",
      ].sort(),
    )
    expect(await SecurityMcp.localFiles(undefined, { directory: dir.path })).toEqual([])
  })
  // Bun named otherwise, launcher flags and npm's settings in a server's own folder (red-team helper, 1.18.x).
  test("Bun by another name, files named by launcher options, Bun's --cwd", async () => {
    await using dir = await tmpdir({ "mcp/setup.cjs": "x", "mcp/server.js": "x", ".env.x": "x", "mcp2/s.ts": "x" })
    const rel = (files: string[]) => files.map((f) => path.relative(dir.path, f)).sort()
    const bunfig = async (mcp: unknown) =>
      rel(await SecurityMcp.localFiles(mcp, { directory: dir.path })).filter((f) => f.endsWith("bunfig.toml"))
    expect(await bunfig({ a: { command: ["/opt/bun/bin/bun.exe", "s.ts"] } })).toEqual(["bunfig.toml"])
    expect(await bunfig({ a: { command: ["env", "bun", "s.ts"] } })).toEqual(["bunfig.toml"])
    expect(await bunfig({ a: { command: ["bun", "--cwd", "mcp2", "s.ts"] } })).toEqual([
      "bunfig.toml",
      "mcp2/bunfig.toml",
    ])
    expect(await bunfig({ a: { command: ["python", "s.py"] } })).toEqual([])
    const node = rel(
      await SecurityMcp.localFiles(
        { a: { command: ["node", "--require=./mcp/setup.cjs", "--env-file", ".env.x", "mcp/server.js"] } },
        { directory: dir.path },
      ),
    )
    expect(node).toEqual([".env.x", ".npmrc", "mcp/server.js", "mcp/setup.cjs"])
  })
  // A server started through a shell's -c text (noticed in the review of the third round).
  test("a server started by sh -c: the files its script runs, after cd, and Bun's files beside them", async () => {
    await using dir = await tmpdir({ "mcp/server.js": "x", "mcp/s.ts": "x", "srv.py": "x" })
    const rel = (files: string[]) => files.map((f) => path.relative(dir.path, f)).sort()
    const of = async (command: string[]) =>
      rel(await SecurityMcp.localFiles({ a: { command } }, { directory: dir.path }))
    expect(await of(["sh", "-c", "cd mcp && exec node server.js --port 1"])).toEqual([".npmrc", "mcp/server.js"])
    expect(await of(["/bin/bash", "-lc", "python3 srv.py"])).toEqual([".npmrc", "srv.py"])
    expect(await of(["bash", "-c", "bun mcp/s.ts"])).toEqual(
      [".npmrc", "mcp/s.ts", "mcp/bunfig.toml", ...SecurityMcp.BUN_ENV_FILES.map((f) => "mcp/" + f)].sort(),
    )
    // Not a shell's script: -c is left alone (no file named by the text).
    expect(await of(["node", "-c", "mcp/server.js"])).toEqual([".npmrc", "mcp/server.js"])
  })
  // Red team N4: what a package runner or a bare command name resolves to, in every folder up to `/`, present or not.
  test("what a runner or a bare command name resolves to: .bin programs, packages and resolution files up to /", async () => {
    await using dir = await tmpdir({})
    const up = (p: string) => {
      const out: string[] = []
      for (let d = dir.file("a"); ; d = path.dirname(d)) {
        out.push(path.join(d, p))
        if (d === path.dirname(d)) return out
      }
    }
    const of = (command: unknown[], extra: Record<string, unknown> = {}) =>
      SecurityMcp.resolvedPaths({ s: { type: "local", command, cwd: "a", ...extra } }, { directory: dir.path })
    const npx = of(["npx", "-y", "my-mcp@1.2.0", "--port", "3"])
    // Every folder from the server's folder (a/) up to `/`, system folders aside.
    for (const p of [
      ...up("node_modules/.bin/my-mcp"),
      ...up("node_modules/.bin/my-mcp@1.2.0"),
      ...up("node_modules/my-mcp/"),
      ...up(".npmrc"),
      ...up("node_modules/.bin/npx"),
    ])
      expect(npx).toContain(p)
    expect(npx.some((p) => p.startsWith("/usr/") || p.startsWith("/etc/"))).toBe(false)
    // npm exec's cache folder for the spec (npm's default cache in the home, or npm_config_cache).
    const cached = SecurityMcp.resolvedPaths(
      {
        s: { command: ["npx", "-y", "opencode-builtins", "mcp"] },
        t: { command: ["npm", "exec", "-p", "b", "-p", "a", "x"] },
      },
      { directory: dir.path, env: { HOME: "/home/me", npm_config_cache: undefined } },
    )
    // As npm 11's libnpmexec names it: sha512 of the sorted specs joined by line breaks, 16 hex digits.
    expect(SecurityMcp.npxHash(["opencode-builtins"])).toBe(
      crypto.createHash("sha512").update("opencode-builtins").digest("hex").slice(0, 16),
    )
    expect(cached).toContain(`/home/me/.npm/_npx/${SecurityMcp.npxHash(["opencode-builtins"])}/`)
    expect(cached).toContain(`/home/me/.npm/_npx/${SecurityMcp.npxHash(["a", "b"])}/`)
    expect(SecurityMcp.npxHash(["b", "a"])).toBe(SecurityMcp.npxHash(["a", "b"]))
    expect(
      SecurityMcp.resolvedPaths(
        { s: { command: ["npx", "srv"] } },
        { directory: dir.path, env: { npm_config_cache: "/cache/npm" } },
      ),
    ).toContain(`/cache/npm/_npx/${SecurityMcp.npxHash(["srv"])}/`)
    const rel = (list: string[]) =>
      list
        .filter((p) => p.startsWith(dir.file("a") + path.sep))
        .map((p) => path.relative(dir.file("a"), p) + (p.endsWith(path.sep) ? path.sep : ""))
    // Scoped packages: the bin is the unscoped name, the folder the scoped one.
    expect(rel(of(["bunx", "--bun", "@acme/mcp@latest"])).sort()).toEqual(
      [
        ".npmrc",
        "node_modules/.bin/bunx",
        "node_modules/.bin/mcp",
        "node_modules/.bin/@acme/mcp@latest",
        "node_modules/@acme/mcp/",
      ].sort(),
    )
    // bunx runs what its folder in the temporary folder holds.
    const uid = typeof process.getuid === "function" ? process.getuid() : 0
    expect(
      SecurityMcp.resolvedPaths(
        { s: { command: ["bunx", "srv@1.2.0"] } },
        { directory: dir.path, env: { TMPDIR: "/t" } },
      ),
    ).toContain(`/t/bunx-${uid}-srv@1.2.0/`)
    expect(
      SecurityMcp.resolvedPaths(
        { s: { command: ["bun", "x", "srv"] } },
        { directory: dir.path, env: { TMPDIR: "/t" } },
      ),
    ).toContain(`/t/bunx-${uid}-srv@latest/`)
    // `--package` names the package, the next word the bin; `npm exec` and `npm x`, with npm's own options first.
    expect(rel(of(["npm", "--yes", "exec", "--package=@acme/tools@2", "--", "acme-mcp"]))).toEqual(
      expect.arrayContaining(["node_modules/.bin/acme-mcp", "node_modules/@acme/tools/"]),
    )
    expect(rel(of(["npx", "-p", "tools", "tool-mcp"]))).toEqual(
      expect.arrayContaining(["node_modules/.bin/tool-mcp", "node_modules/tools/"]),
    )
    expect(rel(of(["bun", "x", "srv"]))).toEqual(expect.arrayContaining(["node_modules/.bin/srv", "node_modules/srv/"]))
    expect(rel(of(["pnpm", "dlx", "srv"]))).toEqual(
      expect.arrayContaining(["node_modules/.bin/srv", "node_modules/srv/", "pnpm-workspace.yaml", ".npmrc"]),
    )
    expect(rel(of(["yarn", "dlx", "srv"]))).toEqual(
      expect.arrayContaining(["node_modules/.bin/srv", "node_modules/srv/", ".yarnrc.yml", ".yarnrc"]),
    )
    expect(rel(of(["env", "NODE_ENV=production", "npx", "srv"]))).toEqual(
      expect.arrayContaining(["node_modules/.bin/srv", "node_modules/srv/"]),
    )
    // A bare command name: its `.bin` program in every folder (on PATH when OpenCode was started by a package
    // manager); a program given by path, a local path or URL spec, and disabled or remote servers have none.
    expect(rel(of(["my-server", "--stdio"]))).toEqual(["node_modules/.bin/my-server"])
    expect(rel(of(["./bin/server"]))).toEqual([])
    expect(rel(of(["npx", "./local-pkg"])).sort()).toEqual([".npmrc", "node_modules/.bin/npx"])
    // npm exec still looks for `.bin/<the word as given>` before fetching a git spec.
    expect(rel(of(["npx", "github:acme/mcp"])).sort()).toEqual([
      ".npmrc",
      "node_modules/.bin/github:acme/mcp",
      "node_modules/.bin/npx",
    ])
    expect(of(["npx", "srv"], { enabled: false })).toEqual([])
    expect(SecurityMcp.resolvedPaths({ r: { type: "remote", url: "https://x" } }, { directory: dir.path })).toEqual([])
    expect(SecurityMcp.resolvedPaths(undefined, { directory: dir.path })).toEqual([])
  })
  // npm exec runs the nearest package's own bin of the name (npm 11): those package.json files, up to `/`.
  test("the package.json files whose own bin npx <name> would run, and the bins a text declares", async () => {
    await using dir = await tmpdir({})
    const list = SecurityMcp.packageBins(
      {
        a: { command: ["npx", "-y", "my-mcp", "--stdio"], cwd: "sub" },
        b: { command: ["npm", "exec", "--", "other"] },
        // With --package npm looks for the package, not the local one's bin; other runners do not ask it.
        c: { command: ["npx", "-p", "pkg", "cmd"] },
        d: { command: ["bunx", "x"] },
        off: { command: ["npx", "off"], enabled: false },
      },
      { directory: dir.path },
    )
    const of = (file: string) => list.find((e) => e.file === file)?.bins.sort()
    expect(of(dir.file("sub/package.json"))).toEqual(["my-mcp"])
    expect(of(dir.file("package.json"))).toEqual(["my-mcp", "other"])
    expect(of(path.join(path.dirname(dir.path), "package.json"))).toEqual(["my-mcp", "other"])
    expect(list.some((e) => e.bins.includes("cmd") || e.bins.includes("x") || e.bins.includes("off"))).toBe(false)
    expect(SecurityMcp.declaredBins('{"name":"@a/my-mcp","bin":"cli.js"}', ["my-mcp", "y"])).toEqual(["my-mcp"])
    expect(SecurityMcp.declaredBins('{"bin":{"y":"a.js","z":"b.js"}}', ["my-mcp", "y"])).toEqual(["y"])
    expect(SecurityMcp.declaredBins("not json", ["y"])).toEqual([])
    expect(SecurityMcp.declaredBins('{"name":"x"}', ["x"])).toEqual([])
  })
  test("what a Python or Go launcher runs, present or not: modules, package initialisers, a venv, a go run folder", async () => {
    await using dir = await tmpdir({ "go.mod": "module m\n", "main.go": "package main\n" })
    const of = async (command: unknown[], extra: Record<string, unknown> = {}) =>
      SecurityMcp.launcherPaths({ s: { type: "local", command, ...extra } }, { directory: dir.path })
    // `python3 -m mcp_server_fetch` (installed, not in the project): the server's folder is first on sys.path, so a
    // package or module of that name planted there shadows it.
    const fetch = await of(["python3", "-m", "mcp_server_fetch"])
    for (const p of ["mcp_server_fetch/__main__.py", "mcp_server_fetch/__init__.py", "mcp_server_fetch.py"])
      expect(fetch).toContain(dir.file(p))
    // The cache Python runs in place of a source of that size and time, not the cache folder itself.
    expect(fetch).toContain(dir.file("__pycache__/mcp_server_fetch.cpython-311.pyc"))
    expect(fetch).toContain(dir.file("mcp_server_fetch/__pycache__/__init__.cpython-313t.opt-1.pyc"))
    expect(fetch).not.toContain(dir.file("__pycache__") + path.sep)
    // `-m a.b.c`: every package initialiser along the name, the module, its package form and a shadowing `a.py`.
    const deep = await of(["python3.12", "-u", "-X", "dev", "-m", "a.b.c", "--port", "3"], { cwd: "srv" })
    for (const p of ["a/__init__.py", "a/b/__init__.py", "a/b/c.py", "a/b/c/__init__.py", "a/b/c/__main__.py", "a.py"])
      expect(deep).toContain(dir.file(path.join("srv", p)))
    expect(deep).toContain(dir.file("srv/a/b/__pycache__/c.cpython-312.pyc"))
    // A compiled module of that name is imported too (`c.cpython-312-<arch>.so`).
    expect(deep.some((p) => p.startsWith(dir.file("srv/a/b/c.cpython-312-")) && p.endsWith(".so"))).toBe(true)
    // The project's virtual environment (its `.pth` files and sitecustomize run at interpreter start): held whole.
    const venv = await of([".venv/bin/python", "-m", "tools.mcp"])
    expect(venv).toContain(dir.file(".venv") + path.sep)
    expect(venv).toContain(dir.file("tools/__init__.py"))
    // `uv run` runs the project's `.venv`; a script is held present or not.
    const uv = await of(["uv", "run", "--with", "mcp", "--directory", "srv", "server.py"])
    expect(uv).toContain(dir.file("srv/.venv") + path.sep)
    expect(uv).toContain(dir.file(".venv") + path.sep)
    expect(uv).toContain(dir.file("srv/server.py"))
    expect(await of(["uv", "run", "-m", "pkg.srv"])).toContain(dir.file("pkg/__init__.py"))
    expect(await of(["uv", "run", "python", "-m", "pkg.srv"])).toContain(dir.file("pkg/srv.py"))
    // An interpreter outside the project, or one in the project folder itself, does not hold the project.
    expect(await of(["/usr/bin/python3", "x.py"])).toEqual([dir.file("x.py")])
    expect(await of(["./python3", "-c", "print(1)"])).toEqual([dir.file("python3")])
    // `go run ./cmd/mcp`: the package folder (a new .go file there is compiled in), the module files up the tree.
    const go = await of(["go", "run", "-tags", "x", "./cmd/mcp", "stdio"])
    for (const p of ["cmd/mcp/", "go.mod", "go.sum", "go.work", "cmd/mcp/go.mod", "vendor/"])
      expect(go).toContain(dir.file(p))
    expect(go).toContain(path.join(path.dirname(dir.path), "go.mod"))
    expect(go.some((p) => p.startsWith("/usr/") || p.startsWith("/etc/"))).toBe(false)
    expect(go).not.toContain(dir.file("stdio") + path.sep)
    // `go run .` in the project: its .go files as they are (the project cannot be held whole); `-overlay` is held.
    const here = await of(["go", "run", "-overlay=o.json", "."])
    expect(here).toContain(dir.file("main.go"))
    expect(here).toContain(dir.file("o.json"))
    expect(here).not.toContain(dir.path + path.sep)
    // An import path is fetched into the module cache: nothing of the project, only the go command's own
    // configuration. Other launchers: nothing here.
    expect(await of(["go", "run", "example.com/x/cmd@v1"])).toEqual(SecurityMcp.toolchainFiles("go", process.env))
    expect(await of(["node", "server.js"])).toEqual([])
    expect(await of(["python3", "-m", "x"], { enabled: false })).toEqual([])
  })
  // Red team W2: the toolchains' user configuration sets a program every build runs (`GOFLAGS=-toolexec=…` in the GOENV
  // file, `build.rustc-wrapper` in `$CARGO_HOME/config.toml`), whatever the project holds.
  test("the go command's and cargo's user configuration, by the server's environment", async () => {
    await using dir = await tmpdir({ "goroot/bin/go": "", "bin/.keep": "" })
    fs.symlinkSync(dir.file("goroot/bin/go"), dir.file("bin/go"))
    const go = (env: Record<string, string>) => SecurityMcp.toolchainFiles("go", { HOME: "/home/me", ...env })
    expect(go({})).toEqual(["/home/me/.config/go/env"])
    expect(go({ XDG_CONFIG_HOME: "/x" })).toEqual(["/x/go/env"])
    expect(go({ GOENV: "/etc2/goenv", XDG_CONFIG_HOME: "/x" })).toEqual(["/etc2/goenv"])
    expect(go({ GOENV: "off" })).toEqual([])
    // The installation the `go` on PATH belongs to (a link followed), or `$GOROOT`.
    expect(go({ GOENV: "off", PATH: `relative:${dir.file("bin")}` })).toEqual([dir.file("goroot") + path.sep])
    expect(go({ GOENV: "off", GOROOT: "/opt/go" })).toEqual(["/opt/go/"])
    expect(SecurityMcp.toolchainFiles("cargo", { HOME: "/home/me" })).toEqual([
      "/home/me/.cargo/config.toml",
      "/home/me/.cargo/config",
      "/home/me/.rustup/settings.toml",
      "/home/me/.rustup/toolchains/",
    ])
    expect(SecurityMcp.toolchainFiles("cargo", { HOME: "/h", CARGO_HOME: "/c", RUSTUP_HOME: "/r" })).toEqual([
      "/c/config.toml",
      "/c/config",
      "/r/settings.toml",
      "/r/toolchains/",
    ])
    // Through the configuration: the entry's `environment` over OpenCode's.
    const held = await SecurityMcp.launcherPaths(
      {
        g: { type: "local", command: ["go", "run", "example.com/x@v1"], environment: { GOENV: "/tmp/ge" } },
        c: { type: "local", command: ["env", "CARGO_HOME=/tmp/ch", "cargo", "run"] },
      },
      { directory: dir.path, env: { HOME: "/home/me", PATH: "" } },
    )
    for (const p of ["/tmp/ge", "/tmp/ch/config.toml", "/tmp/ch/config"]) expect(held).toContain(p)
    expect(held).not.toContain("/home/me/.config/go/env")
  })

  // Red team W1: cargo compiles and runs the package's build script and sources, reading the configuration of the
  // folder it starts in and those above it (doc.rust-lang.org/cargo: commands/cargo-run, reference/config,
  // reference/workspaces).
  test("cargo run: what cargo builds and runs for the server, by cargo's rules, present or not", async () => {
    await using dir = await tmpdir({
      "Cargo.toml":
        '[package]\nname = "root"\nversion = "0.1.0"\nbuild = "tools/gen.rs"\n[[bin]]\nname = "x"\npath = "bin/x.rs"\n',
      "mcp/Cargo.toml": '[package]\nname = "srv"\nversion = "0.1.0"\n[dependencies]\nh = { path = "../helper" }\n',
      "ws/Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n[patch.crates-io]\nserde = { path = "../vendor/serde" }\n',
      "ws/crates/a/Cargo.toml": '[package]\nname = "a"\nversion = "0.1.0"\n',
      "ws/crates/b/Cargo.toml": '[package]\nname = "b"\nversion = "0.1.0"\n',
    })
    const of = (command: string[], extra: Record<string, unknown> = {}) =>
      SecurityMcp.launcherPaths(
        { s: { type: "local", command, ...extra } },
        { directory: dir.path, env: { HOME: "/home/me", PATH: "" } },
      )
    const configs = (from: string) => {
      const out: string[] = []
      for (let d = from; ; d = path.dirname(d)) {
        out.push(path.join(d, ".cargo/config.toml"), path.join(d, ".cargo/config"), path.join(d, "rust-toolchain.toml"))
        if (d === path.dirname(d)) return out
      }
    }
    // `--manifest-path`: the package's own folder whole (sources, build.rs, its target/), its path dependency's, the
    // manifests and lock files up the tree, the configuration from the folder cargo starts in (the project) up to `/`.
    const named = await of(["cargo", "+stable", "--locked", "run", "--quiet", "--manifest-path", "mcp/Cargo.toml"])
    for (const p of ["mcp/", "helper/", "mcp/Cargo.toml", "mcp/Cargo.lock", "Cargo.toml", "mcp/target/"])
      expect(named).toContain(dir.file(p))
    // Red team Y8: cargo reads the workspace root's lock only (here the server's own folder), not the project crate's.
    expect(named).not.toContain(dir.file("Cargo.lock"))
    for (const p of configs(dir.path)) expect(named).toContain(p)
    expect(named).toContain("/home/me/.cargo/config.toml")
    // `cargo run` at the root: the manifest found there, what it compiles (not the whole project): `src/`, the build
    // script it names, a `[[bin]]` path, the target folder; and a `Cargo.toml` nearer than one found counts too.
    const root = await of(["cargo", "run", "--release", "--", "--stdio"])
    for (const p of ["src/", "build.rs", "tools/gen.rs", "bin/x.rs", "Cargo.toml", "target/"])
      expect(root).toContain(dir.file(p))
    expect(root).not.toContain(dir.path + path.sep)
    expect(root).not.toContain(dir.file("--stdio"))
    const nested = await of(["cargo", "run"], { cwd: "mcp/src" })
    for (const p of ["mcp/src/Cargo.toml", "mcp/", "helper/", ...configs(dir.file("mcp/src")).slice(0, 3)])
      expect(nested).toContain(p.startsWith("/") ? p : dir.file(p))
    // `-p` in a workspace: the member named and the workspace root's patched path dependency, not the other member;
    // a virtual manifest without `-p`: every member; `-C` and `--target-dir`; `--config <file>`.
    const member = await of(["cargo", "run", "-p", "a@0.1.0", "--target-dir", "/tmp/t"], { cwd: "ws" })
    for (const p of ["ws/crates/a/", "vendor/serde/", "ws/Cargo.toml", "ws/Cargo.lock", "ws/.cargo/config.toml"])
      expect(member).toContain(dir.file(p))
    expect(member).toContain("/tmp/t/")
    expect(member).not.toContain(dir.file("ws/crates/b/"))
    const all = await of(["cargo", "-C", "ws", "--config", "extra.toml", "run"])
    for (const p of ["ws/crates/a/", "ws/crates/b/", "ws/extra.toml", "ws/target/"]) expect(all).toContain(dir.file(p))
    // Behind a shell, and another subcommand (an external `cargo-mcp`): the configuration only.
    expect(await of(["sh", "-c", "cd mcp && exec cargo run"])).toContain(dir.file("mcp/"))
    const other = await of(["cargo", "mcp-serve"])
    expect(other).toContain(dir.file(".cargo/config.toml"))
    expect(other).not.toContain(dir.file("src/"))
    expect(other.some((p) => p.startsWith("/usr/") || p.startsWith("/etc/"))).toBe(false)
  })

  // Red team Y1-Y5, Y8: what real cargo builds and runs, checked with cargo 1.x by the red team: a new folder a member
  // glob matches, a root package's default members, an `[alias]` that is `run`, a wrapper before cargo, the target
  // folder `CARGO_BUILD_TARGET_DIR` or `build.target-dir` sets; and where the upward search for the workspace root stops.
  // Reading manifests stops at 1,000 packages (members, path dependencies); the ones past it were left unheld before.
  test("cargo run: a workspace of more packages than the cap holds every member, those past it without reading them", async () => {
    const files: Record<string, string> = {}
    const names = Array.from({ length: 1005 }, (_, i) => `m${i}`)
    files["big/Cargo.toml"] = `[workspace]\nmembers = [${names.map((n) => `"${n}"`).join(", ")}]\n`
    for (const n of names) files[`big/${n}/Cargo.toml`] = `[package]\nname = "${n}"\nversion = "0.1.0"\n`
    await using dir = await tmpdir(files)
    const held = await SecurityMcp.launcherPaths(
      { s: { type: "local", command: ["cargo", "run"], cwd: "big" } },
      { directory: dir.path, env: { HOME: "/home/me", PATH: "" } },
    )
    for (const n of names) expect(held).toContain(dir.file(`big/${n}`) + path.sep)
  }, 60_000)

  test("cargo run: member globs, default-members, [alias] runs, wrappers, the target folder; the workspace root search", async () => {
    await using dir = await tmpdir({
      "ws/Cargo.toml": '[workspace]\nmembers = ["crates/*", "tools/x"]\n',
      "ws/crates/srv/Cargo.toml": '[package]\nname = "srv"\nversion = "0.1.0"\n',
      "dm/Cargo.toml":
        '[package]\nname = "r"\nversion = "0.1.0"\n[workspace]\nmembers = ["a"]\ndefault-members = ["a"]\n',
      "dm/a/Cargo.toml": '[package]\nname = "a"\nversion = "0.1.0"\n',
      "al/.cargo/config.toml":
        '[alias]\nmcp = "srv2 --quiet"\nsrv2 = "run --manifest-path srv/Cargo.toml"\nb = "run -p x"\n',
      "al/srv/Cargo.toml": '[package]\nname = "srv"\nversion = "0.1.0"\n',
      "bad/.cargo/config.toml": "[alias\nmcp = run\n",
      "bad/Cargo.toml": '[package]\nname = "bad"\nversion = "0.1.0"\n',
      "td/.cargo/config.toml": '[build]\ntarget-dir = "out"\n',
      "td/Cargo.toml": '[package]\nname = "td"\nversion = "0.1.0"\n',
      "Cargo.toml": '[package]\nname = "app"\nversion = "0.1.0"\n',
      "own/Cargo.toml": '[package]\nname = "own"\nversion = "0.1.0"\n[workspace]\n',
    })
    const of = (command: string[], extra: Record<string, unknown> = {}) =>
      SecurityMcp.launcherPaths(
        { s: { type: "local", command, ...extra } },
        { directory: dir.path, env: { HOME: "/home/me", PATH: "" } },
      )
    // Y1: the glob's folder whole (a member created there later); the project folder itself never.
    const ws = await of(["cargo", "run"], { cwd: "ws" })
    expect(ws).toContain(dir.file("ws/crates") + path.sep)
    expect(ws).toContain(dir.file("ws/tools/x") + path.sep)
    expect(ws).not.toContain(dir.path + path.sep)
    // `-p` naming a member found: a new member cannot be it; naming none found: every member, the glob's folder too.
    expect(await of(["cargo", "run", "-p", "srv"], { cwd: "ws" })).not.toContain(dir.file("ws/crates") + path.sep)
    expect(await of(["cargo", "run", "-p", "later"], { cwd: "ws" })).toContain(dir.file("ws/crates") + path.sep)
    // Y2: a root package with `default-members` builds them.
    expect(await of(["cargo", "run"], { cwd: "dm" })).toContain(dir.file("dm/a") + path.sep)
    // Y3: an alias (string or array) naming another alias that is `run`; a built-in's name is never an alias; a
    // configuration that cannot be read is taken as `cargo run` there (fail closed).
    const al = await of(["cargo", "mcp"], { cwd: "al" })
    expect(al).toContain(dir.file("al/srv") + path.sep)
    expect(await of(["cargo", "b"], { cwd: "al" })).not.toContain(dir.file("al/srv") + path.sep)
    const bad = await of(["cargo", "mcp"], { cwd: "bad" })
    expect(bad).toContain(dir.file("bad") + path.sep)
    const inline = await of(["cargo", "--config", 'alias.mcp="run"', "mcp"], { cwd: "dm" })
    expect(inline).toContain(dir.file("dm/a") + path.sep)
    // Y4: a wrapper before cargo or go; `rustup run <toolchain>` is one.
    for (const command of [
      ["timeout", "60", "cargo", "run"],
      ["nice", "-n", "5", "cargo", "run"],
      ["rustup", "run", "stable", "cargo", "run"],
      ["sudo", "-u", "me", "cargo", "run"],
    ]) {
      const held = await of(command, { cwd: "td" })
      for (const p of ["td/", "td/.cargo/config.toml", "/home/me/.cargo/config.toml"])
        expect({ command, p, held: held.includes(p.startsWith("/") ? p : dir.file(p)) }).toEqual({
          command,
          p,
          held: true,
        })
    }
    expect(await of(["timeout", "60", "go", "run", "./cmd/srv"])).toContain(dir.file("cmd/srv") + path.sep)
    // Y5: `build.target-dir` of the configuration (relative to the folder holding `.cargo`), `CARGO_BUILD_TARGET_DIR`.
    expect(await of(["cargo", "run"], { cwd: "td" })).toContain(dir.file("td/out") + path.sep)
    const env = await of(["cargo", "run"], { cwd: "td", environment: { CARGO_BUILD_TARGET_DIR: dir.file("o2") } })
    expect(env).toContain(dir.file("o2") + path.sep)
    // Y8: a package that declares `[workspace]` is its own root: nothing above it is held.
    const own = await of(["cargo", "run", "--manifest-path", "own/Cargo.toml"])
    for (const p of ["own/Cargo.toml", "own/Cargo.lock"]) expect(own).toContain(dir.file(p))
    for (const p of ["Cargo.toml", "Cargo.lock"]) expect(own).not.toContain(dir.file(p))
  })

  // Red team V3: uv reads `.python-version` (any Python request, an interpreter's path included), `uv.toml` and
  // `pyproject.toml` from the folder it starts in and each above it, and runs the interpreter they choose on the host.
  test("uv run: the files uv reads to choose the interpreter and environment, in the server's folder and above to the project, present or not", async () => {
    await using dir = await tmpdir({ "weather/weather.py": "print('server')\n", "pyproject.toml": "[project]\n" })
    const of = (command: unknown[], extra: Record<string, unknown> = {}) =>
      SecurityMcp.launcherPaths({ s: { type: "local", command, ...extra } }, { directory: dir.path })
    const uvFiles = (folder: string) =>
      [".python-version", ".python-versions", "uv.toml", "pyproject.toml", ".venv/"].map((f) =>
        f.endsWith("/") ? dir.file(path.join(folder, f.slice(0, -1))) + path.sep : dir.file(path.join(folder, f)),
      )
    const spellings: [unknown[], Record<string, unknown>, string[]][] = [
      [["uv", "run", "-m", "srv"], {}, ["."]],
      [["uv", "run", "python", "-m", "srv"], {}, ["."]],
      [["uv", "run", "my-server"], {}, ["."]],
      [["uv", "--directory", "weather", "run", "weather.py"], {}, ["weather", "."]],
      [["uv", "run", "weather.py"], { cwd: "weather" }, ["weather", "."]],
      [["sh", "-c", "cd weather && uv run weather.py"], {}, ["weather", "."]],
      [["poetry", "run", "python", "-m", "srv"], {}, ["."]],
    ]
    for (const [command, extra, folders] of spellings) {
      const held = await of(command, extra)
      for (const p of folders.flatMap(uvFiles))
        expect({ command, p, held: held.includes(p) }).toEqual({ command, p, held: true })
    }
    // `--config-file` replaces the discovered settings: held, present or not.
    expect(await of(["uv", "run", "--config-file", "cfg/uv.toml", "-m", "srv"])).toContain(dir.file("cfg/uv.toml"))
    // Nothing above the project; a uv tool runs from the cache and reads no project settings.
    expect(await of(["uv", "run", "-m", "srv"])).not.toContain(path.join(path.dirname(dir.path), ".python-version"))
    expect(await of(["uvx", "mcp-server-fetch"])).toEqual([])
    expect(await of(["python3", "-m", "srv"])).not.toContain(dir.file(".python-version"))
  })
  // Red-team S5-2: wrappers (env with options, shells, uv's global options, Poetry) and Python's option clusters
  // spelled every way a server's configuration may; a launcher whose arguments are not understood holds the folder.
  test("what a Python launcher runs behind env, a shell, uv's global options, Poetry, option clusters; fail closed", async () => {
    await using dir = await tmpdir({
      "weather/weather.py": "print('server')\n",
      "weather/.venv/pyvenv.cfg": "home = /usr/bin\n",
      "srv/tool.py": "x = 1\n",
      "srv/pkg/__init__.py": "",
      "srv/notes/readme.txt": "",
    })
    const of = (command: unknown[], extra: Record<string, unknown> = {}) =>
      SecurityMcp.launcherPaths({ s: { type: "local", command, ...extra } }, { directory: dir.path })
    const module = (folder: string, name: string) => [
      dir.file(path.join(folder, name + ".py")),
      dir.file(path.join(folder, name, "__init__.py")),
    ]
    const table: [string[], string[]][] = [
      [["env", "-i", "PATH=/usr/bin:/bin", "python3", "-m", "envimod"], module(".", "envimod")],
      [["env", "-u", "HOME", "--", "python3", "-m", "envu"], module(".", "envu")],
      [["env", "-S", "python3 -m envsmod"], module(".", "envsmod")],
      [["env", "--split-string=PYTHONPATH=x python3 -m envlong"], module(".", "envlong")],
      [["env", "-C", "srv", "python3", "-m", "chmod_"], module("srv", "chmod_")],
      [["env", "--chdir=srv", "-i", "python3", "-m", "chdir2"], module("srv", "chdir2")],
      [["sh", "-c", "python3 -m shcmod"], module(".", "shcmod")],
      [["bash", "-lc", "cd srv && exec python3 -u -m bashmod --port 3"], module("srv", "bashmod")],
      [["/bin/sh", "-e", "-c", "env -i python3 -m nested"], module(".", "nested")],
      [
        ["uv", "--directory", "weather", "run", "weather.py"],
        [dir.file("weather/weather.py"), dir.file("weather/.venv") + path.sep],
      ],
      [
        ["uv", "--project", "weather", "run", "-m", "uvproj"],
        [...module(".", "uvproj"), dir.file("weather/.venv") + path.sep],
      ],
      [
        [
          "uv",
          "--quiet",
          "--cache-dir",
          "/tmp/c",
          "--config-file=uv.toml",
          "run",
          "--python",
          "3.12",
          "python",
          "-m",
          "uvpy",
        ],
        module(".", "uvpy"),
      ],
      [
        ["uv", "tool", "run", "--from", "./srv", "tool"],
        [dir.file("srv/tool.py"), dir.file("srv/pyproject.toml")],
      ],
      [
        ["uvx", "--from", ".", "srv"],
        [dir.file("pyproject.toml"), dir.file("setup.py")],
      ],
      [["python3", "-um", "um"], module(".", "um")],
      [["python3", "-Bm", "bm"], module(".", "bm")],
      [["python3", "-Xdev", "-W", "ignore", "-m", "xw"], module(".", "xw")],
      [["python3", "--check-hash-based-pycs", "default", "-m", "hashmod"], module(".", "hashmod")],
      [["pypy3", "-m", "pypymod"], module(".", "pypymod")],
      [["pypy", "-m", "pypy2"], module(".", "pypy2")],
      [
        ["poetry", "run", "python", "-m", "poetrymod"],
        [...module(".", "poetrymod"), dir.file(".venv") + path.sep],
      ],
      [["poetry", "-C", "srv", "run", "python3", "-m", "pc"], module("srv", "pc")],
    ]
    for (const [command, expected] of table) {
      const held = await of(command)
      for (const p of expected) expect({ command, held: held.includes(p) }).toEqual({ command, held: true })
    }
    // Not understood: what can be held of the folder (its modules and package initialisers as they are now, not its
    // other files; the .venv for uv and Poetry).
    const closed: [string[], string[]][] = [
      [["python3", "-c", "import tool"], []],
      [["env", "-Z", "python3", "-m", "x"], [".venv/"]],
      [["sh", "-c", 'python3 -m "$MOD"'], [".venv/"]],
      [["uv", "run", "my-server"], [".venv/"]],
      [["poetry", "run", "my-server"], [".venv/"]],
      [["uv", "--weird", "x", "run", "a.py"], [".venv/"]],
      [["env", "-S", "python3 -m ${MOD}"], [".venv/"]],
      [
        ["timeout", "60", "python3", "-m", "tmod"],
        [".venv/", "tmod.py", "tmod/__init__.py"],
      ],
      [
        ["sh", "-c", "nice -n 5 python3 -m nmod"],
        [".venv/", "nmod.py"],
      ],
    ]
    for (const [command, extra] of closed) {
      const held = await of(command, { cwd: "srv" })
      for (const p of ["srv/tool.py", "srv/pkg/__init__.py", ...extra.map((e) => path.join("srv", e))])
        expect({ command, p, held: held.includes(dir.file(p)) }).toEqual({ command, p, held: true })
      expect(held).not.toContain(dir.file("srv/notes/readme.txt"))
    }
    // Other programs, a shell script without a launcher, and uv tools from the index hold nothing of the project.
    expect(await of(["sh", "-c", "node server.js"])).toEqual([])
    expect(await of(["uvx", "mcp-server-fetch"])).toEqual([])
    expect(await of(["env", "-i", "node", "x.js"])).toEqual([])
  })
})
