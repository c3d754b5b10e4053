import fs from "fs"
import path from "path"
import { fileURLToPath } from "url"
import { OpenCode } from "../opencode"
import { SecurityError } from "./errors"
import { SecurityHook } from "./hook"
import type { SecurityGuard } from "./guard"

/**
 * The security layer's rules for each OpenCode hook, written once for both routes: the external plugin returns these
 * functions as its hooks; the fork's glue calls the same functions from its seams. Each takes OpenCode's hook payload
 * (input, output) and changes the output in place, as OpenCode's hooks do; a refusal is thrown as a typed
 * `SecurityError`, which OpenCode reports to the model as the tool's error.
 *
 * - `tool.execute.before`: the call is judged (`guard.before`); `skill` and `task` are refused when the skill or
 *   agent they would load lives in a protected file; shell commands are prepared for the sandbox.
 * - `shell.env`: the sandbox entry for the shell about to start.
 * - `tool.execute.after`: `output`, `title` and `metadata` (and MCP `content`) redacted; nothing else of the result
 *   is touched, so structured results (attachments) keep their shape.
 * - `tool.definition`: protected skills and agents leave the `skill` and `task` descriptions; the rest is scanned.
 * - `chat.message`, `command.execute.before`: a prompt's parts redacted before they are stored, by the read tool's
 *   rules for what OpenCode read into it itself (`redactParts`); a command or skill defined in a file the policy keeps
 *   from the model sends none of its text.
 * - `experimental.chat.messages.transform`: the user messages' parts again by `redactParts` (on copies), then every
 *   message content-scanned; `experimental.chat.system.transform`, `experimental.text.complete`,
 *   `experimental.session.compacting`: model-bound text redacted.
 *
 * @example
 * const hooks = SecurityHooks.create({ guard })
 * await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c" }, { args: { filePath: ".env" } })
 * // throws SecurityError.Denied
 */
export namespace SecurityHooks {
  type Part = { type: string; text?: string; [key: string]: unknown }

  /** The hook payloads this module reads (OpenCode 1.2.15 through 1.18.x), as plain structural types. */
  export type Hooks = {
    "tool.execute.before": (
      input: { tool: string; sessionID?: string; callID?: string },
      output: { args: any },
    ) => Promise<void>
    "shell.env": (
      input: { cwd?: string; sessionID?: string; callID?: string },
      output: { env: Record<string, string> },
    ) => Promise<void>
    "tool.execute.after": (
      input: { tool: string; sessionID?: string; callID?: string; args?: any },
      output: { title?: string; output?: unknown; metadata?: unknown; [key: string]: unknown },
    ) => Promise<void>
    "tool.definition": (
      input: { toolID: string },
      output: { description: string; parameters?: unknown },
    ) => Promise<void>
    "chat.message": (input: unknown, output: { parts: Part[] | unknown[] }) => Promise<void>
    "command.execute.before": (input: unknown, output: { parts: Part[] | unknown[] }) => Promise<void>
    "experimental.chat.messages.transform": (input: unknown, output: { messages: unknown[] }) => Promise<void>
    "experimental.chat.system.transform": (input: unknown, output: { system: string[] }) => Promise<void>
    "experimental.text.complete": (input: unknown, output: { text: string }) => Promise<void>
    "experimental.session.compacting": (input: unknown, output: { context: string[]; prompt?: string }) => Promise<void>
  }

  export type Options = {
    guard: SecurityGuard.Guard
    /** Tools left to another layer (in the fork, plugin and MCP tools are wrapped natively). */
    skip?: (tool: string) => boolean
    /** Awaited before each hook (the plugin waits, at most a few seconds, for the first index of protected files). */
    ready?: () => Promise<unknown> | undefined
    /**
     * The policy's reason when the skill or agent a `skill` or `task` call names is defined in a protected file (see
     * `DiscoveryLocate.refusal`).
     */
    item?: (kind: "skill" | "agent", name: string) => Promise<string | undefined>
    /** A tool description with protected skills and agents taken out (see `DiscoveryLocate.redaction`). */
    describe?: (toolID: string, description: string) => Promise<string>
    /**
     * The `PATH` the agent's shell commands run with, when OpenCode's own was stripped of entries the agent could
     * plant programs in (`SecuritySearchPath.strip`); undefined: OpenCode's own.
     */
    shellPath?: string
    /**
     * More files OpenCode could load as the command `name` (`/name`; in OpenCode 1.18 a skill runs by its name too)
     * than the guard's definition folders hold (a skill found by its frontmatter name): a command run whose definition
     * the policy keeps from the model (`llm`) sends none of its text.
     */
    definition?: (name: string) => Promise<string[]>
  }

