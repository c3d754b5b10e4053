/**
 * Red team W: a local MCP server OpenCode starts with `cargo run` or `go run` is built and run on the host at every
 * start, outside the sandbox.
 * - W1: cargo compiles and runs the package's `build.rs` and `src/**`, and reads `.cargo/config.toml` of the folder it
 *   starts in and every folder above it (`build.rustc-wrapper`, `target.<triple>.runner`: programs it runs); only the
 *   manifest named as an argument was held. What cargo builds and runs for the server is held, present or not.
 * - W2: the toolchains' user configuration was writable by a command: the GOENV file (`go env -w`:
 *   `GOFLAGS=-toolexec=<program>` runs that program for every compiler and linker call) and `$CARGO_HOME/config.toml`
 *   (`build.rustc-wrapper`). Held while a configured local server is started by go or cargo.
 * The Go-executing part is skipped when `go` is absent; the file holds are checked without it.
 */
import { afterAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { ROUTES, isolateHome, withMcp, type Result } from "./redteam-helpers"
import { spawnSync } from "../spawn-sync"

const HEAVY = { timeout: 180_000 }
const home = isolateHome()
afterAll(() => home.restore())

const fresh = withMcp

const held = (r: Result) => r.refused && (r.reason ?? "").includes("Blocked by the project's security policy")
/** A word the static check cannot know before the command runs (read back from a file the command writes). */
const runtime = (word: string) => `$(printf '%s' '${word}' > .w && cat .w)`

const MANIFEST = '[package]\nname = "srv"\nversion = "0.1.0"\nedition = "2021"\n'
const MAIN = 'fn main() { println!("server"); }\n'
const CARGO_MCP = { rs: { type: "local", command: ["cargo", "run", "--quiet", "--manifest-path", "mcp/Cargo.toml"] } }
const CARGO_FILES = { "mcp/Cargo.toml": MANIFEST, "mcp/src/main.rs": MAIN }
/** A build script that copies the protected key file next to the project (it runs on the host). */
const BUILD_RS = (out: string) =>
  `fn main() { let k = std::fs::read_to_string("../secrets/api.key").unwrap_or_default(); std::fs::write(${JSON.stringify(out)}, k).unwrap(); }\n`

/** The user's toolchain (the test process has a temporary HOME). */
const REAL = {
  rustup: process.env.RUSTUP_HOME ?? path.join(os.homedir(), ".rustup"),
  cargo: process.env.CARGO_HOME ?? path.join(os.homedir(), ".cargo"),
}
const hasCargo = spawnSync("cargo", ["--version"]).status === 0
const hasGo = spawnSync("go", ["version"]).status === 0

/** What OpenCode does at its next start: `cargo run` in the project folder, on the host. */
function cargoRun(dir: string, cargoHome = REAL.cargo) {
  const target = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-W-target-"))
  try {
    return spawnSync("cargo", ["run", "--quiet", "--offline", "--manifest-path", "mcp/Cargo.toml"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, CARGO_TARGET_DIR: target, RUSTUP_HOME: REAL.rustup, CARGO_HOME: cargoHome },
      timeout: 120_000,
    })
  } finally {
    fs.rmSync(target, { recursive: true, force: true })
  }
}

const asides = (file: string) =>
  fs.existsSync(path.dirname(file))
    ? fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith(path.basename(file) + ".blocked-by-security-"))
    : []

