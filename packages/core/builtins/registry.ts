/**
 * The registry behind `hasBuiltIn(feature)`: a static set of stable kebab-case feature ids that a host
 * provides natively. The patched OpenCode answers `hasBuiltIn` from `BuiltIn.has`; stock OpenCode has no
 * `hasBuiltIn`, so external plugins treat its absence as "nothing is built in".
 *
 * Ids are never renamed or reused; see docs/builtin.md.
 *
 * @example
 * BuiltIn.has("resource-loader") // true in the patched OpenCode
 * BuiltIn.has("Resource-Loader") // false: ids are exact
 */
export namespace BuiltIn {
  export const FEATURES = {
    "resource-loader": "resource-query/load/list-loaded/release tools, lifecycle, pruning and compaction carry-over",
    "dynamic-discovery":
      "agents, commands, skills, output styles and project resources matched to the prompt and suggested in it",
    "ast-grep": "ast_grep_search and ast_grep_replace tools: in-process AST search and rewrite over 25 languages",
    "comment-checker": "advisory note on edit/write/multiedit/apply_patch output when the added comments are excessive",
    "plugin-audit":
      "opencode builtins audit <npm-name | dir> (opencode-builtins audit on stock OpenCode): static AST analysis of a plugin's code for dangerous APIs",
    "builtin-tool-security":
      ".opencode-security.json enforced on built-in tools (paths, shell analysis), output and model-bound text redacted, audit log, self-protection",
    "plugin-tool-guard":
      "plugin-defined tools judged at every call site: path arguments checked, output, title and metadata redacted (structured results kept)",
    "hook-payload-guard":
      "plugin hooks get redacted clones of messages and system prompts; only structural changes come back",
    "mcp-security-policy":
      "MCP tools of unknown servers enforced (arguments checked, output redacted) when a security policy exists",
    lsp: "lsp tool: the nine read-only LSP operations plus diagnostics (file or project, severity filter), prepareRename and an atomic rename",
    "readme-injection":
      "a read result carries the README.md of the folders it reads in, once while the model still sees it (root README opt-in)",
    "look-at":
      "look_at tool: images, SVG and PDF analysed for a goal by a model in a child session; the conversation keeps text only",
    "session-learning":
      "corrections, decisions and preferences in user messages become redacted, deduplicated learnings (rule-based, no model call); learnings-list/forget tools",
    "knowledge-injection":
      "learnings and relevant knowledge-base articles injected once per session and after compaction, in a message part, within a token budget",
    "todo-continuation":
      "a turn that ends with todos open goes on with a synthetic message listing them, at most N times (default 3), never after an abort, a question or in plan mode",
    "crash-recovery":
      "busy sessions keep a heartbeat (lease, process start time, running calls, todos); the next start reports sessions whose OpenCode died; resume/dismiss only on request (/recover, opencode-builtins recovery; stock OpenCode: todos checked, not rewritten)",
    "tool-capture":
      "every tool call (failed ones marked) stored once, redacted, in .opencode/builtins-local/capture/: at most 4 MB and 4,000 records by default (4 rotating files), output cut to 2,000 characters; opencode-builtins capture list|show|clear",
  } as const satisfies Record<string, string>

  export type Feature = keyof typeof FEATURES

  const ids: ReadonlySet<string> = new Set(Object.keys(FEATURES))

  /** True when `feature` is one of the registry's ids (exact, case-sensitive match). */
  export function has(feature: string): boolean {
    return typeof feature === "string" && ids.has(feature)
  }

  /** All registered ids, sorted. */
  export function list(): Feature[] {
    return (Object.keys(FEATURES) as Feature[]).sort()
  }
}
