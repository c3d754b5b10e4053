import { LLMScanner } from "./scanner"
import { SecurityRedact } from "./redact"

export { SecurityAccess } from "./access"
export { SecurityAudit } from "./audit"
export { SecurityCompile } from "./compile"
export { SecurityConfig } from "./config"
export { SecurityDecide } from "./decide"
export { SecurityEdit } from "./edit"
export { SecurityEncoding } from "./encoding"
export { SecurityError } from "./errors"
export { SecurityFingerprint } from "./fingerprint"
export { SecurityGuard } from "./guard"
export { SecurityHook } from "./hook"
export { SecurityHooks } from "./hooks"
export { SecurityInventory } from "./inventory"
export { SecurityMatch } from "./match"
export { SecurityMcp } from "./mcp"
export { SecurityOutput } from "./output"
export { SecurityPatch } from "./patch"
export { SecurityPath } from "./paths"
export { SecurityPluginTool } from "./plugin-tool"
export { SecurityRole } from "./role"
export { SecuritySchema } from "./schema"
export { SecuritySecrets } from "./secrets"
export { SecuritySegments } from "./segments"
export { SecurityShell } from "./shell"
export { SecurityTools } from "./tools"
export { SecurityTree } from "./tree"
export { Sandbox } from "./sandbox"
export { SandboxDetect } from "./sandbox/detect"
export { SandboxPlan } from "./sandbox/plan"
export { LLMScanner, SecurityRedact }

/**
 * `scanAndRedact`: scan a text with a compiled scanner and redact what it finds, keeping the line count. A guard
 * offers the same with its current policy (`guard.scanAndRedact(text)`).
 *
 * @example
 * const scanner = LLMScanner.create(config, { role: "viewer", scope: "llm" })
 * scanAndRedact("password: hunter2 …", scanner).text
 */
export function scanAndRedact(
  text: string,
  scanner: LLMScanner.Scanner,
  options: LLMScanner.ScanOptions & { gutter?: boolean } = {},
): { text: string; ranges: LLMScanner.Range[] } {
  const ranges = LLMScanner.scanForProtectedContent(text, scanner, options)
  if (!ranges.length) return { text, ranges }
  return { text: SecurityRedact.redactContent(text, ranges, { gutter: options.gutter ?? true }), ranges }
}
