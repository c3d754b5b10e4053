// What OpenCode itself runs outside the sandbox from files a sandboxed command could change, against the real stock
// binaries: its snapshot repository's git config (git runs there at every step), a repository made in a subfolder
// (OpenCode's snapshot runs `git status` in it), the global legacy TOML configuration and an auth.json "wellknown"
// entry (both loaded at the next start; here they name an MCP server, a program OpenCode starts), and a `git` planted in
// a PATH folder the user can write (`~/.local/bin`, first in PATH as a login shell sets it; OpenCode starts git by
// name for its snapshot), and one planted in `./node_modules/.bin`, a relative PATH entry; a filter driver written to
// a file the user's global git config includes (`~/.gitconfig.local`), which OpenCode's snapshot `git add` runs; and
// the server socket of the editor OpenCode runs in (`$NVIM`, here a plain socket whose connection is the marker). One
// command tries all eight; the first run has no policy (the layer is inert), so each marker appears — the attacks are
// real on that binary — and the second has one, so none may appear, in that session or at the next start.
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const TIMEOUT = { timeout: 480_000 }
const POLICY = {
  version: "1.0",
  rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] }],
}
const MARKERS = ["snapshot", "nested", "toml", "wellknown", "path", "relative", "include", "editor"] as const
const GIT = Bun.which("git")!

/** The command: each attack writes its marker into `out` (outside the project) when OpenCode runs it. */
function attack(out: string, wellknown: string) {
  const mark = (name: string) => `touch ${path.join(out, name)}`
  const hook = (name: string) => `printf '#!/bin/sh\\n${mark(name)}\\nexit 1\\n' > ${path.join(out, `${name}.sh`)}`
  return [
    `${hook("snapshot")} && chmod +x ${path.join(out, "snapshot.sh")}`,
    `for c in $(find "$XDG_DATA_HOME/opencode/snapshot" -name config -type f); do git config --file "$c" core.fsmonitor ${path.join(out, "snapshot.sh")}; done`,
    `${hook("nested")} && chmod +x ${path.join(out, "nested.sh")}`,
    `mkdir -p sub && cd sub && git init -q && echo x > f && git add f && git -c user.name=a -c user.email=a@b.c commit -qm x && git config core.fsmonitor ${path.join(out, "nested.sh")}; cd ..`,
    `mkdir -p "$XDG_CONFIG_HOME/opencode" && printf '[mcp.t]\\ntype = "local"\\ncommand = ["sh", "-c", "${mark("toml")}"]\\n' > "$XDG_CONFIG_HOME/opencode/config"`,
    `printf '{"${wellknown}":{"type":"wellknown","key":"T_TOKEN","token":"t"}}' > "$XDG_DATA_HOME/opencode/auth.json"`,
    // The folder is computed, so only the sandbox (not the static check of the command) meets the write.
    `echo ~/.local/bin > .d; d="$(cat .d)"; printf '#!/bin/sh\\n${mark("path")}\\nexec ${GIT} "$@"\\n' > "$d/git"; chmod +x "$d/git"`,
    // PATH also starts with ./node_modules/.bin (a common shell setup): a git there is found from the project folder.
    `echo node_modules/.bin > .n; n="$(cat .n)"; mkdir -p "$n" && printf '#!/bin/sh\\n${mark("relative")}\\nexec "$HOME/.local/bin/git" "$@"\\n' > "$n/git" && chmod +x "$n/git"`,
    // The user's ~/.gitconfig includes ~/.gitconfig.local (absent): a filter defined there, selected by the project's
    // .gitattributes, runs when OpenCode's snapshot adds the changed file.
    `${hook("include").replace("exit 1", "cat")} && chmod +x ${path.join(out, "include.sh")}`,
    `printf '[filter "rt"]\\n\\tclean = ${path.join(out, "include.sh")}\\n' > ~/.gitconfig.local; printf '*.txt filter=rt\\n' > .gitattributes; echo changed >> a.txt`,
    // The editor's server: anything that connects could ask it to run a command on the host.
    `${process.execPath} -e "require('net').connect(process.env.NVIM).on('connect', () => process.exit(0)).on('error', () => process.exit(1))" 2>/dev/null`,
    "echo attempted",
  ].join("\n")
}

for (const target of targets()) {
  describe(`OpenCode's own state on stock opencode ${target.label}`, () => {
    test(
      "without a policy each attack runs outside any hook; with one, none does, now or at the next start",
      async () => {
        for (const policy of [false, true]) {
          await using project = await Harness.project({
            bin: target.bin,
            files: {
              "a.txt": "a\n",
              ...(policy ? { ".opencode-security.json": JSON.stringify(POLICY), "secrets/key.txt": "k\n" } : {}),
            },
          })
          const out = path.join(project.root, "markers")
          fs.mkdirSync(out)
          const bin = path.join(project.home, ".local/bin")
          fs.mkdirSync(bin, { recursive: true })
          fs.writeFileSync(path.join(project.home, ".gitconfig"), "[include]\n\tpath = ~/.gitconfig.local\n")
          const socket = path.join(project.root, "nvim.sock")
          const editor = Bun.listen({
            unix: socket,
            socket: { open: () => fs.writeFileSync(path.join(out, "editor"), ""), data() {} },
          })
          const env = { PATH: ["./node_modules/.bin", bin, process.env.PATH].join(path.delimiter), NVIM: socket }
          const remote = { config: { mcp: { w: { type: "local", command: ["sh", "-c", `touch ${out}/wellknown`] } } } }
          const config = Bun.serve({
            port: 0,
            hostname: "127.0.0.1",
            fetch: (req) =>
              new URL(req.url).pathname === "/.well-known/opencode"
                ? Response.json(remote)
                : new Response("not here", { status: 404 }),
          })
          const server = ModelServer.start([
            ModelServer.call("bash", {
              command: attack(out, `http://127.0.0.1:${config.port}`),
              description: "configure",
            }),
            ModelServer.call("write", { filePath: "b.txt", content: "b\n" }),
            ModelServer.text("done"),
            ModelServer.text("again"),
          ])
          try {
            const first = await Harness.run(project, server, "set things up", { timeoutMs: 180_000, env })
            expect(first.exitCode).toBe(0)
            expect(first.tools.find((t) => t.tool === "bash")?.output).toContain("attempted")
            // The next start reads the global configuration and auth.json.
            await Harness.run(project, server, "next session", { timeoutMs: 180_000, env })
            const ran = MARKERS.filter((m) => fs.existsSync(path.join(out, m)))
            expect({ policy, ran }).toEqual({ policy, ran: policy ? [] : [...MARKERS] })
          } finally {
            server.stop()
            config.stop(true)
            editor.stop(true)
          }
        }
      },
      TIMEOUT,
    )
  })
}