  /**
   * A search path spelled through `/proc` (`/proc/self/root<project>`, `/proc/<pid>/root…`, `/proc/thread-self/…`)
   * becomes the real path it names: OpenCode 1.2.15 runs ripgrep on the path as given, and the exclusions of
   * `SecurityRipgrep` (anchored to real paths) do not place such a spelling, so ripgrep read protected files there.
   * Other spellings are left as written (a link inside the project would become a path outside it, which OpenCode
   * asks the user about).
   *
   * @example
   * const args = { pattern: "x", path: "/proc/self/root/repo" }
   * SecurityHooks.realSearchPath(args) // args.path === "/repo"
   */
  export function realSearchPath(args: unknown) {
    if (!args || typeof args !== "object") return
    const a = args as Record<string, unknown>
    if (typeof a.path !== "string" || !/^\/+proc(\/|$)/.test(a.path)) return
    try {
      a.path = fs.realpathSync(a.path)
    } catch {
      // Nothing there: OpenCode's search finds nothing either, and the after hook's own search stands in.
    }
  }

  /** Tool results whose search `guard.search` already replaced (or left). */
  const searched = new WeakSet<object>()

  /** Keys of a tool result that reach the model or are stored and shown: redacted in place. */
  export const RESULT_KEYS = ["output", "title", "metadata", "content"] as const

