import z from "zod"

/**
 * The `.opencode-security.json` policy: its zod schema (the types), the JSON Schema generated from it (what ajv
 * validates, what `opencode-builtins security schema` prints for editors) and the names shared by every module.
 *
 * @example
 * const policy: SecuritySchema.Policy = {
 *   version: "1.0",
 *   rules: [{ pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] }],
 * }
 */
export namespace SecuritySchema {
  /** The policy file name; one at the project root, more in subdirectories for their subtree. */
  export const FILE = ".opencode-security.json"
  /** The audit log when the policy names none, relative to the project root. */
  export const DEFAULT_AUDIT_LOG = ".opencode-security-audit.log"
  /** Versions this implementation understands. */
  export const VERSIONS = ["1", "1.0"] as const

  export const Operation = z.enum(["read", "write", "llm"])
  export type Operation = z.infer<typeof Operation>
  export const OPERATIONS = Operation.options

  const RoleName = z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "a role name is 1-64 letters, digits, '_', '.' or '-'")
  const Operations = z.array(Operation).min(1, "list at least one operation").max(3)

  export const Role = z.strictObject({
    name: RoleName.describe("Role name, as set in OPENCODE_SECURITY_ROLE"),
    level: z.number().int().min(0).max(1_000_000).describe("Higher levels pass rules that allow a lower listed role"),
  })
  export type Role = z.infer<typeof Role>

  export const Rule = z.strictObject({
    pattern: z
      .string()
      .min(1)
      .max(1024)
      .describe(
        "gitignore-like, relative to the folder holding the policy file; no '/' matches a name at any depth; " +
          "'/abs' and '~/x' protect paths outside the project",
      ),
    type: z.enum(["file", "directory"]).describe("'directory' protects the matched folder and everything below it"),
    deniedOperations: Operations,
    allowedRoles: z.array(RoleName).max(64).optional().describe("Roles exempt from this rule (default: none)"),
    description: z.string().max(500).optional(),
  })
  export type Rule = z.infer<typeof Rule>

  export const Marker = z.strictObject({
    start: z.string().min(3).max(200).describe("Text that opens a protected segment, written in a comment"),
    end: z.string().min(3).max(200).describe("Text that closes it; an unclosed start protects to the end of the text"),
    deniedOperations: Operations,
    allowedRoles: z.array(RoleName).max(64).optional(),
    description: z.string().max(500).optional(),
  })
  export type Marker = z.infer<typeof Marker>

  export const SandboxMode = z.enum(["required", "optional", "off"])
  export type SandboxMode = z.infer<typeof SandboxMode>

  export const McpPolicy = z.enum(["enforced", "trusted", "blocked"])
  export type McpPolicy = z.infer<typeof McpPolicy>

  export const Policy = z.strictObject({
    $schema: z.string().optional(),
    version: z.enum(VERSIONS).describe('Policy format version: "1.0"'),
    roles: z.array(Role).max(256).optional(),
    rules: z.array(Rule).max(10_000).optional(),
    segments: z
      .strictObject({
        markers: z.array(Marker).max(256).optional(),
      })
      .optional(),
    logging: z
      .strictObject({
        path: z.string().min(1).max(1024).optional().describe("Audit log, relative to the project root"),
        level: z.enum(["normal", "verbose"]).optional().describe("'verbose' also records allowed accesses"),
        maxSizeMB: z.number().positive().max(10_000).optional().describe("Rotate when the log grows past this"),
        keep: z.number().int().min(0).max(100).optional().describe("Rotated generations kept (default 3)"),
      })
      .optional(),
    mcp: z
      .strictObject({
        defaultPolicy: McpPolicy.optional(),
        servers: z.record(z.string().min(1), McpPolicy).optional(),
      })
      .optional(),
    secrets: z
      .strictObject({
        enabled: z.boolean().optional().describe("Redact well-known secret formats in tool output (default true)"),
      })
      .optional(),
    sandbox: z
      .strictObject({
        mode: SandboxMode.optional().describe(
          "'required' (default when the policy has rules or markers): shell commands run only inside the kernel sandbox; " +
            "'optional': inside it when it can start; 'off': never (weaker: commands are only checked statically)",
        ),
        allowGitConfig: z
          .boolean()
          .optional()
          .describe("Let shell commands change .git/config and .git/hooks (read-only in the sandbox by default)"),
        allowCommandShell: z
          .boolean()
          .optional()
          .describe(
            "Let the agent give command and skill templates shell commands (!`cmd`), which OpenCode runs outside the sandbox when the command is used (refused by default)",
          ),
        allowAgentPermissions: z
          .boolean()
          .optional()
          .describe(
            "Let the agent grant permissions (permission: allow, tools: true) in agent and mode definitions, which override the user's approvals (refused by default)",
          ),
        allowHostTools: z
          .boolean()
          .optional()
          .describe(
            "Keep OpenCode's own formatters and language servers, which run outside the sandbox and start project code the agent can change (turned off by default)",
          ),
        writable: z
          .array(z.string().min(1))
          .max(64)
          .optional()
          .describe(
            "Folders shell commands may write besides the project, the temporary folders and the usual caches (absolute or ~/…; everything else is read-only in the sandbox). Each one widens what a command can leave for programs on the host to run later",
          ),
      })
      .optional()
      .describe("Root policy only: how shell commands are contained"),
  })
  export type Policy = z.infer<typeof Policy>

  let jsonSchema: Record<string, unknown> | undefined
  /** The JSON Schema (draft 2020-12) of a policy file, generated from the zod schema above. */
  export function json(): Record<string, unknown> {
    jsonSchema ??= {
      ...z.toJSONSchema(Policy),
      $id: "https://opencode-builtins.invalid/opencode-security.schema.json",
      title: "OpenCode security policy (.opencode-security.json)",
    }
    return jsonSchema
  }
}
