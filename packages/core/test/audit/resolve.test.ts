// `opencode-builtins audit <npm name>` fetches the package with `npm pack`. npm takes as "project" configuration the
// `.npmrc` of the nearest folder above where it runs that holds a package.json (or of a workspace root above that):
// run from a folder under the shared temporary folder, it obeyed a `registry=` a contained command planted in `/tmp`
// and a decoy was audited in place of the package the user then installs (red team GE3). Two local registries stand in
// for the user's and the planted one (no real network); TMPDIR and the cache folder are this test's own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import { run } from "../../audit/cli"
import { AuditTarget } from "../../audit/resolve"
import { memoryIO } from "../../util/cli"
import { ROUTES, fresh, isolateHome } from "../security/redteam-helpers"
import { bunSpawnSync } from "../spawn-sync"

const NAME = "some-opencode-plugin"

/** A registry serving one version of NAME whose index.js says `marker`. */
function registry(scratch: string, marker: string) {
  const pkg = path.join(scratch, `pkg-${marker}`, "package")
  fs.mkdirSync(pkg, { recursive: true })
  fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: NAME, version: "1.0.0", main: "index.js" }))
  fs.writeFileSync(path.join(pkg, "index.js"), `export default async () => ({}) // ${marker}\n`)
  const tgz = path.join(scratch, `${marker}.tgz`)
  bunSpawnSync(["tar", "-czf", tgz, "-C", path.dirname(pkg), "package"])
  const bytes = fs.readFileSync(tgz)
  const requests: string[] = []
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req): Response {
      const url = new URL(req.url)
      requests.push(url.pathname)
      if (url.pathname.endsWith(".tgz")) return new Response(bytes)
      if (url.pathname !== `/${NAME}`) return new Response("not found", { status: 404 })
      return Response.json({
        name: NAME,
        "dist-tags": { latest: "1.0.0" },
        versions: {
          "1.0.0": { name: NAME, version: "1.0.0", dist: { tarball: `${base()}${NAME}/-/${NAME}-1.0.0.tgz` } },
        },
      })
    },
  })
  const base = (): string => `http://127.0.0.1:${server.port}/`
  return { url: base(), requests, stop: () => server.stop(true) }
}

let scratch: string
let user: ReturnType<typeof registry>
let planted: ReturnType<typeof registry>
const saved: Record<string, string | undefined> = {}
// Run under `npm test`, npm hands its own settings down as npm_config_* variables (userconfig, cache, prefix, …): a
// user's shell has none of them, and the one naming /root/.npmrc would replace this test's home's .npmrc.
const VARS = [
  "HOME",
  "TMPDIR",
  "XDG_CACHE_HOME",
  ...Object.keys(process.env).filter((v) => /^npm_config_/i.test(v)),
  "npm_config_cache",
]

beforeAll(() => {
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-audit-resolve-")))
  user = registry(scratch, "USER-REGISTRY")
  planted = registry(scratch, "DECOY")
  for (const v of VARS) saved[v] = process.env[v]
  const home = path.join(scratch, "home")
  fs.mkdirSync(home)
  // The user's own npm configuration names their registry.
  fs.writeFileSync(path.join(home, ".npmrc"), `registry=${user.url}\n`)
  // The shared temporary folder, as a contained command leaves it: a package.json (a workspace root taking in every
  // folder below it) and an .npmrc naming the decoy's registry.
  const tmp = path.join(scratch, "tmp")
  fs.mkdirSync(tmp)
  fs.writeFileSync(path.join(tmp, "package.json"), JSON.stringify({ workspaces: ["*", "*/*", "*/*/*"] }))
  fs.writeFileSync(path.join(tmp, ".npmrc"), `registry=${planted.url}\n`)
  // The same above the cache folder: no folder above the one npm runs in may bring its configuration.
  const cacheParent = path.join(scratch, "cache-parent")
  fs.mkdirSync(cacheParent)
  fs.writeFileSync(
    path.join(cacheParent, "package.json"),
    JSON.stringify({ workspaces: ["cache/opencode-builtins/audit/*"] }),
  )
  fs.writeFileSync(path.join(cacheParent, ".npmrc"), `registry=${planted.url}\n`)
  process.env.HOME = home
  process.env.TMPDIR = tmp
  process.env.XDG_CACHE_HOME = path.join(cacheParent, "cache")
  for (const v of VARS) if (/^npm_config_/i.test(v)) delete process.env[v]
  process.env.npm_config_cache = path.join(scratch, "npm-cache")
})

