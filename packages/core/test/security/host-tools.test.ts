import { describe, expect, test } from "bun:test"
import { SecurityHostTools } from "../../security/host-tools"

describe("SecurityHostTools.decide", () => {
  const cases: [string, Record<string, unknown>, { mode: string; allowHostTools: boolean }, string[]][] = [
    [
      "nothing set, commands contained: both off",
      {},
      { mode: "required", allowHostTools: false },
      ["formatter", "lsp"],
    ],
    ["optional sandbox counts as contained", {}, { mode: "optional", allowHostTools: false }, ["formatter", "lsp"]],
    [
      "the user's own formatter and server entries are turned off too",
      { formatter: { fmt: { command: ["sh", "fmt.sh", "$FILE"] } }, lsp: { deno: {} } },
      { mode: "required", allowHostTools: false },
      ["formatter", "lsp"],
    ],
    [
      "`true` (1.18's switch) is turned off",
      { formatter: true, lsp: true },
      { mode: "required", allowHostTools: false },
      ["formatter", "lsp"],
    ],
    ["already off: left alone", { formatter: false }, { mode: "required", allowHostTools: false }, ["lsp"]],
    ["sandbox off: commands run anything anyway", {}, { mode: "off", allowHostTools: false }, []],
    ["the policy allows host tools", { lsp: true }, { mode: "required", allowHostTools: true }, []],
  ]
  for (const [name, config, sandbox, expected] of cases)
    test(name, () => expect(SecurityHostTools.decide(config, sandbox)).toEqual(expected as SecurityHostTools.Key[]))
})

describe("SecurityHostTools.apply", () => {
  test("sets each key to false in place and returns those changed", () => {
    const config: Record<string, unknown> = { formatter: { prettier: {} }, lsp: true, other: 1 }
    expect(SecurityHostTools.apply(config, ["formatter", "lsp"])).toEqual(["formatter", "lsp"])
    expect(config).toEqual({ formatter: false, lsp: false, other: 1 })
  })

  test("a frozen configuration is not changed and does not throw", () => {
    const config = Object.freeze({ lsp: true }) as Record<string, unknown>
    expect(SecurityHostTools.apply(config, ["lsp"])).toEqual([])
    expect(config.lsp).toBe(true)
  })

  test("the message names what is off and the setting that keeps it", () => {
    const text = SecurityHostTools.message(["lsp"])
    expect(text).toContain("language servers are off")
    expect(text).not.toContain("formatters")
    expect(text).toContain('"allowHostTools": true')
  })
})
