import type { Hooks } from "@opencode-ai/plugin"
import fs from "fs"
import path from "path"
import type { Host } from "../host"
import { SecurityOutput } from "../security/output"
import type { SecuritySegments } from "../security/segments"
import { errorMessage } from "../util/error"
import { AddedLines } from "./added"
import { CommentCheck } from "./check"
import z from "zod"
import { CommentHeuristics } from "./heuristics"

/**
 * The comment checker's hooks: `tool.execute.before` remembers, for a `write`, the file's content before it is
 * overwritten; `tool.execute.after` judges what `edit`, `write`, `multiedit` or `apply_patch` added and appends the
 * advisory note to the tool's output (the model reads it; the code is never changed). A failure inside the checker
 * is logged and leaves the output untouched.
 *
 * @example
 * const hooks = CommentHooks.create({ host, sensitivity: "normal" })
 * // opencode calls hooks["tool.execute.after"]({ tool: "edit", args, … }, output)
 */
export namespace CommentHooks {
  export const TOOLS = new Set(["edit", "write", "multiedit", "apply_patch"])
  /** A file larger than this is not read before a write (the change is then judged as all new). */
  const MAX_BEFORE_BYTES = 4 * 1024 * 1024
  /** Writes whose after hook never comes (a failed call) are forgotten after this many newer ones. */
  const MAX_PENDING = 256

  export type Options = { host: Host; sensitivity: CommentHeuristics.Sensitivity }

  /** The `commentChecker` options section (both routes read it from `.opencode/opencode-builtins.json`). */
  export const Config = z.object({
    /** "strict" | "normal" (default) | "relaxed" | false (off). */
    sensitivity: CommentHeuristics.Sensitivity.optional(),
  })
  export type Config = z.infer<typeof Config>

  /**
   * The hooks for `options.sensitivity` (none act when it is false).
   *
   * @example
   * const hooks = CommentHooks.create({ host, sensitivity: "strict" })
   */
  export function create(options: Options): Hooks {
    const { host, sensitivity } = options
    const before = new Map<string, string>()
    const resolve = (file: string) => path.resolve(host.directory, file)

    return {
      async "tool.execute.before"(input, output) {
        if (sensitivity === false || input.tool !== "write") return
        const file = output.args?.filePath
        if (typeof file !== "string") return
        const full = resolve(file)
        // A file the security policy keeps from the model is judged as if it were new; a file holding segments the
        // role may not read is judged on its text as the role sees it (those lines masked): a line equal to a
        // protected one would otherwise count as "not added", and the note would confirm a guess of its content.
        const denied = (await host.access?.(full, "read")) ?? (await host.access?.(full, "llm", { quiet: true }))
        before.set(input.callID, denied ? "" : visible(full, host.segments?.().read ?? []))
        if (before.size > MAX_PENDING) before.delete(before.keys().next().value!)
      },
      async "tool.execute.after"(input, output) {
        if (sensitivity === false || !TOOLS.has(input.tool)) return
        const previous = before.get(input.callID)
        before.delete(input.callID)
        try {
          const docs = documents(input.tool, input.args ?? {}, previous, host.directory)
          const byFile = new Map<string, AddedLines.Document[]>()
          for (const doc of docs) {
            const list = byFile.get(doc.file)
            if (list) list.push(doc)
            else byFile.set(doc.file, [doc])
          }
          const verdicts = [...byFile.values()].map((list) => CommentCheck.judge(list, sensitivity))
          const note = CommentCheck.note(verdicts, host.directory)
          if (note && typeof output.output === "string") output.output = `${output.output.trimEnd()}\n\n${note}`
        } catch (error) {
          host.log.warn("comment checker failed; output left as is", { tool: input.tool, error: errorMessage(error) })
        }
      },
    }
  }

  /**
   * The added-lines documents of one tool call (exported for tests and the fork's direct call).
   *
   * @example
   * CommentHooks.documents("edit", { filePath: "a.ts", oldString: "", newString: "// x" }, undefined, "/r")
   */
  export function documents(
    tool: string,
    args: Record<string, any>,
    previous: string | undefined,
    directory: string,
  ): AddedLines.Document[] {
    const file = typeof args.filePath === "string" ? path.resolve(directory, args.filePath) : undefined
    switch (tool) {
      case "edit":
        if (!file || typeof args.newString !== "string") return []
        return AddedLines.fromEdit(file, typeof args.oldString === "string" ? args.oldString : "", args.newString)
      case "multiedit":
        if (!file || !Array.isArray(args.edits)) return []
        return AddedLines.fromMultiEdit(file, args.edits).map((d) => ({ ...d, file: path.resolve(directory, d.file) }))
      case "write":
        if (!file || typeof args.content !== "string") return []
        return AddedLines.fromWrite(file, previous ?? "", args.content)
      case "apply_patch":
        return typeof args.patchText === "string" ? AddedLines.fromPatch(args.patchText, directory) : []
    }
    return []
  }

  /**
   * The file's text before a write as the role may see it: the lines of segments it may not read (`read` or `llm`,
   * `Host.segments`) masked as the sandbox and the read tool show them (`SecurityOutput.mask`); "" (all new) when the
   * file cannot be read, is too large, or is protected whole by the security layer's rule (`SecurityOutput.byteRanges`:
   * a UTF-16 file holding a segment).
   */
  function visible(file: string, hidden: readonly SecuritySegments.Pair[]): string {
    try {
      const stat = fs.statSync(file)
      if (!stat.isFile() || stat.size > MAX_BEFORE_BYTES) return ""
      const bytes = fs.readFileSync(file)
      if (!hidden.length) return bytes.toString("utf8")
      const ranges = SecurityOutput.byteRanges(bytes, hidden, "any")
      if (ranges.some((r) => r.to === Infinity)) return ""
      return ranges.length ? SecurityOutput.mask(bytes.toString("utf8"), hidden) : bytes.toString("utf8")
    } catch {
      return ""
    }
  }
}