afterAll(() => {
  for (const v of VARS)
    if (saved[v] === undefined) delete process.env[v]
    else process.env[v] = saved[v]
  user.stop()
  planted.stop()
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("audit of a package by name: npm's configuration is the user's own (GE3)", () => {
  test("a .npmrc planted above the temporary folder or the cache folder is not obeyed: the user's registry's package is audited", async () => {
    let dir: string
    {
      await using target = await AuditTarget.resolve(NAME, { cwd: process.env.HOME! })
      dir = target.dir
      expect(fs.readFileSync(path.join(target.dir, "index.js"), "utf8")).toContain("USER-REGISTRY")
      // Where it came from is kept for the report.
      expect(target.packed).toEqual({
        name: NAME,
        version: "1.0.0",
        registry: user.url,
        tarball: `${user.url}${NAME}/-/${NAME}-1.0.0.tgz`,
      })
      // Downloaded and unpacked in the built-ins' own cache (hidden from commands), not in the shared TMPDIR.
      const cache = path.join(process.env.XDG_CACHE_HOME!, "opencode-builtins", "audit") + path.sep
      expect(target.dir.startsWith(cache)).toBe(true)
      expect(target.dir.startsWith(process.env.TMPDIR!)).toBe(false)
    }
    expect(planted.requests).toEqual([])
    // Disposed: the download is gone.
    expect(fs.existsSync(dir)).toBe(false)
  }, 60_000)

  test("the report says which registry the package was fetched from (text and --json)", async () => {
    const io = memoryIO(process.env.HOME!, { ...process.env })
    expect(await run([NAME], io)).toBe(0)
    expect(io.stdout).toContain(
      `Fetched from ${user.url} (tarball ${user.url}${NAME}/-/${NAME}-1.0.0.tgz): check it is the registry you install from`,
    )
    const json = memoryIO(process.env.HOME!, { ...process.env })
    expect(await run([NAME, "--json"], json)).toBe(0)
    expect(JSON.parse(json.stdout).fetched).toEqual({
      registry: user.url,
      tarball: `${user.url}${NAME}/-/${NAME}-1.0.0.tgz`,
    })
    expect(planted.requests).toEqual([])
  }, 60_000)

  test("a cache folder that cannot hold a private folder: refused, naming the folder", async () => {
    const blocked = path.join(scratch, "blocked")
    fs.writeFileSync(blocked, "a file where the cache folder should be")
    const error = await AuditTarget.resolve(NAME, {
      cwd: process.env.HOME!,
      env: { XDG_CACHE_HOME: blocked },
    }).then(
      () => undefined,
      (e) => e,
    )
    expect(AuditTarget.NoPrivateFolder.is(error)).toBe(true)
    expect(String(error.message)).toContain(path.join(blocked, "opencode-builtins", "audit"))
    expect(String(error.message)).toContain("set XDG_CACHE_HOME to a folder of yours")
  })
})

describe("both routes: a contained command plants npm configuration in the shared /tmp; the audit does not obey it", () => {
  let home: ReturnType<typeof isolateHome>
  beforeAll(() => {
    home = isolateHome()
    fs.writeFileSync(path.join(home.home, ".npmrc"), `registry=${user.url}\n`)
  })
  afterAll(() => home.restore(), 60_000)

  for (const route of ROUTES)
    test(`route ${route}`, async () => {
      const shared = `/tmp/ocb-ge3-${route}-${process.pid}`
      fs.rmSync(shared, { recursive: true, force: true })
      const saved = process.env.TMPDIR
      try {
        {
          await using box = await fresh(route)
          await box.s.bash(
            `mkdir -p ${shared} && echo '{ "workspaces": ["*"] }' > ${shared}/package.json && ` +
              `echo registry=${planted.url} > ${shared}/.npmrc && echo PLANTED`,
          )
          await box.s.call("todowrite", { todos: [] })
        }
        // The sandbox shares /tmp with the host: what the command wrote is there after the session.
        expect(fs.readFileSync(path.join(shared, ".npmrc"), "utf8")).toBe(`registry=${planted.url}\n`)
        // The user's temporary folder is that one (the default /tmp holds the same files).
        process.env.TMPDIR = shared
        await using target = await AuditTarget.resolve(NAME, { cwd: home.home })
        expect(fs.readFileSync(path.join(target.dir, "index.js"), "utf8")).toContain("USER-REGISTRY")
        expect(target.packed?.registry).toBe(user.url)
        expect(planted.requests).toEqual([])
      } finally {
        if (saved === undefined) delete process.env.TMPDIR
        else process.env.TMPDIR = saved
        fs.rmSync(shared, { recursive: true, force: true })
      }
    }, 60_000)
})

describe("AuditTarget.fetchedFrom", () => {
  test("registry and tarball from npm's http log lines, scoped names and cache hits included", () => {
    expect(
      AuditTarget.fetchedFrom(
        [
          "npm http fetch GET 200 https://r.example/npm/@s%2fp 20ms (cache revalidated)",
          "npm warn something",
          "npm http cache https://r.example/npm/@s/p/-/p-1.0.0.tgz 1ms (cache hit)",
        ].join("\n"),
        "@s/p",
      ),
    ).toEqual({ registry: "https://r.example/npm/", tarball: "https://r.example/npm/@s/p/-/p-1.0.0.tgz" })
    expect(AuditTarget.fetchedFrom("npm notice\n", "p")).toEqual({})
  })
})
