import { describe, expect, test } from "bun:test"
import { SecurityMatch } from "../../security/match"

const m = (pattern: string, type: "file" | "directory" = "file", extra: Partial<SecurityMatch.Input> = {}) => {
  const c = SecurityMatch.compile({ pattern, type, base: "/repo", home: "/home/me", ...extra })
  if ("error" in c) throw new Error(c.error)
  return (p: string) => SecurityMatch.test(c, p)
}

describe("SecurityMatch", () => {
  test("a name without / matches at any depth below the base, never outside it", () => {
    const t = m(".env*")
    expect(t("/repo/.env")).toBe(true)
    expect(t("/repo/a/b/.env.local")).toBe(true)
    expect(t("/elsewhere/.env")).toBe(false)
    expect(t("/repo/a/.env.d/x")).toBe(false) // a file rule: not what is below a matching folder
  })
  test("a directory rule protects the folder and everything below; X/** covers X itself", () => {
    const t = m("secrets/**", "directory")
    expect(t("/repo/secrets")).toBe(true)
    expect(t("/repo/secrets/a/.hidden")).toBe(true)
    expect(t("/repo/secretsx/a")).toBe(false)
    const name = m("node-secrets", "directory")
    expect(name("/repo/a/node-secrets/b/c")).toBe(true)
  })
  test("anchored, ./ anchored names, absolute and ~ patterns", () => {
    expect(m("config/*.key")("/repo/config/a.key")).toBe(true)
    expect(m("config/*.key")("/repo/x/config/a.key")).toBe(false)
    expect(m("./top")("/repo/top")).toBe(true)
    expect(m("./top")("/repo/a/top")).toBe(false)
    expect(m("/etc/passwd")("/etc/passwd")).toBe(true)
    expect(m("~/.ssh", "directory")("/home/me/.ssh/id_rsa")).toBe(true)
  })
  test("case-insensitive matching when the file system is", () => {
    expect(m("Secrets/**", "directory", { nocase: true })("/repo/SECRETS/a")).toBe(true)
    expect(m("Secrets/**", "directory")("/repo/SECRETS/a")).toBe(false)
  })
  test("errors: negation, .., empty, and the literal used for mentions", () => {
    for (const bad of ["!x", "a/../b", "  ", "/"])
      expect("error" in SecurityMatch.compile({ pattern: bad, type: "file", base: "/r" })).toBe(true)
    const c = SecurityMatch.compile({ pattern: "**/private-notes/*.md", type: "file", base: "/r" })
    expect("error" in c ? "" : c.literal).toBe("private-notes")
  })
})
