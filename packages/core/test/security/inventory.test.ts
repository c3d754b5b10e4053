import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityAccess } from "../../security/access"
import { SecurityConfig } from "../../security/config"
import { SecurityFingerprint } from "../../security/fingerprint"
import { SecurityInventory } from "../../security/inventory"
import { SecurityTree } from "../../security/tree"
import { tmpdir } from "../fixture"
import { POLICY, project } from "./fixture"

async function build(dir: string, cache?: SecurityInventory.Cache, maxEntries?: number) {
  const state = SecurityConfig.load(dir, { home: path.join(dir, "home") })
  if (state.status !== "valid") throw new Error(state.status)
  const tree = await SecurityTree.list(dir, { maxEntries })
  return SecurityInventory.build({ config: state.config, role: "viewer", tree, cache, policyKey: "1" })
}

describe("SecurityInventory", () => {
  test("outermost entries: a folder a directory rule protects, single files elsewhere; inodes and fingerprints", async () => {
    await using dir = await project()
    const index = await build(dir.path)
    const top = index.top.map((e) => `${e.dir ? "dir" : "file"} ${path.relative(dir.path, e.path)}`).sort()
    expect(top).toContain("dir secrets")
    expect(top).toContain("file .env")
    expect(top).toContain("file app/.env.production")
    expect(top).toContain("file .opencode-security.json")
    expect(top).not.toContain("file secrets/api.key")
    // Every protected file is known (also those inside protected folders), with its inode and fingerprints.
    expect(index.files.has(dir.file("secrets/nested/deep.txt"))).toBe(true)
    const stat = fs.statSync(dir.file("secrets/api.key"))
    expect(index.inodes.get(`${stat.dev}:${stat.ino}`)).toBe(dir.file("secrets/api.key"))
    expect(index.read.bytes).toBeGreaterThan(0)
  })

  test("files holding protected segments, with the operations their segments deny", async () => {
    await using dir = await project()
    const index = await build(dir.path)
    expect([...(index.segmented.get(dir.file("src/app.ts")) ?? [])].sort()).toEqual(["llm", "read", "write"])
    expect(index.segmented.has(dir.file("src/util.ts"))).toBe(false)
  })

  // Red-team L5 and L9: a NUL byte added with the edit tool (the file became "binary") or three edits growing the
  // file past the 2 MB read limit took it out of `segmented`, and the sandbox stopped masking its segment.
  test("a file with segments stays segmented whatever its content: a NUL byte does not make it binary here", async () => {
    await using dir = await project()
    const file = dir.file("src/app.ts")
    fs.writeFileSync(file, "export const a = 1 // \u0000\n" + fs.readFileSync(file, "utf8"))
    const index = await build(dir.path)
    expect([...(index.segmented.get(file) ?? [])].sort()).toEqual(["llm", "read", "write"])
    expect(index.whole.has(file)).toBe(false)
  })

  test("a file with segments too large to read whole is segmented and protected whole (found by streaming it)", async () => {
    await using dir = await project()
    const file = dir.file("src/app.ts")
    const line = "export const b = 2\n"
    fs.writeFileSync(file, fs.readFileSync(file, "utf8") + line.repeat(Math.ceil((3 * 1024 * 1024) / line.length)))
    fs.writeFileSync(dir.file("src/plain.ts"), line.repeat(Math.ceil((3 * 1024 * 1024) / line.length)))
    const cache: SecurityInventory.Cache = new Map()
    for (let i = 0; i < 2; i++) {
      const index = await build(dir.path, cache)
      expect([...(index.segmented.get(file) ?? [])].sort()).toEqual(["llm", "read", "write"])
      expect(index.whole.has(file)).toBe(true)
      expect(index.segmented.has(dir.file("src/plain.ts"))).toBe(false)
    }
  }, 60_000)

  test("a ~/ rule protects the home folder outside the project listing", async () => {
    await using dir = await project()
    const index = await build(dir.path)
    expect(index.top.some((e) => e.path === dir.file("home/.ssh") && e.dir)).toBe(true)
  })

  test("a ~/ rule through a linked home (/home → var/home) lists and protects the home's real path too", async () => {
    await using dir = await project(
      {},
      {
        version: "1.0",
        rules: [{ pattern: "~/keys/*.pem", type: "file", deniedOperations: ["read", "llm"] }],
      },
    )
    await using real = await tmpdir({ "keys/a.pem": "PEM=1\n", "keys/b.txt": "B=1\n" })
    const link = path.join(dir.path, "linked-home")
    fs.symlinkSync(real.path, link)
    const state = SecurityConfig.load(dir.path, { home: link })
    if (state.status !== "valid") throw new Error(state.status)
    const tree = await SecurityTree.list(dir.path, {})
    const index = await SecurityInventory.build({ config: state.config, role: "viewer", tree, policyKey: "1" })
    const top = index.top.map((e) => e.path)
    expect(top).toContain(path.join(link, "keys/a.pem"))
    expect(top).toContain(real.file("keys/a.pem"))
    expect(top).not.toContain(real.file("keys/b.txt"))
  })

  test("a second build reuses decisions and file texts; a changed policy key drops the decisions", async () => {
    await using dir = await project()
    const cache: SecurityInventory.Cache = new Map()
    await build(dir.path, cache)
    const decided = cache.decisions!.map.size
    expect(decided).toBeGreaterThan(5)
    await build(dir.path, cache)
    expect(cache.decisions!.map.size).toBe(decided)
    expect(POLICY.rules.length).toBeGreaterThan(0)
  })

  test("a protected path that is a link is recorded as what it leads to (L6); an NFD name as on disk (L7)", async () => {
    await using dir = await project()
    await using elsewhere = await tmpdir({ env: "E=1\n", "vault/key.txt": "K=1\n" })
    fs.rmSync(dir.file(".env"))
    fs.symlinkSync(elsewhere.file("env"), dir.file(".env"))
    fs.rmSync(dir.file("secrets"), { recursive: true })
    fs.symlinkSync(elsewhere.file("vault"), dir.file("secrets"))
    const nfd = dir.file("config/cafe\u0301.key")
    fs.writeFileSync(nfd, "NFD=1\n")
    const index = await build(dir.path)
    const top = (p: string) => index.top.find((e) => e.path === p)
    expect(top(dir.file(".env"))).toMatchObject({ dir: false })
    expect([...top(dir.file("secrets"))!.ops].sort()).toEqual(["llm", "read", "write"])
    expect(top(dir.file("secrets"))!.dir).toBe(true)
    // The sandbox mounts over the path on disk; rules and the tools' checks use its NFC form.
    expect(top(nfd)).toBeDefined()
    expect(index.files.has(nfd.normalize("NFC"))).toBe(true)
  })

  test("a protected link is recorded with where it leads, for the tools to judge that target by the link (T1)", async () => {
    await using dir = await project({ "config/dev.vars": "DB=1\n", "lib/x.js": "x\n", "pub/open.txt": "o\n" })
    fs.rmSync(dir.file(".env"))
    fs.symlinkSync("config/dev.vars", dir.file(".env"))
    fs.rmSync(dir.file("vendor"), { recursive: true })
    fs.symlinkSync("lib", dir.file("vendor"))
    // A link inside a folder protected whole leads out of it: the sandbox hides the folder, not the target.
    fs.symlinkSync("../pub/open.txt", dir.file("secrets/open-link"))
    const index = await build(dir.path)
    const alias = (link: string) => index.aliases.find((a) => a.link === dir.file(link))
    expect(alias(".env")).toMatchObject({ target: dir.file("config/dev.vars"), dir: false })
    expect([...alias(".env")!.ops].sort()).toEqual(["llm", "read"])
    expect(alias("vendor")).toMatchObject({ target: dir.file("lib"), dir: true })
    expect([...alias("vendor")!.ops]).toEqual(["write"])
    expect(alias("secrets/open-link")).toBeUndefined()
  })

  test("a protected link a command removed or sent elsewhere keeps its old target protected for the session", async () => {
    await using dir = await project({ "config/dev.vars": "DB=1\n", "config/other.vars": "O=1\n" })
    fs.rmSync(dir.file(".env"))
    fs.symlinkSync("config/dev.vars", dir.file(".env"))
    const cache: SecurityInventory.Cache = new Map()
    await build(dir.path, cache)
    fs.rmSync(dir.file(".env"))
    fs.symlinkSync("config/other.vars", dir.file(".env"))
    const after = await build(dir.path, cache)
    const targets = after.aliases.filter((a) => a.link === dir.file(".env")).map((a) => a.target)
    expect(targets.sort()).toEqual([dir.file("config/dev.vars"), dir.file("config/other.vars")])
    // The sandbox hides the old target at its own path (no link leads there any more).
    expect(after.top.find((e) => e.path === dir.file("config/dev.vars"))).toMatchObject({ dir: false })
    fs.rmSync(dir.file(".env"))
    expect((await build(dir.path, cache)).aliases.map((a) => a.target).sort()).toEqual(targets.sort())
    // A new session (no cache) knows only what the links lead to now.
    expect((await build(dir.path)).aliases).toEqual([])
  })

  test("a protected link's target moved on the host is followed by its inode (red team V5)", async () => {
    await using dir = await project({
      "config/dev.vars": "DB=Vm0v3d1\n",
      "vault/db.txt": "V=Vm0v3dF0ld3rQz8Lw2Yk5Hd\n",
    })
    fs.rmSync(dir.file(".env"))
    fs.symlinkSync("config/dev.vars", dir.file(".env"))
    fs.rmSync(dir.file("secrets"), { recursive: true })
    fs.symlinkSync("vault", dir.file("secrets"))
    const cache: SecurityInventory.Cache = new Map()
    await build(dir.path, cache)
    // Another plugin's tool moves both (outside the sandbox): the links dangle, the old paths are gone.
    fs.renameSync(dir.file("config"), dir.file("conf2"))
    fs.renameSync(dir.file("vault"), dir.file("old"))
    const after = await build(dir.path, cache)
    const targets = after.aliases.map((a) => `${path.relative(dir.path, a.link)} ${path.relative(dir.path, a.target)}`)
    expect(targets.sort()).toEqual([".env conf2/dev.vars", "secrets old"])
    expect(after.top.map((e) => path.relative(dir.path, e.path))).toEqual(
      expect.arrayContaining(["conf2/dev.vars", "old"]),
    )
    // Recorded as the link's name: a hard link made to the moved file later is recognised.
    expect(
      after.inodes.get(`${fs.statSync(dir.file("old/db.txt")).dev}:${fs.statSync(dir.file("old/db.txt")).ino}`),
    ).toBe(dir.file("secrets/db.txt"))
    expect(SecurityFingerprint.find(after.read, "V=Vm0v3dF0ld3rQz8Lw2Yk5Hd").length).toBeGreaterThan(0)
  })

  test("files below a protected folder link's target: inodes by the link's name, fingerprints, other names (red team V1)", async () => {
    await using dir = await project({ "vault/db.txt": "VAULT_PW=Vh4rdL1nk9QzRt7Mx3Pw5\n" })
    fs.rmSync(dir.file("secrets"), { recursive: true })
    fs.symlinkSync("vault", dir.file("secrets"))
    fs.mkdirSync(dir.file("backup"))
    fs.linkSync(dir.file("vault/db.txt"), dir.file("backup/db.txt"))
    const index = await build(dir.path)
    expect(index.links.map((e) => path.relative(dir.path, e.path))).toContain("backup/db.txt")
    const stat = fs.statSync(dir.file("vault/db.txt"))
    expect(index.inodes.get(`${stat.dev}:${stat.ino}`)).toBe(dir.file("secrets/db.txt"))
    expect(SecurityFingerprint.find(index.read, "VAULT_PW=Vh4rdL1nk9QzRt7Mx3Pw5").length).toBeGreaterThan(0)
  })

  test("outside rules: a listing cut at MAX_OUTSIDE_ENTRIES hides the folders it did not list (L8)", async () => {
    await using vault = await tmpdir({ "zz/a.pem": "PEM\n" })
    fs.mkdirSync(vault.file("aa"))
    for (let i = 0; i <= SecurityInventory.MAX_OUTSIDE_ENTRIES; i++) fs.writeFileSync(vault.file(`aa/${i}`), "")
    await using dir = await project()
    const policy = JSON.parse(fs.readFileSync(dir.file(".opencode-security.json"), "utf8"))
    policy.rules.push({ pattern: `${vault.path}/**/*.pem`, type: "file", deniedOperations: ["read", "llm"] })
    fs.writeFileSync(dir.file(".opencode-security.json"), JSON.stringify(policy))
    const index = await build(dir.path)
    expect(index.unlisted).toContain(vault.file("zz"))
    const zz = index.top.find((e) => e.path === vault.file("zz"))
    expect(zz?.dir).toBe(true)
    expect([...zz!.ops].sort()).toEqual(["llm", "read"])
  }, 60_000)

  // Red-team O3: a command made 200,001 files in a folder sorting first; the next listing stopped before secrets/ and
  // src/, the rebuilt index forgot api.key's fingerprints, and copies of it in ordinary files were shown in clear.
  test("a listing cut short keeps what the last build knew of the files it no longer reaches", async () => {
    await using dir = await project()
    const cache: SecurityInventory.Cache = new Map()
    const before = await build(dir.path, cache)
    const secret = fs.readFileSync(dir.file("secrets/api.key"), "utf8")
    expect(SecurityFingerprint.find(before.read, secret).length).toBeGreaterThan(0)
    fs.mkdirSync(dir.file("aaa"))
    for (let i = 0; i < 300; i++) fs.writeFileSync(dir.file(`aaa/${i}`), "")
    const cut = await SecurityTree.list(dir.path, { maxEntries: 200 })
    expect(cut.unlisted).toContain(dir.file("secrets"))
    expect(cut.unlisted).toContain(dir.file("src"))
    const after = await build(dir.path, cache, 200)
    expect(SecurityFingerprint.find(after.read, secret).length).toBeGreaterThan(0)
    expect(after.files.has(dir.file("secrets/api.key"))).toBe(true)
    expect([...(after.segmented.get(dir.file("src/app.ts")) ?? [])].sort()).toEqual(["llm", "read", "write"])
    // Changed while unlisted: read again, the new content known, the old forgotten.
    fs.writeFileSync(dir.file("secrets/api.key"), "API_KEY=Qm4Zr8Tx2Lw9Vb6Nc3Yk7Hd5\n")
    const changed = await build(dir.path, cache, 200)
    expect(SecurityFingerprint.find(changed.read, "API_KEY=Qm4Zr8Tx2Lw9Vb6Nc3Yk7Hd5").length).toBeGreaterThan(0)
    expect(SecurityFingerprint.find(changed.read, secret).length).toBe(0)
  }, 60_000)

  // Red-team Q2: the carry-forward above kept only files with fingerprints or segments. A write-only protected file
  // and a read-protected file too large to read have neither: once the listing stopped before their folders, their
  // inodes went, and the user's hard links to them in a listed folder were written through and read.
  test("a listing cut short keeps every protected entry the last build knew: inodes, folders, hard links", async () => {
    await using dir = await tmpdir({
      ".opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [
          { pattern: "config/**", type: "directory", deniedOperations: ["write"], allowedRoles: [] },
          { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] },
        ],
      }),
      "config/prod.yaml": "db: prod\n",
      "secrets/dump.sql": "INSERT INTO customers VALUES ('alice', 'card 4111');\n".repeat(4),
      "secrets/old.sql": "-- gone while unlisted\n",
    })
    fs.linkSync(dir.file("config/prod.yaml"), dir.file("prod-link.yaml"))
    fs.linkSync(dir.file("secrets/dump.sql"), dir.file("dump-copy.sql"))
    const state = SecurityConfig.load(dir.path, { home: path.join(dir.path, "home") })
    if (state.status !== "valid") throw new Error(state.status)
    const cache: SecurityInventory.Cache = new Map()
    // maxFileBytes 64: the dump is "too large to read", as a 2.7 MB one is at the default.
    const index = async (maxEntries?: number) =>
      SecurityInventory.build({
        config: state.config,
        role: "viewer",
        tree: await SecurityTree.list(dir.path, { maxEntries }),
        cache,
        policyKey: "1",
        maxFileBytes: 64,
      })
    const id = (rel: string) => {
      const stat = fs.statSync(dir.file(rel))
      return `${stat.dev}:${stat.ino}`
    }
    const known = (i: SecurityInventory.Index) => ({
      files: [...i.files.keys()].map((f) => path.relative(dir.path, f)).sort(),
      top: i.top.map((e) => `${e.dir ? "dir" : "file"} ${path.relative(dir.path, e.path)}`).sort(),
      inodes: [i.inodes.get(id("prod-link.yaml")), i.inodes.get(id("dump-copy.sql"))],
      links: i.links.map((e) => `${path.relative(dir.path, e.path)} ${[...e.ops].sort().join(",")}`).sort(),
    })
    const before = known(await index())
    expect(before.inodes).toEqual([dir.file("config/prod.yaml"), dir.file("secrets/dump.sql")])
    expect(before.links).toEqual(["dump-copy.sql llm,read,write", "prod-link.yaml write"])
    fs.mkdirSync(dir.file("aaa"))
    for (let i = 0; i < 60; i++) fs.writeFileSync(dir.file(`aaa/${i}`), "")
    const cut = await index(20)
    expect(cut.truncated).toBe(true)
    expect(known(cut)).toEqual(before)
    const denied = (rel: string, op: SecurityAccess.Operation) =>
      SecurityAccess.checkAccess(state.config, dir.file(rel), op, "viewer", { inodes: cut.inodes })
    expect(denied("prod-link.yaml", "write")).toMatchObject({ allowed: false, via: "hard link" })
    expect(denied("dump-copy.sql", "read")).toMatchObject({ allowed: false, via: "hard link" })
    // Kept build after build while the listing stays cut; what went meanwhile is forgotten (nothing to mount over).
    fs.rmSync(dir.file("secrets/old.sql"))
    const again = known(await index(20))
    expect(again.files).toEqual(before.files.filter((f) => f !== "secrets/old.sql"))
    expect(again.inodes).toEqual(before.inodes)
    expect(again.links).toEqual(before.links)
    expect(again.top).toEqual(before.top)
  }, 60_000)

  // Q2, the listing cut from the start (no earlier build to keep anything from): a file of a listed folder with more
  // names than the listing found has its other names looked for in the folders not listed.
  test("a listing cut from the start finds the protected files a listed hard link shares its inode with", async () => {
    await using dir = await tmpdir({
      ".opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [
          { pattern: "config/**", type: "directory", deniedOperations: ["write"], allowedRoles: [] },
          { pattern: "secrets/*.sql", type: "file", deniedOperations: ["read", "write", "llm"], allowedRoles: [] },
        ],
      }),
      "config/deep/prod.yaml": "db: prod\n",
      "secrets/dump.sql": "INSERT INTO customers VALUES ('alice', 'card 4111');\n",
      "notes/a.txt": "ordinary\n",
    })
    fs.linkSync(dir.file("config/deep/prod.yaml"), dir.file("prod-link.yaml"))
    fs.linkSync(dir.file("secrets/dump.sql"), dir.file("dump-copy.sql"))
    // An ordinary file with a second name in an unlisted folder: found, and nothing made of it.
    fs.linkSync(dir.file("notes/a.txt"), dir.file("a-copy.txt"))
    fs.mkdirSync(dir.file("aaa"))
    for (let i = 0; i < 60; i++) fs.writeFileSync(dir.file(`aaa/${i}`), "")
    const state = SecurityConfig.load(dir.path, { home: path.join(dir.path, "home") })
    if (state.status !== "valid") throw new Error(state.status)
    const cache: SecurityInventory.Cache = new Map()
    const build = async () => {
      const tree = await SecurityTree.list(dir.path, { maxEntries: 20 })
      expect(tree.unlisted).toEqual(expect.arrayContaining([dir.file("config"), dir.file("secrets")]))
      return SecurityInventory.build({ config: state.config, role: "viewer", tree, cache, policyKey: "1" })
    }
    for (const index of [await build(), await build()]) {
      const links = index.links.map((e) => `${path.relative(dir.path, e.path)} ${[...e.ops].sort().join(",")}`)
      expect(links.sort()).toEqual(["dump-copy.sql llm,read,write", "prod-link.yaml write"])
      const denied = (rel: string, op: SecurityAccess.Operation) =>
        SecurityAccess.checkAccess(state.config, dir.file(rel), op, "viewer", { inodes: index.inodes })
      expect(denied("prod-link.yaml", "write")).toMatchObject({ allowed: false, via: "hard link" })
      expect(denied("dump-copy.sql", "read")).toMatchObject({ allowed: false, via: "hard link" })
      expect(denied("a-copy.txt", "write").allowed).toBe(true)
    }
  }, 60_000)
})
