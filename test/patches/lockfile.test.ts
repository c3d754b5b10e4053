import { describe, expect, test } from "bun:test"
import { BunLockfile } from "../../scripts/patches/lockfile"

// A lockfile in Bun's layout: a root workspace, an app that needs a GitHub package, a console app that needs a tarball
// URL through the catalog, and a console core the console app depends on (kept: it needs nothing foreign).
const LOCK = `{
  "lockfileVersion": 1,
  "configVersion": 1,
  "workspaces": {
    "": {
      "name": "root",
      "dependencies": {
        "left-pad": "1.3.0",
      },
    },
    "packages/app": {
      "name": "@x/app",
      "dependencies": {
        "ghostty-web": "github:anomalyco/ghostty-web#5134",
        "shared": "^2.0.0",
      },
    },
    "packages/console/app": {
      "name": "@x/console-app",
      "dependencies": {
        "@solidjs/start": "catalog:",
        "@x/console-core": "workspace:*",
      },
    },
    "packages/console/core": {
      "name": "@x/console-core",
      "dependencies": {
        "shared": "^2.0.0",
      },
    },
  },
  "catalog": {
    "@solidjs/start": "https://pkg.pr.new/@solidjs/start@dfb2020",
    "shared": "2.1.0",
  },
  "packages": {
    "@solidjs/start": ["@solidjs/start@https://pkg.pr.new/@solidjs/start@dfb2020", { "dependencies": { "shiki": "^1.0.0", "vinxi": "^0.5.0" } }, "sha512-S"],

    "@solidjs/start/shiki": ["shiki@1.29.2", "", { "dependencies": { "@shikijs/core": "1.29.2" } }, "sha512-A"],

    "@solidjs/start/shiki/@shikijs/core": ["@shikijs/core@1.29.2", "", {}, "sha512-B"],

    "@x/app": ["@x/app@workspace:packages/app"],

    "@x/console-app": ["@x/console-app@workspace:packages/console/app"],

    "@x/console-core": ["@x/console-core@workspace:packages/console/core"],

    "ghostty-web": ["ghostty-web@github:anomalyco/ghostty-web#5134", {}, "anomalyco-ghostty-web-5134", "sha512-G"],

    "left-pad": ["left-pad@1.3.0", "", {}, "sha512-L"],

    "shared": ["shared@2.1.0", "", { "dependencies": { "tiny": "^1.0.0" } }, "sha512-H"],

    "tiny": ["tiny@1.0.1", "", {}, "sha512-T"],

    "vinxi": ["vinxi@0.5.3", "", { "dependencies": { "tiny": "^1.0.0" } }, "sha512-V"],
  }
}
`
const GHOSTTY = { version: "0.4.0", integrity: "sha512-0puDB" }

describe("BunLockfile", () => {
  test("reads Bun's trailing commas, and splits nested keys into package names", () => {
    expect(BunLockfile.parseJsonc('{ "a": [1, 2, ], "s": "x,}", }')).toEqual({ a: [1, 2], s: "x,}" })
    expect(BunLockfile.segments("@solidjs/start/shiki/@shikijs/core")).toEqual([
      "@solidjs/start",
      "shiki",
      "@shikijs/core",
    ])
    const lock = BunLockfile.parse(LOCK)
    expect(BunLockfile.foreign(lock)).toEqual(["@solidjs/start", "ghostty-web"])
    expect(BunLockfile.reachable(lock).size).toBe(Object.keys(lock.packages).length)
  })

  test("the offline plan: workspaces needing foreign packages go, with the workspaces that depend on them", () => {
    const lock = BunLockfile.parse(LOCK)
    expect(BunLockfile.offline(lock, ["ghostty-web"])).toEqual({
      workspaces: ["packages/console/app"],
      catalog: ["@solidjs/start"],
      foreign: ["@solidjs/start"],
    })
    // Without a replacement the app needs GitHub too.
    expect(BunLockfile.offline(lock).workspaces).toEqual(["packages/app", "packages/console/app"])
    const rooted = BunLockfile.parse(LOCK.replace('"left-pad": "1.3.0",', '"ghostty-web": "github:x/y",'))
    expect(() => BunLockfile.offline(rooted)).toThrow("the root workspace depends on ghostty-web")
  })

  test("prune edits the text consistently: blocks, catalog, unreachable entries, the replacement pinned", () => {
    const plan = BunLockfile.offline(BunLockfile.parse(LOCK), ["ghostty-web"])
    const result = BunLockfile.prune(LOCK, { ...plan, replace: { "ghostty-web": GHOSTTY } })
    expect(result.removed.workspaces).toEqual(["packages/console/app"])
    expect(result.removed.packages).toEqual([
      "@solidjs/start",
      "@solidjs/start/shiki",
      "@solidjs/start/shiki/@shikijs/core",
      "@x/console-app",
      "vinxi",
    ])
    expect(result.replaced).toEqual(["ghostty-web"])
    const lock = BunLockfile.parse(result.text)
    expect(Object.keys(lock.workspaces)).toEqual(["", "packages/app", "packages/console/core"])
    expect(lock.catalog).toEqual({ shared: "2.1.0" })
    expect(lock.workspaces["packages/app"].dependencies!["ghostty-web"]).toBe("0.4.0")
    expect(lock.packages["ghostty-web"]).toEqual(["ghostty-web@0.4.0", "", {}, "sha512-0puDB"])
    // tiny stays: shared still needs it (vinxi, which also did, is gone).
    expect(lock.packages.tiny).toBeDefined()
    expect(BunLockfile.foreign(lock)).toEqual([])
    // Bun's layout is kept: one entry a line, a blank line between entries, trailing commas.
    expect(result.text).toContain('    "ghostty-web": ["ghostty-web@0.4.0", "", {}, "sha512-0puDB"],\n\n    "left-pad"')
    expect(result.text).not.toContain("\n\n\n")
    // Pruning the result again changes nothing.
    expect(BunLockfile.prune(result.text, { replace: { "ghostty-web": GHOSTTY } }).text).toBe(result.text)
  })

  test("a lockfile laid out differently is refused rather than half edited", () => {
    const squeezed = LOCK.replace('    "packages/console/app": {\n', '    "packages/console/app": {  \n')
    expect(() => BunLockfile.prune(squeezed, { workspaces: ["packages/console/app"] })).toThrow("laid out differently")
  })

  test("registry specs and the others", () => {
    for (const spec of ["1.2.3", "^2.0.0", "npm:left-pad@1.3.0", "latest", ">=1 <2"])
      expect(BunLockfile.fromRegistry(spec)).toBe(true)
    for (const spec of ["https://pkg.pr.new/x@1", "github:a/b#c", "git+https://x/y.git", "file:../x", "a/b"])
      expect(BunLockfile.fromRegistry(spec)).toBe(false)
  })
})
