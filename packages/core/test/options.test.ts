import { describe, expect, test } from "bun:test"
import fs from "fs"
import { Resource } from "../resource/schema"
import { Logger } from "../util/log"
import { Builtins } from "../builtins"
import path from "path"
import {
  LISTS_ADDED_UP,
  loadOptions,
  OPTIONS_FILE,
  projectOptions,
  sectionEnabled,
  unknownSections,
  validSection,
} from "../options"
import { tmpdir } from "./fixture"

describe("options", () => {
  test("the project file and explicit options merge per section, explicit values winning", async () => {
    await using dir = await tmpdir({
      [OPTIONS_FILE]: JSON.stringify({
        resources: { maxResourcesPerSession: 5, autoLoadReferences: true },
        discovery: { enabled: false },
      }),
    })
    const { options, error } = loadOptions(dir.path, { resources: { maxResourcesPerSession: 9 } })
    expect(error).toBeUndefined()
    expect(options).toEqual({
      resources: { maxResourcesPerSession: 9, autoLoadReferences: true },
      discovery: { enabled: false },
    })
  })

  test("no file and no options is empty; a broken file is reported and ignored", async () => {
    await using dir = await tmpdir()
    expect(loadOptions(dir.path, undefined)).toEqual({ options: {}, files: [] })
    await dir.write({ [OPTIONS_FILE]: "{ not json" })
    const broken = loadOptions(dir.path, "not an object")
    expect(broken.options).toEqual({})
    expect(broken.error).toContain("opencode-builtins.json")
    expect(broken.error).toContain("using defaults")
    await dir.write({ [OPTIONS_FILE]: "[1]" })
    expect(loadOptions(dir.path, undefined).error).toContain("not a JSON object")
  })

  test("a section is validated key by key: bad values fall back to defaults, unknown keys are named", () => {
    const log = Logger.memory()
    const config = validSection(
      Resource.Config,
      { enabled: true, maxResourcesPerSession: "lots", maxReferencesDepth: 3, colour: "blue" },
      "resources",
      log,
    )
    expect(config).toEqual({ maxReferencesDepth: 3 })
    expect(log.entries.map((e) => [e.level, e.message.split(";")[0].split(":")[0]])).toEqual([
      ["error", "resources.maxResourcesPerSession"],
      ["warn", "unknown option resources.colour ignored"],
    ])
  })

  test("an enabled that is not true or false, and a section that is not an object, are reported; the feature stays on", () => {
    const log = Logger.memory()
    expect(validSection(Resource.Config, { enabled: "no", maxReferencesDepth: 3 }, "resources", log)).toEqual({
      maxReferencesDepth: 3,
    })
    expect(validSection(Resource.Config, 5, "resources", log)).toEqual({})
    expect(validSection(Resource.Config, undefined, "resources", log)).toEqual({})
    expect(log.entries.map((e) => [e.level, e.message])).toEqual([
      ["error", 'resources.enabled: expected true or false, got "no" — the feature stays on'],
      ["error", "resources: expected an object of options, got 5 — using the defaults"],
    ])
    expect([sectionEnabled({ enabled: false }), sectionEnabled({ enabled: "no" }), sectionEnabled(5)]).toEqual([
      false,
      true,
      true,
    ])
  })

  test("X10: a section named by the feature id is named in a warning with the section meant, on every route's composition", async () => {
    // The ids docs/builtin.md and the docs' headings show, used as section names.
    await using dir = await tmpdir({
      [OPTIONS_FILE]: JSON.stringify({
        "todo-continuation": { enabled: false },
        "comment-checker": { sensitivity: false },
      }),
    })
    const log = Logger.memory()
    const { options, error } = loadOptions(dir.path, undefined)
    expect(error).toBeUndefined()
    await Builtins.create(
      { directory: dir.path, worktree: dir.path, log },
      { options, logger: () => log, only: ["todo-continuation", "comment-checker"] },
    )
    const warnings = log.entries.filter((e) => e.level === "warn").map((e) => e.message)
    expect(warnings.filter((m) => m.startsWith("unknown section"))).toEqual([
      expect.stringContaining(
        `unknown section "todo-continuation" in ${dir.file(OPTIONS_FILE)} ignored (did you mean "todoContinuation"?)`,
      ),
      expect.stringContaining(
        `unknown section "comment-checker" in ${dir.file(OPTIONS_FILE)} ignored (did you mean "commentChecker"?)`,
      ),
    ])
  })

  test("X10: suggestions for misnamed sections; known sections and $schema pass without a word", () => {
    const log = Logger.memory()
    const unknown = unknownSections(
      {
        $schema: {},
        resources: {},
        todoContinuation: {},
        "crash-recovery": {},
        Discovery: {},
        comment_checker: {},
        resource: {},
        colour: {},
      },
      Builtins.FEATURES,
      log,
    )
    expect(unknown).toEqual(["crash-recovery", "Discovery", "comment_checker", "resource", "colour"])
    expect(log.entries.map((e) => /did you mean "(\w+)"/.exec(e.message)?.[1] ?? null)).toEqual([
      "sessionRecovery",
      "discovery",
      "commentChecker",
      "resources",
      null,
    ])
    expect(log.entries[4].message).toContain("; sections: ")
  })

  test("Q6: files from the start folder up to the worktree merge deeply, the nearer winning; none above the worktree", async () => {
    await using dir = await tmpdir({
      [OPTIONS_FILE]: JSON.stringify({ outside: { read: true } }),
      [`repo/${OPTIONS_FILE}`]: JSON.stringify({
        lsp: { enabled: false, servers: { pyright: { command: ["pyright-langserver", "--stdio"] } } },
        resources: { maxResourcesPerSession: 5, exclude: ["a/**", "b/**"] },
      }),
      [`repo/packages/server/${OPTIONS_FILE}`]: JSON.stringify({
        lsp: { servers: { typescript: false } },
        resources: { exclude: ["c/**"] },
      }),
      "repo/packages/server/src/index.ts": "export {}\n",
    })
    const repo = path.join(dir.path, "repo")
    const sub = path.join(repo, "packages/server")
    const loaded = loadOptions({ directory: path.join(sub, "src"), worktree: repo }, undefined)
    expect(loaded.error).toBeUndefined()
    // farthest first: the order they merge in
    expect(loaded.files).toEqual([path.join(repo, OPTIONS_FILE), path.join(sub, OPTIONS_FILE)])
    expect(loaded.options).toEqual({
      lsp: {
        enabled: false,
        servers: { pyright: { command: ["pyright-langserver", "--stdio"] }, typescript: false },
      },
      // lists other than LISTS_ADDED_UP are replaced whole, as OpenCode replaces most of its own
      resources: { maxResourcesPerSession: 5, exclude: ["c/**"] },
    })
    // "/" (OpenCode outside git) is never walked up to: only the start folder's file
    expect(loadOptions({ directory: sub, worktree: "/" }, undefined).files).toEqual([path.join(sub, OPTIONS_FILE)])
    // a string is the start folder alone, as before
    expect(loadOptions(repo, undefined).files).toEqual([path.join(repo, OPTIONS_FILE)])
  })

  test("Q6: the files read are logged; a broken nearer file is named and the farther one still applies", async () => {
    await using dir = await tmpdir({
      [OPTIONS_FILE]: JSON.stringify({ lsp: { enabled: false } }),
      [`pkg/${OPTIONS_FILE}`]: "{ broken",
    })
    const log = Logger.memory()
    const options = projectOptions({ directory: path.join(dir.path, "pkg"), worktree: dir.path }, undefined, log)
    expect(options).toEqual({ lsp: { enabled: false } })
    const lines = log.entries.map((e) => [e.level, e.message])
    expect(lines).toEqual([
      ["warn", expect.stringContaining(path.join(dir.path, "pkg", OPTIONS_FILE) + ": ")],
      ["info", `options read from ${path.join(dir.path, OPTIONS_FILE)} (nearest last, overriding)`],
    ])
  })

  test("Q7: a UTF-8 byte-order mark before the JSON is skipped", async () => {
    await using dir = await tmpdir({ [OPTIONS_FILE]: "\uFEFF" + JSON.stringify({ lsp: { enabled: false } }) })
    expect(loadOptions(dir.path, undefined)).toEqual({
      options: { lsp: { enabled: false } },
      files: [path.join(dir.path, OPTIONS_FILE)],
    })
  })

  test("comments and trailing commas are read as OpenCode reads its own configuration; a broken file names where", async () => {
    await using dir = await tmpdir({
      [OPTIONS_FILE]:
        '{\n  // the language servers stay off in this repository\n  "lsp": { "enabled": false, },\n  /* more */\n}\n',
    })
    expect(loadOptions(dir.path, undefined).options).toEqual({ lsp: { enabled: false } })
    await using broken = await tmpdir({ [OPTIONS_FILE]: '{\n  "lsp": { "enabled": false }\n  "x": 1\n}\n' })
    expect(loadOptions(broken.path, undefined).error).toContain("line 3, column 3: expected ',' between two entries")
    await using binary = await tmpdir({ [OPTIONS_FILE]: "" })
    fs.writeFileSync(binary.file(OPTIONS_FILE), Buffer.from([0x00, 0xff, 0xfe, 0x12]))
    expect(loadOptions(binary.path, undefined).error).toContain("is not UTF-8 text (byte 1); save it as UTF-8")
  })

  test("R3: capture.exclude adds up across the options files and the plugin's options, each entry once; other lists are replaced whole", async () => {
    // OpenCode adds up its own plugin and instructions lists across config files; an exclusion list is such a list.
    await using dir = await tmpdir({
      ".git/HEAD": "ref: refs/heads/main\n",
      [OPTIONS_FILE]: `{
        // the repository's options
        "capture": { "exclude": ["webfetch"] },
        "readme": { "names": ["README.md"] },
        "lsp": { "servers": { "pyright": { "command": ["pyright-langserver", "--stdio"], "extensions": [".py"] } } },
      }`,
      [`packages/server/${OPTIONS_FILE}`]: JSON.stringify({
        capture: { exclude: ["bash", "webfetch"] },
        readme: { names: ["README.rst"] },
        lsp: { servers: { pyright: { command: ["basedpyright-langserver", "--stdio"], extensions: [".pyi"] } } },
      }),
    })
    const place = { directory: path.join(dir.path, "packages/server"), worktree: dir.path }
    const { options, files } = loadOptions(place, undefined)
    expect(files).toHaveLength(2)
    expect(options.capture).toEqual({ exclude: ["webfetch", "bash"] })
    // an order of preference and one command line are one setting each: the nearer file's wins whole
    expect(options.readme).toEqual({ names: ["README.rst"] })
    expect(options.lsp).toEqual({
      servers: { pyright: { command: ["basedpyright-langserver", "--stdio"], extensions: [".pyi"] } },
    })
    // the plugin's explicit options add to the files' list too
    const explicit = loadOptions(place, { capture: { exclude: ["task", "bash"] }, readme: { names: ["Readme.txt"] } })
    expect(explicit.options.capture).toEqual({ exclude: ["webfetch", "bash", "task"] })
    expect(explicit.options.readme).toEqual({ names: ["Readme.txt"] })
    // a list given where an object was (or the reverse) is not added to anything
    await Bun.write(
      path.join(dir.path, "packages/server", OPTIONS_FILE),
      JSON.stringify({ capture: { exclude: "bash" } }),
    )
    expect(loadOptions(place, undefined).options.capture).toEqual({ exclude: "bash" })
    expect(LISTS_ADDED_UP).toEqual(["capture.exclude"])
  })

  test("R4: the unknown-section warning names the options file(s) holding the section, or the plugin's options", async () => {
    await using dir = await tmpdir({
      ".git/HEAD": "ref: refs/heads/main\n",
      [OPTIONS_FILE]: JSON.stringify({ capture: { exclude: ["webfetch"] }, lookat: { enabled: false } }),
      [`packages/server/${OPTIONS_FILE}`]: JSON.stringify({
        "todo-continuation": { enabled: false },
        lookat: { enabled: true },
      }),
    })
    const log = Logger.memory()
    const place = { directory: path.join(dir.path, "packages/server"), worktree: dir.path }
    unknownSections(projectOptions(place, { readMe: { maxTokens: 100 } }, log), Builtins.FEATURES, log)
    const warnings = log.entries.filter((e) => e.message.startsWith("unknown section")).map((e) => e.message)
    const root = path.join(dir.path, OPTIONS_FILE)
    const pkg = path.join(dir.path, "packages/server", OPTIONS_FILE)
    expect(warnings).toEqual([
      expect.stringContaining(`unknown section "lookat" in ${root} and ${pkg} ignored (did you mean "lookAt"?)`),
      expect.stringContaining(
        `unknown section "todo-continuation" in ${pkg} ignored (did you mean "todoContinuation"?)`,
      ),
      expect.stringContaining(`unknown section "readMe" in the plugin's options ignored (did you mean "readme"?)`),
    ])
    // options not read by loadOptions (a route building its own) are "the options", as before
    const plainLog = Logger.memory()
    unknownSections({ lookat: {} }, Builtins.FEATURES, plainLog)
    expect(plainLog.entries[0]?.message).toContain(`unknown section "lookat" in the options ignored`)
  })
})
