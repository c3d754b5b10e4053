import { describe, expect, test } from "bun:test"
import { DiscoveryLocate } from "../../discovery/locate"
import { Frontmatter } from "../../util/frontmatter"

// gray-matter evaluates a `---js` / `---javascript` block. Definitions (skills, agents, commands) are files the agent
// can write, and discovery and the security layer read them inside OpenCode's process: such a block must never run.
describe("frontmatter in JavaScript is never evaluated", () => {
  const evil = (name: string) => `---js\n{ description: (globalThis.${name} = "ran", "x") }\n---\nbody\n`
  const evilLong = (name: string) => `---javascript\n{ name: (globalThis.${name} = "ran", "x") }\n---\nbody\n`
  const ran = (name: string) => (globalThis as Record<string, unknown>)[name]

  test("Frontmatter.matter throws instead of running it", () => {
    expect(() => Frontmatter.matter(evil("__ocbFm1"))).toThrow("frontmatter in JavaScript is not read")
    expect(() => Frontmatter.matter(evilLong("__ocbFm2"))).toThrow("frontmatter in JavaScript is not read")
    expect(ran("__ocbFm1")).toBeUndefined()
    expect(ran("__ocbFm2")).toBeUndefined()
  })

  test("Frontmatter.parse and discovery's OpenCode-style reader read nothing from it and run nothing", () => {
    expect(Frontmatter.parse(evil("__ocbFm3")).data).toEqual({})
    expect(DiscoveryLocate.frontmatter(evil("__ocbFm4"))).toBeUndefined()
    expect(DiscoveryLocate.frontmatter(evilLong("__ocbFm5"))).toBeUndefined()
    for (const name of ["__ocbFm3", "__ocbFm4", "__ocbFm5"]) expect(ran(name)).toBeUndefined()
  })

  test("YAML and JSON blocks are still read", () => {
    expect(Frontmatter.matter("---\nname: a\n---\nbody").data).toEqual({ name: "a" })
    expect(Frontmatter.matter('---json\n{ "name": "b" }\n---\nbody').data).toEqual({ name: "b" })
  })
})
