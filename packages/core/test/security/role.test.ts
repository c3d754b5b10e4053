import { describe, expect, test } from "bun:test"
import { SecurityRole } from "../../security/role"

const roles = [
  { name: "admin", level: 100 },
  { name: "dev", level: 50 },
  { name: "viewer", level: 10 },
]
const table = SecurityRole.tableOf(roles)

describe("SecurityRole", () => {
  test("getDefault is the lowest level, viewer without roles", () => {
    expect(SecurityRole.getDefault({ roles })).toBe("viewer")
    expect(
      SecurityRole.getDefault({
        roles: [
          { name: "b", level: 3 },
          { name: "a", level: 3 },
        ],
      }),
    ).toBe("b")
    expect(SecurityRole.getDefault({})).toBe("viewer")
    expect(SecurityRole.getDefault(undefined)).toBe("viewer")
  })
  test("current comes from OPENCODE_SECURITY_ROLE; an unknown name never elevates", () => {
    expect(SecurityRole.current({ roles }, { OPENCODE_SECURITY_ROLE: "admin" }).role).toBe("admin")
    const unknown = SecurityRole.current({ roles }, { OPENCODE_SECURITY_ROLE: "root" })
    expect(unknown.role).toBe("viewer")
    expect(unknown.warning).toContain("not a role")
    expect(SecurityRole.current({ roles }, {}).role).toBe("viewer")
  })
  test("allowed: listed, or a level at least a listed role's; [] exempts nobody", () => {
    expect(SecurityRole.allowed(table, "dev", ["dev"])).toBe(true)
    expect(SecurityRole.allowed(table, "admin", ["dev"])).toBe(true)
    expect(SecurityRole.allowed(table, "viewer", ["dev"])).toBe(false)
    expect(SecurityRole.allowed(table, "admin", [])).toBe(false)
    expect(SecurityRole.allowed(table, "admin", undefined)).toBe(false)
    expect(SecurityRole.allowed(table, "stranger", ["viewer"])).toBe(false)
  })
})
