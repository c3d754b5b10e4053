import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityAccess } from "../../security/access"
import { SecurityConfig } from "../../security/config"
import { project } from "./fixture"

let dir: Awaited<ReturnType<typeof project>>
let config: SecurityConfig.Loaded
beforeAll(async () => {
  dir = await project()
  const state = SecurityConfig.load(dir.path, { home: path.join(dir.path, "home") })
  if (state.status !== "valid") throw new Error("fixture policy invalid")
  config = state.config
})
afterAll(() => dir[Symbol.asyncDispose]())

const check = (p: string, op: "read" | "write" | "llm", role = "viewer", inodes?: SecurityAccess.InodeIndex) =>
  SecurityAccess.checkAccess(config, p, op, role, { inodes })

describe("SecurityAccess.checkAccess", () => {
  test("decision with reason, rule and matched path", () => {
    const d = check("secrets/api.key", "read")
    expect(d.allowed).toBe(false)
    if (d.allowed) return
    expect(d.rule).toMatchObject({ pattern: "secrets/**", type: "directory" })
    expect(d.reason).toContain("role 'viewer' is not among 'admin'")
    expect(d.path).toBe(path.join(dir.path, "secrets/api.key"))
  })
  test("roles: allowed role and higher level pass; [] exempts nobody", () => {
    expect(check("secrets/api.key", "read", "admin").allowed).toBe(true)
    expect(check("config/server.key", "read", "dev").allowed).toBe(true)
    expect(check("config/server.key", "read", "admin").allowed).toBe(true)
    expect(check("config/server.key", "read", "viewer").allowed).toBe(false)
    expect(check(".env", "read", "admin").allowed).toBe(false)
  })
  test("operations are separate: an llm-only rule leaves read and write alone", () => {
    expect(check("docs/private.md", "llm").allowed).toBe(false)
    expect(check("docs/private.md", "read").allowed).toBe(true)
    expect(check("vendor/lib.js", "write").allowed).toBe(false)
    expect(check("vendor/lib.js", "read").allowed).toBe(true)
  })
  test("symlinks and hard links are reported with how they were matched", () => {
    fs.symlinkSync("secrets/api.key", path.join(dir.path, "l"))
    const viaLink = check("l", "read")
    expect(!viaLink.allowed && viaLink.via).toBe("symlink")
    fs.linkSync(path.join(dir.path, "secrets/api.key"), path.join(dir.path, "h"))
    const s = fs.statSync(path.join(dir.path, "secrets/api.key"))
    const inodes = new Map([[`${s.dev}:${s.ino}`, path.join(dir.path, "secrets/api.key")]])
    const viaHard = check("h", "read", "viewer", inodes)
    expect(!viaHard.allowed && viaHard.via).toBe("hard link")
    expect(check("h", "read", "viewer").allowed).toBe(true) // without the index nothing tells them apart
  })
  // Red team T1: what a protected link leads to was refused by the sandbox at its target but passed here under its
  // own name (`config/dev.vars` with `.env` → it, `lib/` with the write-protected `vendor` → it).
  test("the target of a protected link is judged by the name it has through the link (T1)", () => {
    const ops = new Set(["read", "llm"] as const)
    const aliases: SecurityAccess.Alias[] = [
      { link: path.join(dir.path, ".env"), target: path.join(dir.path, "shared/dev.vars"), dir: false, ops },
      { link: path.join(dir.path, "vendor"), target: path.join(dir.path, "lib"), dir: true, ops: new Set(["write"]) },
    ]
    const at = (p: string, op: "read" | "write") => SecurityAccess.checkAccess(config, p, op, "viewer", { aliases })
    const read = at("shared/dev.vars", "read")
    expect(!read.allowed && read.via).toBe("link target")
    expect(!read.allowed && read.reason).toContain("it is .env through a protected symbolic link")
    expect(!read.allowed && read.rule.pattern).toBe("**/.env*")
    // A folder link: everything below its target, files not made yet included.
    expect(at("lib/new.js", "write").allowed).toBe(false)
    expect(at("lib", "write").allowed).toBe(false)
    expect(at("lib/new.js", "read").allowed).toBe(true)
    // A file link's target protects only that file; a name beside it is not below it.
    expect(at("shared/dev.vars2", "read").allowed).toBe(true)
    expect(at("shared/dev.vars/x", "read").allowed).toBe(true)
    expect(SecurityAccess.linkNames(aliases, [path.join(dir.path, "lib/a/b.js")], false)).toEqual([
      path.join(dir.path, "vendor/a/b.js"),
    ])
  })
  test("paths outside the project are only caught by absolute and ~ rules", () => {
    expect(check(path.join(dir.path, "home/.ssh/id_rsa"), "read").allowed).toBe(false)
    expect(check("/tmp/.env", "read").allowed).toBe(true)
  })
  test("display shows project paths relative to the root", () => {
    expect(SecurityAccess.display("/r", "/r/a/b")).toBe("a/b")
    expect(SecurityAccess.display("/r", "/x")).toBe("/x")
  })
})