for (const route of ROUTES) {
  describe(`red team W1 (cargo run MCP server) on the ${route} route`, () => {
    test.skipIf(!hasCargo)(
      "a build script the write tool adds to a cargo run server is held (it ran on the host at the next start and copied the key)",
      async () => {
        await using box = await fresh(route, CARGO_MCP, CARGO_FILES)
        const out = box.dir.file("LEAK")
        const wrote = await box.s.call("write", { filePath: "mcp/build.rs", content: BUILD_RS(out) })
        const run = fs.existsSync(box.dir.file("mcp/build.rs")) ? cargoRun(box.dir.path) : undefined
        const leaked = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : ""
        if (process.env.W_SHOW) console.log({ refused: wrote.refused, output: wrote.output, run: run?.stdout, leaked })
        expect({ held: held(wrote), keyCopiedAtNextStart: leaked.includes("Zx81Qp0vLk27mNb5Yt3RwE9u") }).toEqual({
          held: true,
          keyCopiedAtNextStart: false,
        })
      },
      HEAVY,
    )

    test.skipIf(!hasCargo)(
      "the server's source and cargo's configuration in the project folder, changed by a command, do not run at the next start",
      async () => {
        await using box = await fresh(route, CARGO_MCP, CARGO_FILES)
        const marker = box.dir.file("WRAPPED")
        const cmd = await box.s.bash(
          [
            `echo 'fn main() { println!("planted"); }' > mcp/src/${runtime("main.rs")}`,
            `printf '#!/bin/sh\\ntouch ${marker}\\nexec "$@"\\n' > w.sh && chmod +x w.sh`,
            `mkdir -p .cargo && printf '[build]\\nrustc-wrapper = "./w.sh"\\n' > .cargo/${runtime("config.toml")}`,
            "echo RAN-OK",
          ].join("; "),
        )
        const run = cargoRun(box.dir.path)
        if (process.env.W_SHOW) console.log({ cmd: cmd.output, run: run.stdout, err: run.stderr })
        expect(cmd.output).toContain("RAN-OK")
        expect({
          serverOutput: run.stdout.trim(),
          wrapperRanOnHost: fs.existsSync(marker),
        }).toEqual({ serverOutput: "server", wrapperRanOnHost: false })
      },
      HEAVY,
    )

    // cargo's own rules, without running it: the manifest found from the folder cargo starts in upward (`cargo run` at
    // the project root: what it compiles there, not the whole project), `-p` in a workspace (the member and its path
    // dependencies), a folder above the one it starts in (`.cargo/config`, the old name), rustup's toolchain file.
    test(
      "cargo run at the root, -p in a workspace, cwd: build scripts, sources, path dependencies, the target folder and every .cargo/config up the tree are held, present or not",
      async () => {
        await using box = await fresh(
          route,
          {
            root: { type: "local", command: ["cargo", "run", "--release"] },
            member: { type: "local", command: ["cargo", "run", "-p", "tool", "--", "stdio"], cwd: "ws" },
          },
          {
            "Cargo.toml": MANIFEST,
            "src/main.rs": MAIN,
            "ws/Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
            "ws/crates/tool/Cargo.toml":
              '[package]\nname = "tool"\nversion = "0.1.0"\n[dependencies]\nutil = { path = "../../../shared/util" }\n',
            "ws/crates/tool/src/main.rs": MAIN,
            "ws/crates/other/Cargo.toml": '[package]\nname = "other"\nversion = "0.1.0"\n',
            "shared/util/src/lib.rs": "pub fn f() {}\n",
          },
        )
        // The write tool: a build script at the root, its sources, a member's, its path dependency's, target/, and the
        // configuration and toolchain files of every folder from where cargo starts up to the project.
        for (const file of [
          "build.rs",
          "src/main.rs",
          "src/extra.rs",
          "Cargo.lock",
          "target/release/srv",
          ".cargo/config",
          "rust-toolchain.toml",
          "ws/.cargo/config.toml",
          "ws/crates/tool/build.rs",
          "ws/crates/tool/src/main.rs",
          "ws/Cargo.lock",
          "shared/util/build.rs",
        ])
          expect({ file, held: held(await box.s.call("write", { filePath: file, content: "x\n" })) }).toEqual({
            file,
            held: true,
          })
        // Commands, names built at run time: a new build script and a configuration file are moved aside, a changed
        // source is put back.
        const cmd = await box.s.bash(
          [
            `echo 'fn main() {}' > ${runtime("build.rs")}`,
            `mkdir -p ws/.cargo && echo '[build]' > ws/.cargo/${runtime("config.toml")}`,
            `echo 'fn main() { println!("planted"); }' > ws/crates/tool/src/${runtime("main.rs")}`,
            "echo RAN-OK",
          ].join("; "),
        )
        expect(cmd.output).toContain("RAN-OK")
        expect(fs.existsSync(box.dir.file("build.rs"))).toBe(false)
        expect(asides(box.dir.file("build.rs")).length).toBe(1)
        expect(fs.existsSync(box.dir.file("ws/.cargo/config.toml"))).toBe(false)
        expect(fs.readFileSync(box.dir.file("ws/crates/tool/src/main.rs"), "utf8")).toBe(MAIN)
        // The rest of the project stays the agent's: another member, other folders at the root.
        for (const file of ["ws/crates/other/src/main.rs", "docs/notes.md", "tests/it.rs"])
          expect({ file, held: held(await box.s.call("write", { filePath: file, content: "x\n" })) }).toEqual({
            file,
            held: false,
          })
      },
      HEAVY,
    )
  })

  describe(`red team W2 (the go command's and cargo's user configuration) on the ${route} route`, () => {
    test(
      "a command cannot give go run servers a -toolexec program through the GOENV file, nor cargo a rustc-wrapper through ~/.cargo/config.toml",
      async () => {
        await using box = await fresh(
          route,
          { gomcp: { type: "local", command: ["go", "run", "./cmd/mcp"] }, ...CARGO_MCP },
          {
            "go.mod": "module example.com/m\n\ngo 1.19\n",
            "cmd/mcp/main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("server") }\n',
            ...CARGO_FILES,
          },
        )
        const goenv = path.join(process.env.XDG_CONFIG_HOME!, "go", "env")
        const cargoConfig = path.join(home.home, ".cargo", "config.toml")
        const marker = box.dir.file("TOOLEXEC")
        const before = { go: asides(goenv).length, cargo: asides(cargoConfig).length }
        const cmd = await box.s.bash(
          [
            `printf '#!/bin/sh\\ntouch ${marker}\\nexec "$@"\\n' > tx.sh && chmod +x tx.sh`,
            `mkdir -p "$XDG_CONFIG_HOME/go" && echo 'GOFLAGS=-toolexec=${box.dir.file("tx.sh")}' > "$XDG_CONFIG_HOME/go/env"`,
            `mkdir -p ~/.cargo && printf '[build]\\nrustc-wrapper = "${box.dir.file("tx.sh")}"\\n' > ~/.cargo/config.toml`,
            "echo RAN-OK",
          ].join("; "),
        )
        // The write tool too.
        const wrote = await box.s.call("write", {
          filePath: goenv,
          content: `GOFLAGS=-toolexec=${box.dir.file("tx.sh")}\n`,
        })
        if (process.env.W_SHOW) console.log({ cmd: cmd.output, wrote: wrote.refused, reason: wrote.reason })
        expect(cmd.output).toContain("RAN-OK")
        expect(cmd.raw).toContain("Read-only file system")
        let ranOnHost: boolean | undefined
        if (hasGo && fs.existsSync(goenv)) {
          // What OpenCode does at its next start: `go run ./cmd/mcp` in the project folder, on the host.
          const cache = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-W-gocache-"))
          spawnSync("go", ["run", "./cmd/mcp"], {
            cwd: box.dir.path,
            encoding: "utf8",
            env: { ...process.env, GOCACHE: cache, GOFLAGS: undefined, GOTOOLCHAIN: "local" } as any,
            timeout: 120_000,
          })
          fs.rmSync(cache, { recursive: true, force: true })
          ranOnHost = fs.existsSync(marker)
        }
        let wrapperRan: boolean | undefined
        if (hasCargo && fs.existsSync(cargoConfig)) {
          // `cargo run` at the next start, with the user's cargo home (here the test's) and toolchain.
          fs.rmSync(marker, { force: true })
          cargoRun(box.dir.path, path.join(home.home, ".cargo"))
          wrapperRan = fs.existsSync(marker)
        }
        expect({
          goenvWritten: fs.existsSync(goenv) && fs.readFileSync(goenv, "utf8").includes("toolexec"),
          goenvMovedAside: asides(goenv).length - before.go,
          cargoConfigWritten: fs.existsSync(cargoConfig),
          cargoConfigMovedAside: asides(cargoConfig).length - before.cargo,
          writeToolRefused: held(wrote),
          toolexecRanOnHost: ranOnHost ?? false,
          rustcWrapperRanOnHost: wrapperRan ?? false,
        }).toEqual({
          goenvWritten: false,
          // The home is read-only to commands outside its caches (`SandboxWritable`): neither file is created, so
          // there is nothing to move aside (when the home is writable, they are moved aside: `HOME_RUN`'s sweep).
          goenvMovedAside: 0,
          cargoConfigWritten: false,
          cargoConfigMovedAside: 0,
          writeToolRefused: true,
          toolexecRanOnHost: false,
          rustcWrapperRanOnHost: false,
        })
      },
      HEAVY,
    )

    // The variables of the server's own environment name the files (a CARGO_HOME or GOENV outside the home); files the
    // user has are kept as they are (read-only in the sandbox, the previous content put back).
    test(
      "GOENV and CARGO_HOME from the server's environment, and the user's present files, are held: refused, moved aside, put back",
      async () => {
        const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-W-toolhome-")))
        try {
          const goenv = path.join(outside, "goenv")
          const cargoHome = path.join(outside, "cargo")
          const userGoenv = path.join(process.env.XDG_CONFIG_HOME!, "go", "env")
          fs.mkdirSync(path.dirname(userGoenv), { recursive: true })
          fs.writeFileSync(userGoenv, "GOPROXY=direct\n")
          fs.mkdirSync(cargoHome, { recursive: true })
          fs.writeFileSync(path.join(cargoHome, "config"), "[net]\noffline = true\n")
          await using box = await fresh(route, {
            plain: { type: "local", command: ["go", "run", "example.com/x/cmd@v1"] },
            custom: { type: "local", command: ["go", "run", "./cmd"], environment: { GOENV: goenv } },
            rs: { type: "local", command: ["cargo", "run"], cwd: "srv", environment: { CARGO_HOME: cargoHome } },
          })
          for (const file of [goenv, userGoenv, path.join(cargoHome, "config.toml"), path.join(cargoHome, "config")])
            expect({ file, held: held(await box.s.call("write", { filePath: file, content: "x\n" })) }).toEqual({
              file,
              held: true,
            })
          const cmd = await box.s.bash(
            [
              `echo GOFLAGS=-toolexec=/bin/true > ${outside}/${runtime("goenv")}`,
              `echo GOFLAGS=-toolexec=/bin/true >> "$XDG_CONFIG_HOME/go/${runtime("env")}"`,
              `echo '[build]' > ${cargoHome}/${runtime("config.toml")}`,
              `echo '[build]' >> ${cargoHome}/${runtime("config")}`,
              "echo RAN-OK",
            ].join("; "),
          )
          expect(cmd.output).toContain("RAN-OK")
          expect({
            goenv: fs.existsSync(goenv),
            userGoenv: fs.readFileSync(userGoenv, "utf8"),
            cargoConfigToml: fs.existsSync(path.join(cargoHome, "config.toml")),
            cargoConfig: fs.readFileSync(path.join(cargoHome, "config"), "utf8"),
          }).toEqual({
            goenv: false,
            userGoenv: "GOPROXY=direct\n",
            cargoConfigToml: false,
            cargoConfig: "[net]\noffline = true\n",
          })
        } finally {
          fs.rmSync(outside, { recursive: true, force: true })
          fs.rmSync(path.join(process.env.XDG_CONFIG_HOME!, "go"), { recursive: true, force: true })
        }
      },
      HEAVY,
    )
  })

  // Red team Y1-Y4, Y8: a member a virtual workspace's glob picks up later, a root package's `default-members`, an
  // `[alias]` that is `run`, a wrapper before cargo (real cargo builds and runs each of them at the next start); and an
  // honest session's own crate beside a server in a subfolder.
  describe(`red team Y (cargo run MCP server) on the ${route} route`, () => {
    const M = (name: string) => `[package]\nname = "${name}"\nversion = "0.1.0"\nedition = "2021"\n`
    const EVIL = 'fn main() { std::fs::write("/tmp/pwned", "x").unwrap(); }\n'
    test(
      "a new glob member of a virtual workspace, a default member, an [alias] run, a wrapper before cargo: the write tool is refused",
      async () => {
        await using box = await fresh(
          route,
          {
            ws: { type: "local", command: ["cargo", "run", "--quiet"], cwd: "ws" },
            dm: { type: "local", command: ["cargo", "run", "--quiet"] },
            al: { type: "local", command: ["cargo", "mcp"], cwd: "al" },
            wr: { type: "local", command: ["timeout", "60", "cargo", "run"], cwd: "wr" },
            ru: { type: "local", command: ["rustup", "run", "stable", "cargo", "run"], cwd: "ru" },
          },
          {
            "ws/Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n',
            "ws/crates/srv/Cargo.toml": M("srv"),
            "ws/crates/srv/src/main.rs": MAIN,
            "Cargo.toml": M("rootpkg") + '[workspace]\nmembers = ["crates/srv"]\ndefault-members = ["crates/srv"]\n',
            "src/main.rs": MAIN,
            "crates/srv/Cargo.toml": M("srv2"),
            "crates/srv/src/main.rs": MAIN,
            "al/.cargo/config.toml": '[alias]\nmcp = ["run", "--quiet", "--manifest-path", "srv/Cargo.toml"]\n',
            "al/srv/Cargo.toml": M("srv3"),
            "al/srv/src/main.rs": MAIN,
            "wr/Cargo.toml": M("srv4"),
            "wr/src/main.rs": MAIN,
            "ru/Cargo.toml": M("srv5"),
            "ru/src/main.rs": MAIN,
          },
        )
        const write = async (rel: string, content: string) =>
          held(await box.s.call("write", { filePath: box.dir.file(rel), content }))
        expect({
          newMember: await write("ws/crates/evil/build.rs", EVIL),
          newMemberManifest: await write("ws/crates/evil/Cargo.toml", M("evil")),
          defaultMember: await write("crates/srv/src/main.rs", EVIL),
          aliasRun: await write("al/srv/src/main.rs", EVIL),
          wrapped: await write("wr/src/main.rs", EVIL),
          wrappedConfig: await write("wr/.cargo/config.toml", '[build]\nrustc-wrapper = "./w.sh"\n'),
          rustupRun: await write("ru/build.rs", EVIL),
        }).toEqual({
          newMember: true,
          newMemberManifest: true,
          defaultMember: true,
          aliasRun: true,
          wrapped: true,
          wrappedConfig: true,
          rustupRun: true,
        })
      },
      HEAVY,
    )

    test(
      "the project's own crate beside a server in a subfolder: its Cargo.lock stays writable, its Cargo.toml too once the server's manifest declares [workspace]",
      async () => {
        await using box = await fresh(
          route,
          {
            rs: { type: "local", command: ["cargo", "run", "--quiet", "--manifest-path", "mcp/Cargo.toml"] },
            own: { type: "local", command: ["cargo", "run", "--quiet", "--manifest-path", "own/mcp/Cargo.toml"] },
          },
          {
            "Cargo.toml": M("app"),
            "Cargo.lock": "version = 3\n",
            "src/main.rs": "fn main() {}\n",
            "mcp/Cargo.toml": M("srv"),
            "mcp/src/main.rs": MAIN,
            "own/Cargo.toml": M("app2"),
            "own/Cargo.lock": "version = 3\n",
            "own/mcp/Cargo.toml": M("srv2") + "[workspace]\n",
            "own/mcp/src/main.rs": MAIN,
          },
        )
        const write = async (rel: string, content: string) =>
          held(await box.s.call("write", { filePath: box.dir.file(rel), content }))
        expect({
          server: await write("mcp/src/main.rs", EVIL),
          serverLock: await write("mcp/Cargo.lock", "version = 4\n"),
          appSource: await write("src/main.rs", "fn main() { println!(); }\n"),
          // Adding `[workspace]` here would make it the server's workspace root (its `[patch]`, profiles): held.
          appManifest: await write("Cargo.toml", M("app") + '[dependencies]\nlibc = "0.2"\n'),
          appLock: await write("Cargo.lock", "version = 4\n"),
          ownServerManifest: await write("own/mcp/Cargo.toml", M("srv2")),
          ownAppManifest: await write("own/Cargo.toml", M("app2") + '[dependencies]\nlibc = "0.2"\n'),
          ownAppLock: await write("own/Cargo.lock", "version = 4\n"),
        }).toEqual({
          server: true,
          serverLock: true,
          appSource: false,
          appManifest: true,
          appLock: false,
          ownServerManifest: true,
          ownAppManifest: false,
          ownAppLock: false,
        })
      },
      HEAVY,
    )
  })
}
