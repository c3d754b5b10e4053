/**
 * OpenCode's vocabulary, in one place: the ids of its built-in tools and what they take, the shape of stored
 * messages, and how MCP tool ids are formed. Every feature that reads a tool call, a hook payload or a message uses
 * these names rather than spelling them again. Facts of OpenCode 1.2.15 through 1.18.x.
 *
 * @example
 * OpenCode.WRITE_TOOLS.has("apply_patch") // true
 * OpenCode.mcpToolId("my docs", "search") // "my_docs_search"
 */
export namespace OpenCode {
  /** Built-in tools that read or write files, by id (also `ls`/`patch`, older spellings still seen). */
  export const FILE_TOOLS = [
    "read",
    "write",
    "edit",
    "multiedit",
    "apply_patch",
    "patch",
    "glob",
    "grep",
    "list",
    "ls",
    "bash",
    "lsp",
    "batch",
  ] as const

  /** Built-in tools that touch no file. */
  export const OTHER_TOOLS = [
    "todowrite",
    "todoread",
    "question",
    "webfetch",
    "websearch",
    "codesearch",
    "task",
    "skill",
    "invalid",
    "plan_enter",
    "plan_exit",
    "StructuredOutput",
  ] as const

  /**
   * OpenCode 1.18's own tools that reach an MCP server named in their `server` argument (all connected servers when it
   * is absent): its resources and resource templates.
   */
  export const MCP_RESOURCE_TOOLS: ReadonlySet<string> = new Set([
    "list_mcp_resources",
    "list_mcp_resource_templates",
    "read_mcp_resource",
  ])

  /** Built-in tools that only keep the session's todo list: calling them is bookkeeping, not work on the task. */
  export const TODO_TOOLS: ReadonlySet<string> = new Set(["todowrite", "todoread"])

  /** Built-in tools that change files. */
  export const WRITE_TOOLS: ReadonlySet<string> = new Set(["write", "edit", "multiedit", "apply_patch", "patch"])

  /** The tool that runs shell commands (its id stays `bash` whatever the shell, in 1.18 too). */
  export const SHELL_TOOL = "bash"

  /** Argument names of the built-in tools, as the model sends them. */
  export type ToolArgs = {
    read: { filePath: string; offset?: number; limit?: number }
    write: { filePath: string; content: string }
    edit: { filePath: string; oldString: string; newString: string; replaceAll?: boolean }
    multiedit: { filePath: string; edits: { oldString: string; newString: string; replaceAll?: boolean }[] }
    apply_patch: { patchText: string }
    glob: { pattern: string; path?: string }
    grep: { pattern: string; path?: string; include?: string }
    list: { path?: string; ignore?: string[] }
    bash: { command: string; description?: string; workdir?: string; timeout?: number }
    batch: { tool_calls: { tool: string; parameters: unknown }[] }
    skill: { name: string }
    task: { subagent_type: string; prompt: string; description?: string }
  }

  /**
   * A file a prompt mentions (`@src/app.ts`, `@~/notes.md`): OpenCode reads each one that exists, relative to the
   * worktree (`~/` to the home), into the message it builds from a prompt — the `task` tool's prompt included.
   */
  export const FILE_MENTION = /(?<![\w`])@(\.?[^\s`,.]*(?:\.[^\s`,.]+)*)/g

  /** The synthetic text OpenCode puts before the content of a file it read into a message (`{"filePath": …}` follows). */
  export const READ_PREAMBLE = "Called the Read tool with the following input: "

  /** A stored message as OpenCode hands it to hooks and the SDK returns it: its info and its parts. */
  export type Message = { info: { id?: string; role?: string; [key: string]: unknown }; parts: unknown[] }

  /** OpenCode turns a configured MCP server's name into the prefix of its tools' ids with this rule. */
  export function sanitise(name: string): string {
    return name.replace(/[^a-zA-Z0-9_-]/g, "_")
  }

  /**
   * The id of an MCP server's tool as OpenCode registers it.
   *
   * @example
   * OpenCode.mcpToolId("docs.v2", "search") // "docs_v2_search"
   */
  export function mcpToolId(server: string, tool: string): string {
    return `${sanitise(server)}_${sanitise(tool)}`
  }
}
