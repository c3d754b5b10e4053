import path from "path"
import type { SecurityConfig } from "./config"
import { SecurityFingerprint } from "./fingerprint"
import type { SecurityInventory } from "./inventory"
import { SecurityRole } from "./role"
import { LLMScanner } from "./scanner"
import type { SecuritySchema } from "./schema"
import type { SecuritySegments } from "./segments"

/**
 * The second stage of the security layer (load → compile → decide): from a loaded policy state, the role in force
 * and the inventory of protected files, everything the checks use — the effective policy (the last valid one while
 * the file is invalid), scanners for tool output and for model-bound text, the marker pairs that deny reading and
 * writing to this role, the audit log settings and the sandbox mode. A pure function of its inputs.
 *
 * @example
 * const compiled = SecurityCompile.compile(state, { role: "viewer", index, segments })
 * compiled.tool.markers // the markers whose segments tool output must not show
 */
export namespace SecurityCompile {
  export type Mode = SecuritySchema.SandboxMode

  export type Compiled = {
    config?: SecurityConfig.Loaded
    role: string
    tool: LLMScanner.Scanner
    llm: LLMScanner.Scanner
    /** Marker pairs whose segments this role may not read (tool output) or send to the model. */
    readMarkers: SecuritySegments.Pair[]
    /** Marker pairs whose segments this role may not change. */
    writeMarkers: SecuritySegments.Pair[]
    logging: SecurityConfig.Loaded["logging"]
    /**
     * How shell commands meet the kernel sandbox: `required` (the default when the policy protects anything: without a
     * sandbox they are refused), `optional` (used when it can start), `off` (never; weaker).
     */
    sandbox: Mode
    /** `.git/config` and `.git/hooks` stay writable inside the sandbox. */
    allowGitConfig: boolean
    /** Command and skill templates may gain shell commands (`` !`cmd` ``), which OpenCode runs outside the sandbox. */
    allowCommandShell: boolean
    /** Agent and mode definitions may gain permission grants, which override the user's approvals. */
    allowAgentPermissions: boolean
    /** OpenCode's own formatters and language servers stay on (they run outside the sandbox). */
    allowHostTools: boolean
  }

  /** Fingerprints of protected segments seen so far (filled as tools touch files). */
  export type Learned = { tool: SecurityFingerprint.Index; llm: SecurityFingerprint.Index }

  export function learned(): Learned {
    return { tool: SecurityFingerprint.create({ strict: true }), llm: SecurityFingerprint.create({ strict: true }) }
  }

  /**
   * Compiles a state for a role.
   *
   * @example
   * SecurityCompile.compile({ status: "none", root: "/r" }, { role: "viewer", index, segments, root: "/r" }).sandbox // "off"
   */
  export function compile(
    state: SecurityConfig.State,
    input: { role: string; index: SecurityInventory.Index; segments: Learned; root: string },
  ): Compiled {
    const config = state.status === "valid" ? state.config : state.status === "invalid" ? state.lastValid : undefined
    const role = config ? input.role : SecurityRole.IMPLICIT
    let tool = LLMScanner.create(config, { role, scope: "tool", indexes: [input.index.read, input.segments.tool] })
    let llm = LLMScanner.create(config, { role, scope: "llm", indexes: [input.index.llm, input.segments.llm] })
    if (state.status === "invalid" && !config) {
      // Nothing valid to go by: still redact well-known secrets.
      tool = { ...LLMScanner.INERT, root: input.root, secrets: true, inert: false, scope: "tool" }
      llm = { ...LLMScanner.INERT, root: input.root, secrets: true, inert: false }
    }
    const denied = (op: SecuritySchema.Operation) =>
      (config?.markers ?? [])
        .filter((m) => m.deniedOperations.has(op) && !SecurityRole.allowed(m.roles, role, m.allowedRoles))
        .map((m) => ({ start: m.start, end: m.end }))
    const readMarkers = [...denied("read"), ...denied("llm")]
    const protects = !!config && (config.hasExplicit || state.status === "invalid")
    const mode = config?.sandbox.mode ?? (protects ? "required" : "off")
    return {
      config,
      role,
      tool,
      llm,
      readMarkers: dedupe(readMarkers),
      writeMarkers: denied("write"),
      logging: config?.logging ?? {
        path: path.join(input.root, ".opencode-security-audit.log"),
        level: "normal",
        maxBytes: 10 * 1024 * 1024,
        keep: 3,
      },
      sandbox: protects || config?.sandbox.explicit ? mode : "off",
      allowGitConfig: config?.sandbox.allowGitConfig ?? false,
      allowCommandShell: config?.sandbox.allowCommandShell ?? false,
      allowAgentPermissions: config?.sandbox.allowAgentPermissions ?? false,
      allowHostTools: config?.sandbox.allowHostTools ?? false,
    }
  }

  function dedupe(pairs: SecuritySegments.Pair[]) {
    const seen = new Set<string>()
    return pairs.filter((p) => {
      const key = `${p.start}\0${p.end}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }
}
