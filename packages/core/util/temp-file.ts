import crypto from "crypto"
import fs from "fs"
import fsp from "fs/promises"
import path from "path"

/**
 * Temporary files staged beside a target, then renamed (or linked) over it: the atomic write of the AST live replace
 * (`ast/write.ts`), the LSP rename (`lsp/edit.ts`) and `init` (`init/init.ts`).
 *
 * A file keeps its mode only if the temporary file gets it exactly: `writeFile(temp, data, { mode })` creates the
 * file with `mode` minus the process umask (under the usual 022 a 0664 file became 0644, a 0775 script 0755), so
 * the mode is set again with `chmod` once the file exists, which the umask does not touch.
 *
 * @example
 * const temp = TempFile.beside("/repo/run.sh", "ast-grep") // "/repo/.run.sh.ast-grep-4242-1f2e3d4c5b6a.tmp"
 * await TempFile.write(temp, "echo hi\n", 0o775) // mode 0775 whatever the umask
 */
export namespace TempFile {
  /**
   * A fresh name in the folder of `file`, hidden, naming the writer and this process.
   *
   * @example
   * TempFile.beside("/repo/a.ts", "lsp") // "/repo/.a.ts.lsp-4242-9a8b7c6d5e4f.tmp"
   */
  export function beside(file: string, tag: string): string {
    const unique = `${process.pid}-${crypto.randomBytes(6).toString("hex")}`
    return path.join(path.dirname(file), `.${path.basename(file)}.${tag}-${unique}.tmp`)
  }

  /**
   * Writes `data` to `temp` with exactly `mode` (permission and set-id bits, `mode & 0o7777`) when given, else with
   * the default mode a new file gets.
   *
   * @example
   * await TempFile.write("/repo/.a.ts.lsp-1-x.tmp", "text", 0o664)
   */
  export async function write(temp: string, data: string | Uint8Array, mode?: number): Promise<void> {
    if (mode === undefined) return fsp.writeFile(temp, data)
    await fsp.writeFile(temp, data, { mode: mode & 0o7777 })
    await fsp.chmod(temp, mode & 0o7777)
  }

  /**
   * `write`, synchronously.
   *
   * @example
   * TempFile.writeSync("/repo/.opencode.json.init-1-x.tmp", "{}\n", 0o664)
   */
  export function writeSync(temp: string, data: string | Uint8Array, mode?: number): void {
    if (mode === undefined) return fs.writeFileSync(temp, data)
    fs.writeFileSync(temp, data, { mode: mode & 0o7777 })
    fs.chmodSync(temp, mode & 0o7777)
  }
}
