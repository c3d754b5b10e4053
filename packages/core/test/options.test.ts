import { describe, expect, test } from "bun:test"
import { Resource } from "../resource/schema"
import { Logger } from "../util/log"
import { loadOptions, OPTIONS_FILE, validSection } from "../options"
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
    expect(loadOptions(dir.path, undefined)).toEqual({ options: {} })
    await dir.write({ [OPTIONS_FILE]: "{ not json" })
    const broken = loadOptions(dir.path, "not an object")
    expect(broken.options).toEqual({})
    expect(broken.error).toContain("opencode-builtins.json")
    expect(broken.error).toContain("using defaults")
    await dir.write({ [OPTIONS_FILE]: "[1]" })
    expect(loadOptions(dir.path, undefined).error).toContain("expected a JSON object")
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
})