  /**
   * The hook functions for one guard.
   *
   * @example
   * const hooks = SecurityHooks.create({ guard, skip: (tool) => tool.startsWith("mcp_") })
   */
  export function create(options: Options): Hooks {
    const { guard } = options
    const ready = async () => {
      await options.ready?.()
    }
    const skip = (tool: string) => options.skip?.(tool) === true
    return {
      async "tool.execute.before"(input, output) {
        if (skip(input.tool)) return
        await ready()
        /** A refusal of this call, written to the audit log. */
        const refuse = (reason: string) => {
          const error = new SecurityError.Denied({ reason, tool: input.tool })
          guard.audit?.logSecurityEvent({
            action: "deny",
            source: "builtin-tool",
            tool: input.tool,
            sessionID: input.sessionID,
            callID: input.callID,
            reason,
          })
          return error
        }
        if (guard.active() && options.item && (input.tool === "skill" || input.tool === "task")) {
          const args = (output.args ?? {}) as Record<string, unknown>
          const name = input.tool === "skill" ? args.name : args.subagent_type
          if (typeof name === "string") {
            const why = await options.item(input.tool === "skill" ? "skill" : "agent", name)
            if (why) throw refuse(`${input.tool} '${name}': ${why}`)
          }
        }
        const verdict = await guard.before({
          tool: input.tool,
          args: output.args,
          sessionID: input.sessionID,
          callID: input.callID,
        })
        if (!verdict.allowed) {
          // No after hook follows a refused call, which may be the first to meet a newly protected file.
          await guard.refreshTemplates()
          throw verdict.error
        }
        if (guard.active() && (input.tool === "grep" || input.tool === "glob")) realSearchPath(output.args)
        // OpenCode 1.2.15's batch runs its calls past the after hook: a search there cannot be contained.
        if (guard.active() && input.tool === "batch") {
          const calls = Array.isArray(output.args?.tool_calls) ? (output.args.tool_calls as unknown[]) : []
          for (const c of calls) {
            const inner = (c && typeof c === "object" ? c : {}) as { tool?: unknown; parameters?: unknown }
            if (inner.tool !== "grep" && inner.tool !== "glob") continue
            if (!guard.searchReaches({ tool: inner.tool, args: inner.parameters })) continue
            throw refuse(
              `${inner.tool} inside batch: its folder holds content the security policy protects, and a batch's results are not filtered; call ${inner.tool} directly`,
            )
          }
        }
      },
      async "shell.env"(input, output) {
        // No command starts while a file tool is between its check and its result (see `SecurityGuard.before`).
        await guard.settleFiles()
        // Nor while another sandboxed command runs (see `SecurityGuard.settleShells`).
        await guard.settleShells(input.callID)
        const env = guard.shellEnv(
          { callID: input.callID, sessionID: input.sessionID },
          { ...process.env, ...output.env },
        )
        Object.assign(output.env, env)
        // The command keeps the user's PATH (relative entries, the project's node_modules/.bin): it is the agent's own.
        if (options.shellPath !== undefined && output.env.PATH === undefined) output.env.PATH = options.shellPath
      },
      async "tool.execute.after"(input, output) {
        if (skip(input.tool)) return
        await ready()
        const call = { tool: input.tool, args: input.args, sessionID: input.sessionID, callID: input.callID }
        const result = output as Record<string, unknown>
        // A search that could reach protected content: OpenCode's result is replaced by the layer's contained one
        // (its count and truncation note would say whether a regex matched a hidden line; see `SecuritySearch`).
        if (
          typeof result.output === "string" &&
          (input.tool === "grep" || input.tool === "glob") &&
          !searched.has(output)
        ) {
          const own = await guard.search(call)
          // The fork runs the security rules again after other plugins: the search is not repeated for the same result.
          searched.add(output)
          if (own) {
            result.output = own.output
            if (result.metadata && typeof result.metadata === "object") Object.assign(result.metadata, own.metadata)
          }
        }
        if (typeof result.output === "string") result.output = guard.after(call, result.output)
        else {
          // No output text (OpenCode 1.2.15 hands an MCP tool's own result, `{ content }`): the call's after-call
          // checks run all the same (a policy an MCP server rewrote is put back), their notes a text item of its
          // content, which OpenCode turns into the output.
          const notes = guard.after(call, "")
          if (result.output !== undefined) guard.afterValue(call, result.output)
          if (notes && Array.isArray(result.content)) result.content.push({ type: "text", text: notes })
          else if (notes && result.output === undefined) result.output = notes
        }
        // Attachments (OpenCode 1.18's read sends an image or PDF whole, chosen by the file's first bytes): one whose
        // bytes hold protected content is withheld.
        if (Array.isArray(result.attachments) && guard.active()) {
          const redact = (text: string) => guard.scanAndRedact(text, { scope: "llm", paths: "off" }).text
          const kept = result.attachments.filter((a) => {
            const url = a && typeof a === "object" ? (a as { url?: unknown }).url : undefined
            return typeof url !== "string" || SecurityHook.redactDataUrl(url, redact) === url
          })
          if (kept.length !== (result.attachments as unknown[]).length) {
            result.attachments = kept
            const note = `[security] ${kept.length === 0 ? "the" : "an"} attachment was withheld: its bytes hold content the security policy keeps from the model.`
            if (typeof result.output === "string") result.output = result.output ? `${result.output}\n${note}` : note
          }
        }
        for (const key of RESULT_KEYS) {
          if (key === "output" || result[key] === undefined) continue
          if (typeof result[key] === "string")
            result[key] = guard.after({ ...call, callID: undefined }, result[key] as string)
          else guard.afterValue(call, result[key])
        }
        // The user's next command lines run under what the policy protects now (a file that appeared, a rule added).
        await guard.refreshTemplates()
      },
      async "tool.definition"(input, output) {
        if (!guard.active() || typeof output.description !== "string") return
        await ready()
        let description = output.description
        if (options.describe && (input.toolID === "skill" || input.toolID === "task")) {
          // A failure here must not take the tool registry down with it: the scanner still runs below.
          description = await options.describe(input.toolID, description).catch((error) => {
            guard.audit?.logSecurityEvent({
              action: "refuse",
              source: "plugin-hook",
              hook: "tool.definition",
              tool: input.toolID,
              reason: `protected skills and agents could not be located: ${error instanceof Error ? error.message : String(error)}`,
            })
            return description
          })
          // Parameter descriptions can list the names too (the task tool's subagent_type).
          await describeDeep(output.parameters, (text) => options.describe!(input.toolID, text)).catch(() => undefined)
        }
        output.description = guard.definition(input.toolID, description)
      },
      async "chat.message"(_input, output) {
        await ready()
        guard.templatesRan()
        redactParts(guard, output.parts)
      },
      async "command.execute.before"(input, output) {
        await ready()
        // A command's template lines ran just before this hook (inside the sandbox: `SecurityTemplateShell`).
        guard.templatesRan()
        const name = input && typeof input === "object" ? (input as { command?: unknown }).command : undefined
        if (guard.active() && typeof name === "string") {
          // OpenCode reads the template itself, with no tool hook: a viewer running an admin-only command or skill
          // would send its text, which the skill tool refuses them.
          const more = options.definition ? await options.definition(name).catch(() => [] as string[]) : []
          const files = [...guard.definitionFiles("command", name), ...guard.definitionFiles("skill", name), ...more]
          const file = files.find((f) => guard.hidesContent(f, ["llm"]))
          if (file !== undefined) {
            withholdAll(output.parts, file)
            guard.audit?.logSecurityEvent({
              action: "redact",
              source: "plugin-hook",
              hook: "command.execute.before",
              path: file,
              reason: `the command '${name}' is defined in a file the security policy keeps from the model`,
            })
            return
          }
        }
        // The lines holding an argument placeholder did not run: OpenCode would have run the arguments it put in
        // them as host shell code. They run now, inside the sandbox, with the arguments as OpenCode substituted them.
        if (await runHeldLines(guard, output.parts)) guard.templatesRan()
        redactParts(guard, output.parts)
      },
      async "experimental.chat.messages.transform"(_input, output) {
        await ready()
        redactPromptMessages(guard, output.messages)
        guard.redactMessages(output.messages as never)
      },
      async "experimental.chat.system.transform"(_input, output) {
        await ready()
        if (!guard.active()) return
        for (let i = 0; i < output.system.length; i++) {
          // An instruction file (AGENTS.md, CLAUDE.md) that is a protected file under another name (a link) leaves it
          // by path, as from read output: its content may be too short for the scanner to know.
          const own = guard.withoutInstructions(output.system[i])
          // OpenCode 1.18 lists skills in the system prompt: protected ones leave it like they leave tool descriptions.
          const text = options.describe ? await options.describe("system", own) : own
          output.system[i] = guard.scanAndRedact(text, { scope: "llm", paths: "token" }).text
        }
      },
      async "experimental.text.complete"(_input, output) {
        await ready()
        if (!guard.active()) return
        output.text = guard.scanAndRedact(output.text, { scope: "llm", paths: "off" }).text
      },
      async "experimental.session.compacting"(_input, output) {
        await ready()
        if (!guard.active()) return
        output.context = output.context.map(
          (t) => guard.scanAndRedact(guard.withoutInstructions(t), { scope: "llm", paths: "token" }).text,
        )
        if (output.prompt) output.prompt = guard.scanAndRedact(output.prompt, { scope: "llm", paths: "token" }).text
      },
    }
  }