describe("SecurityAccess.deniable: no path is resolved for an operation no rule denies", () => {
  test("per operation and role", () => {
    expect(SecurityAccess.deniable(config, "read", "viewer")).toBe(true)
    expect(SecurityAccess.deniable(config, "write", "viewer")).toBe(true)
  })
  test("a policy that only protects from writes: every read is allowed, a write through a link is still refused", async () => {
    await using p = await project(
      {},
      {
        version: "1.0",
        rules: [{ pattern: "vendor/**", type: "directory", deniedOperations: ["write"] }],
      },
    )
    fs.symlinkSync(p.file("vendor/lib.js"), p.file("docs/lib-link.js"))
    const state = SecurityConfig.load(p.path, { home: path.join(p.path, "home") })
    if (state.status !== "valid") throw new Error("policy invalid")
    expect(SecurityAccess.deniable(state.config, "read", "viewer")).toBe(false)
    expect(SecurityAccess.checkAccess(state.config, "docs/lib-link.js", "read", "viewer").allowed).toBe(true)
    const write = SecurityAccess.checkAccess(state.config, "docs/lib-link.js", "write", "viewer")
    expect(write.allowed).toBe(false)
    if (!write.allowed) expect(write.via).toBe("symlink")
  })
})

describe("SecurityAccess: a refusal of a held host path says what the path is", () => {
  test("each kind of host path has its own reason, through checkAccess and hostReason", async () => {
    await using p = await project()
    const home = path.join(p.path, "home")
    const held = {
      "opencode.json": "the configuration that enables enforcement",
      ".opencode/opencode-builtins.json": "the configuration that enables enforcement",
      ".npmrc": "npm's settings",
      ".env.local": "the environment files Bun loads",
      ".opencode/bunfig.toml": "Bun's settings",
      ".opencode/plugins/x.ts": "code OpenCode loads or installs at its start",
      ".git/config": "git's configuration and hooks",
      "mcp/server.ts": "files OpenCode or the tools it starts read or run on the host",
    }
    const state = SecurityConfig.load(p.path, { home, protect: Object.keys(held).map((f) => p.file(f)) })
    if (state.status !== "valid") throw new Error("fixture policy invalid")
    for (const [file, reason] of Object.entries(held)) {
      const d = SecurityAccess.checkAccess(state.config, file, "write", "viewer")
      expect(d.allowed).toBe(false)
      if (!d.allowed) {
        expect(d.rule.implicit).toBe("host-config")
        expect(d.reason).toContain(`implicit protection of ${reason}`)
      }
    }
    expect(SecurityAccess.hostReason(path.join(home, ".zshenv"))).toContain("shell start-up files")
    expect(SecurityAccess.hostReason(path.join(home, ".local/share/opencode/auth.json"))).toContain("OpenCode's own")
    expect(SecurityAccess.hostReason(path.join(home, ".gitconfig.local"))).toContain("git's configuration")
  })
})

describe("SecurityAccess: a home reached through a symbolic link (/home → var/home, Fedora Silverblue)", () => {
  test("`~/` and absolute rules protect the home's real path too, files not made yet included", async () => {
    await using p = await project(
      {},
      {
        version: "1.0",
        rules: [
          { pattern: "~/.ssh", type: "directory", deniedOperations: ["read", "llm"] },
          { pattern: "~/keys/*.pem", type: "file", deniedOperations: ["read", "llm"] },
        ],
      },
    )
    const real = path.join(p.path, "var/home/me")
    fs.mkdirSync(path.join(real, ".ssh"), { recursive: true })
    fs.mkdirSync(path.join(real, "keys"), { recursive: true })
    fs.writeFileSync(path.join(real, ".ssh/id_ed25519"), "KEY\n")
    fs.symlinkSync("var/home", p.file("homes"))
    const link = path.join(p.path, "homes/me")
    const state = SecurityConfig.load(p.path, { home: link })
    if (state.status !== "valid") throw new Error("policy invalid")
    const denied = (target: string) => !SecurityAccess.checkAccess(state.config, target, "read", "viewer").allowed
    // Control: by the link spelling.
    expect(denied(path.join(link, ".ssh/id_ed25519"))).toBe(true)
    expect(denied(path.join(real, ".ssh/id_ed25519"))).toBe(true)
    expect(denied(path.join(real, ".ssh/later"))).toBe(true)
    expect(denied(path.join(real, "keys/a.pem"))).toBe(true)
    expect(denied(path.join(real, "keys/a.txt"))).toBe(false)
    expect(denied(path.join(real, "notes.txt"))).toBe(false)
  })
})
