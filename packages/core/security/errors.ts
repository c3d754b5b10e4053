import z from "zod"
import { NamedError } from "../util/error"

/**
 * The errors the security layer throws, on both routes: the plugin throws them from `tool.execute.before` (OpenCode
 * reports the message to the model as the tool's error), the fork throws them where OpenCode throws its own
 * permission errors. The message always starts with {@link SecurityError.PREFIX} so a person reading a session can
 * tell a policy refusal from a failing tool.
 *
 * @example
 * throw new SecurityError.Denied({ reason: "reading secrets/api.key is denied by rule 'secrets/**'", path: "/r/secrets/api.key", op: "read" })
 */
export namespace SecurityError {
  export const PREFIX = "Blocked by the project's security policy (.opencode-security.json)"

  const advice = "Do not try to reach this content another way; ask the user if it is needed."

  /** A tool call the policy refuses. */
  export const Denied = NamedError.create(
    "SecurityDenied",
    z.object({
      reason: z.string(),
      path: z.string().optional(),
      op: z.enum(["read", "write", "llm"]).optional(),
      rule: z.string().optional(),
      tool: z.string().optional(),
    }),
    (d) => `${PREFIX}: ${d.reason}. ${advice}`,
  )
  export type Denied = InstanceType<typeof Denied>

  /** A policy file exists but cannot be used: every file-touching tool is refused until it is fixed. */
  export const PolicyInvalid = NamedError.create(
    "SecurityPolicyInvalid",
    z.object({ problems: z.array(z.object({ file: z.string(), pointer: z.string(), message: z.string() })) }),
    (d) =>
      `${PREFIX}: the security policy is invalid, so tools that may touch files are refused until it is fixed:\n` +
      d.problems.map((p) => `${p.file}: ${p.pointer || "(file)"}: ${p.message}`).join("\n"),
  )
  export type PolicyInvalid = InstanceType<typeof PolicyInvalid>

  /** Shell commands need the kernel sandbox and it cannot start here. */
  export const SandboxUnavailable = NamedError.create(
    "SecuritySandboxUnavailable",
    z.object({ reason: z.string(), install: z.string() }),
    (d) =>
      `${PREFIX}: shell commands in this project run only inside the kernel sandbox, and ${d.reason}. ${d.install}. ` +
      'To run them without it (weaker: commands are then only checked statically), set "sandbox": { "mode": "optional" } in the root .opencode-security.json.',
  )
  export type SandboxUnavailable = InstanceType<typeof SandboxUnavailable>

  /**
   * A grep or glob the layer answers itself (its scope reaches protected files) could not run ripgrep: answering
   * "No files found" then would be a false answer, so the call fails saying why.
   */
  export const SearchFailed = NamedError.create(
    "SecuritySearchFailed",
    z.object({ reason: z.string() }),
    (d) =>
      `${PREFIX}: this search reaches protected files, so the security layer runs it itself with ripgrep, and ${d.reason}. Retry the call; if it fails again, install ripgrep (rg) on PATH.`,
  )
  export type SearchFailed = InstanceType<typeof SearchFailed>

  /**
   * A file tool that waited for running sandboxed shell commands longer than it may: nothing is protected here, the
   * call may simply be made again when the command has ended.
   */
  export const Busy = NamedError.create(
    "SecurityBusy",
    z.object({ seconds: z.number() }),
    (d) =>
      `${PREFIX}: a shell command is still running after ${d.seconds} s. File tools wait until shell commands end, so that no command can swap a link or folder between the check of a path and its use. Retry when it has ended.`,
  )
  export type Busy = InstanceType<typeof Busy>

  export const ToolRunning = NamedError.create(
    "SecurityToolRunning",
    z.object({ seconds: z.number() }),
    (d) =>
      `${PREFIX}: a built-in tool that reads or writes checked paths (AST search or rewrite, LSP) is still running after ${d.seconds} s. Shell commands wait until it ends, so that no command can swap a link or folder between its check of a path and its use. Retry when it has ended.`,
  )
  export type ToolRunning = InstanceType<typeof ToolRunning>

  export const ShellRunning = NamedError.create(
    "SecurityShellRunning",
    z.object({ seconds: z.number() }),
    (d) =>
      `${PREFIX}: another shell command is still running after ${d.seconds} s. Under a policy shell commands run one at a time, so that no command can hand another a file descriptor that outlives its sandbox's protections. Retry when it has ended.`,
  )
  export type ShellRunning = InstanceType<typeof ShellRunning>

  /**
   * The folder OpenCode runs the project in cannot be used (its path is not UTF-8 text, so Bun reads another folder or
   * none; it does not exist): the project's policy cannot be read there, so every tool call is refused rather than run
   * as if there were no policy, and nothing of the built-ins starts.
   */
  export const FolderUnusable = NamedError.create(
    "SecurityFolderUnusable",
    z.object({ directory: z.string(), reason: z.string() }),
    (d) =>
      `${PREFIX}: the project folder cannot be used, so its policy cannot be read and every tool call is refused. ${d.reason}. Tell the user; do not try to reach the project's files another way.`,
  )
  export type FolderUnusable = InstanceType<typeof FolderUnusable>

  /** Any of the above. */
  export function is(
    error: unknown,
  ): error is Denied | PolicyInvalid | SandboxUnavailable | Busy | ToolRunning | ShellRunning | FolderUnusable {
    return (
      Denied.is(error) ||
      FolderUnusable.is(error) ||
      PolicyInvalid.is(error) ||
      SandboxUnavailable.is(error) ||
      Busy.is(error) ||
      ToolRunning.is(error) ||
      ShellRunning.is(error)
    )
  }
}