  /**
   * Every `description` string inside a plain JSON schema rewritten (depth-limited). OpenCode 1.2.15 passes zod
   * schemas, whose objects are frozen class instances: only plain objects and arrays are walked, and a property that
   * cannot be written is left as it is.
   */
  async function describeDeep(schema: unknown, rewrite: (text: string) => Promise<string>, depth = 0): Promise<void> {
    if (!schema || typeof schema !== "object" || depth > 16) return
    const proto = Object.getPrototypeOf(schema)
    if (proto !== Object.prototype && proto !== null && !Array.isArray(schema)) return
    const node = schema as Record<string, unknown>
    if (typeof node.description === "string") {
      const next = await rewrite(node.description)
      if (next !== node.description)
        try {
          node.description = next
        } catch {
          // A read-only property: the tool's own description was rewritten, this one stays.
        }
    }
    for (const value of Object.values(node))
      if (value && typeof value === "object") await describeDeep(value, rewrite, depth + 1)
  }

  /**
   * The parts of a prompt redacted before OpenCode stores them (`chat.message`, `command.execute.before`) and again
   * before they are sent (the messages transform, on a copy), by the rules the read tool's after hook applies: OpenCode
   * reads an `@`-mentioned file, a `run -f` attachment, a command's or a `task` prompt's `@file` into the message
   * itself, calling no tool hook. What it read whose path the policy keeps from the model (`llm`; `read` alone leaves
   * what the user attaches to the user) goes whole, however short (the scanner only knows long or secret-looking
   * copies):
   *
   * - after its synthetic "Called the Read tool with the following input" part: the read's text parts, and the file
   *   part it attached (an image or PDF, as a data URL) or the mention's own file part;
   * - a file part whose own path (`source.path`, a `file:` URL, or a data URL's file name) is protected, however it
   *   came (an attaching client sends a base name only: see `SecurityGuard.Guard.attachedFile`);
   * - an editor's embedded resource (ACP), which OpenCode 1.18 makes a text part `[<path>]\n<text>` and 1.2.15 a text
   *   part of the text alone: placed by the path, or, with none, withheld when the part is an `llm`-protected file's
   *   whole text (`isProtectedText`; a prompt that is exactly such a file is a copy of it).
   *
   * Instruction files OpenCode appends to a read (`Instructions from: <path>`) go as from the read tool's output
   * (`withoutInstructions`: protected ones, links followed); every text part is then content-scanned. A withheld file
   * part becomes `text/plain` with a note as its data URL: OpenCode sends no `text/plain` file part to the model.
   * Returns the number of parts changed.
   */
  export function redactParts(guard: SecurityGuard.Guard, parts: unknown[]): number {
    if (!guard.active() || !Array.isArray(parts)) return 0
    let changed = 0
    let hidden: string | undefined
    // The file of the synthetic read the parts that follow hold (until the mention's own file part).
    let reading: string | undefined
    const set = (part: Part, text: string) => {
      if (part.text === text) return
      part.text = text
      changed++
    }
    for (const item of parts) {
      const part = item as Part
      if (!part || typeof part !== "object") continue
      const synthetic = part.synthetic === true
      if (part.type === "text" && typeof part.text === "string") {
        const read = synthetic ? readFileOf(part.text) : undefined
        if (read !== undefined) {
          hidden = guard.attachedFile(read, ["llm"])
          reading = read
          continue
        }
        if (synthetic && hidden !== undefined) {
          set(part, withheldNote(hidden))
          continue
        }
        if (!synthetic) {
          hidden = undefined
          reading = undefined
        }
        const embedded = embeddedOf(part.text)
        const resource = embedded ? guard.attachedFile(embedded.path, ["llm"]) : undefined
        if (embedded && resource !== undefined) {
          set(part, `${embedded.header}\n${withheldNote(resource)}`)
          continue
        }
        // The same resource from OpenCode 1.2.15, which drops the path: a part that is a protected file's whole text.
        if (guard.isProtectedText(embedded ? part.text.slice(embedded.header.length + 1) : part.text)) {
          set(part, withheldNote("a file"))
          continue
        }
        // A synthetic read's text: the lines of segments the role may not read go by number, as from the read tool
        // (its marker lines may be outside a selection, where the scanner cannot see them).
        const own = !synthetic
          ? part.text
          : reading !== undefined
            ? guard.redactRead(reading, part.text)
            : guard.withoutInstructions(part.text)
        set(part, guard.scanAndRedact(own, { scope: "llm", paths: "off" }).text)
        continue
      }
      if (part.type !== "file") continue
      const file = hidden ?? fileOfPart(guard, part)
      // The mention's own (non-synthetic) file part ends what its read brought in.
      if (!synthetic) {
        hidden = undefined
        reading = undefined
      }
      if (file === undefined) continue
      if (withhold(part, withheldNote(file))) changed++
    }
    return changed
  }

