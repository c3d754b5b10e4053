import fs from "fs/promises"
import z from "zod"
import { NamedError, errorMessage } from "../util/error"
import { TempFile } from "../util/temp-file"
import { TextFile } from "../util/text-file"

/**
 * All-or-nothing writes of several files, so a live replace never leaves the project half rewritten.
 *
 * 1. Each file must still hold exactly the content the change was computed from (else `Conflict`, nothing written).
 * 2. Every new content goes to a temporary file beside its target, with exactly the target's mode, whatever the
 *    umask (`TempFile`; a failure removes the temporaries; nothing written).
 * 3. Each temporary file is renamed over its target — atomic per file. If a rename fails, the files already
 *    replaced get their previous content back and the error is raised.
 *
 * @example
 * await AtomicWrite.all([{ file: "/repo/a.ts", before: "foo()", after: "bar()" }])
 */
export namespace AtomicWrite {
  export type Change = { file: string; before: string; after: string }

  export const Conflict = NamedError.create(
    "FileChangedDuringReplace",
    z.object({ file: z.string() }),
    (d) => `${d.file} changed since it was read; nothing was written. Run the replace again.`,
  )

  export const Failed = NamedError.create(
    "WriteFailed",
    z.object({ file: z.string(), reason: z.string(), restored: z.array(z.string()) }),
    (d) =>
      `could not write ${d.file}: ${d.reason}. No file was left changed` +
      (d.restored.length ? ` (restored ${d.restored.length} already written)` : "") +
      ".",
  )

  /**
   * Writes every change or none (see the namespace comment); throws `Conflict` or `Failed`.
   *
   * @example
   * await AtomicWrite.all([{ file: "/repo/a.ts", before: "a()", after: "b()" }])
   */
  export async function all(changes: Change[]): Promise<void> {
    for (const change of changes) {
      const current = await TextFile.read(change.file).catch(() => undefined)
      if (current !== change.before) throw new Conflict({ file: change.file })
    }
    const temps: { change: Change; temp: string }[] = []
    try {
      for (const change of changes) {
        const stat = await fs.stat(change.file)
        const temp = TempFile.beside(change.file, "ast-grep")
        temps.push({ change, temp })
        await TempFile.write(temp, change.after, stat.mode)
      }
    } catch (error) {
      await Promise.all(temps.map((t) => fs.rm(t.temp, { force: true })))
      const failed = temps[temps.length - 1]?.change.file ?? changes[0]?.file ?? "?"
      throw new Failed({ file: failed, reason: errorMessage(error), restored: [] })
    }
    const done: Change[] = []
    for (const { change, temp } of temps) {
      try {
        await fs.rename(temp, change.file)
        done.push(change)
      } catch (error) {
        await Promise.all(temps.map((t) => fs.rm(t.temp, { force: true })))
        const restored: string[] = []
        for (const previous of done) {
          await fs.writeFile(previous.file, previous.before).then(
            () => restored.push(previous.file),
            () => {},
          )
        }
        throw new Failed({ file: change.file, reason: errorMessage(error), restored })
      }
    }
  }
}
