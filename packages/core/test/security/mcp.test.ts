import { describe, expect, test } from "bun:test"
import { SecurityMcp } from "../../security/mcp"

describe("SecurityMcp", () => {
  test("sanitises like OpenCode and matches the whole server name", () => {
    expect(SecurityMcp.sanitise("my.docs server")).toBe("my_docs_server")
    expect(SecurityMcp.serversOf("my_docs_server_search", ["my.docs server"])).toEqual(["my.docs server"])
    expect(SecurityMcp.serversOf("docs_search", ["doc", "docs"])).toEqual(["docs"])
    expect(SecurityMcp.serversOf("docs_", ["docs"])).toEqual([])
    expect(SecurityMcp.serversOf("read", ["docs"])).toEqual([])
  })
  test("ambiguous ids: the strictest policy of the candidate servers", () => {
    const state = {
      status: "valid",
      root: "/r",
      config: { mcp: { servers: { a: "trusted", a_b: "blocked" } }, hasExplicit: false },
    } as any
    expect(SecurityMcp.policyOfTool(state, "a_b_c", ["a", "a_b"])).toEqual({ policy: "blocked", servers: ["a", "a_b"] })
    expect(SecurityMcp.policyOfTool(state, "a_x", ["a", "a_b"])).toEqual({ policy: "trusted", servers: ["a"] })
    expect(SecurityMcp.policyOfTool(state, "zzz", ["a"])).toBeUndefined()
  })
  test("OpenCode's resource tools reach the server their argument names, or every configured one", () => {
    expect(SecurityMcp.serversOfCall("read_mcp_resource", { server: "a_b", uri: "x://y" }, ["a", "a_b"])).toEqual([
      "a_b",
    ])
    expect(SecurityMcp.serversOfCall("list_mcp_resources", {}, ["a", "a_b"])).toEqual(["a", "a_b"])
    expect(SecurityMcp.serversOfCall("list_mcp_resource_templates", { server: "" }, ["a"])).toEqual(["a"])
    expect(SecurityMcp.serversOfCall("a_b_c", { server: "a" }, ["a", "a_b"])).toEqual(["a", "a_b"])
  })
})