  /**
   * `redactParts` on the user messages about to be sent (stored before this policy or this layer, or by a route that
   * ran no `chat.message`): a message with something to change is replaced by a redacted copy, the stored one is left.
   */
  export function redactPromptMessages(guard: SecurityGuard.Guard, messages: unknown[]): number {
    if (!guard.active() || !Array.isArray(messages)) return 0
    let changed = 0
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i] as { info?: { role?: unknown }; parts?: unknown }
      if (!message || typeof message !== "object" || message.info?.role !== "user") continue
      if (!Array.isArray(message.parts)) continue
      // Copies of the parts (redactParts sets only their own fields; a data URL is not copied).
      const parts = message.parts.map((p) => (p && typeof p === "object" ? { ...(p as object) } : p))
      if (redactParts(guard, parts) === 0) continue
      messages[i] = { ...message, parts }
      changed++
    }
    return changed
  }

  /**
   * The parts of a command's expansion with the lines `containTemplate` held back run (`runHeldLines`): the text part
   * OpenCode made of the template, or the prompt of the subtask part it made instead. True when one changed.
   */
  async function runHeldLines(guard: SecurityGuard.Guard, parts: unknown[]): Promise<boolean> {
    if (!Array.isArray(parts)) return false
    let changed = false
    for (const item of parts) {
      const part = item as Part
      if (!part || typeof part !== "object") continue
      for (const key of ["text", "prompt"] as const) {
        const text = part[key]
        if (typeof text !== "string") continue
        const out = await guard.runHeldLines(text)
        if (out === text) continue
        part[key] = out
        changed = true
      }
    }
    return changed
  }

  /** Every part of a command whose definition is protected replaced by a note: its text, its files, its subtask. */
  function withholdAll(parts: unknown[], file: string) {
    if (!Array.isArray(parts)) return
    const note = withheldNote(file)
    for (const item of parts) {
      const part = item as Part
      if (!part || typeof part !== "object") continue
      if (typeof part.text === "string") part.text = note
      if (typeof part.prompt === "string") part.prompt = note
      if (part.type === "file") withhold(part, note)
    }
  }

  /** A file part OpenCode sends to the model no more: `text/plain` (never sent as a file) with the note as its data. */
  function withhold(part: Part, note: string): boolean {
    const url = `data:text/plain;base64,${Buffer.from(note).toString("base64")}`
    if (part.url === url && part.mime === "text/plain") return false
    part.mime = "text/plain"
    part.url = url
    return true
  }

  function withheldNote(file: string) {
    return `[REDACTED: the content of ${file}, which the security policy keeps from the model]`
  }

  /**
   * The protected file a file part names itself: by its `file:` URL or its source's path (either protected is
   * enough: OpenCode resolves a mention against the worktree, so a relative source path may name another folder's),
   * or, naming neither (a data URL), by its file name.
   */
  function fileOfPart(guard: SecurityGuard.Guard, part: Part): string | undefined {
    const source = part.source as { path?: unknown } | undefined
    const url = typeof part.url === "string" ? part.url : ""
    const named: string[] = []
    if (/^file:/i.test(url))
      try {
        named.push(fileURLToPath(url))
      } catch {
        // Not a local file URL: the other names decide.
      }
    if (source && typeof source === "object" && typeof source.path === "string") named.push(source.path)
    for (const own of named) {
      const file = guard.attachedFile(own, ["llm"])
      if (file !== undefined) return file
    }
    if (named.length) return undefined
    return typeof part.filename === "string" ? guard.attachedFile(part.filename, ["llm"]) : undefined
  }

  /**
   * An editor's embedded resource as OpenCode's ACP agent puts it in a prompt: `[<absolute path or file: URL>]` on
   * the first line, the text after it.
   */
  function embeddedOf(text: string): { header: string; path: string } | undefined {
    const m = /^\[([^\n\]]+)\]\n/.exec(text)
    if (!m) return undefined
    const named = m[1]
    if (/^file:/i.test(named))
      try {
        return { header: `[${named}]`, path: fileURLToPath(named) }
      } catch {
        return undefined
      }
    return path.isAbsolute(named) ? { header: `[${named}]`, path: named } : undefined
  }

  /** The file of OpenCode's synthetic "Called the Read tool with the following input: {…}" text, if it is one. */
  function readFileOf(text: string): string | undefined {
    if (!text.startsWith(OpenCode.READ_PREAMBLE)) return undefined
    try {
      const input = JSON.parse(text.slice(OpenCode.READ_PREAMBLE.length)) as { filePath?: unknown }
      return typeof input.filePath === "string" ? input.filePath : undefined
    } catch {
      return undefined
    }
  }
}
