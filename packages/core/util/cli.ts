/**
 * The contract between the `opencode-builtins` command and each feature's command module: a module exports
 * `run(argv, io)` and resolves to the process exit code. Output goes through `io` so tests can capture it.
 *
 * @example
 * export async function run(argv: string[], io: CliIO) {
 *   io.out("hello\n")
 *   return 0
 * }
 */
export type CliIO = {
  cwd: string
  env: Record<string, string | undefined>
  out(text: string): void
  err(text: string): void
}

export type CliCommand = { run(argv: string[], io: CliIO): Promise<number> }

/** An io that collects output in memory (tests, embedding). */
export function memoryIO(cwd: string, env: Record<string, string | undefined> = {}) {
  const io = {
    cwd,
    env,
    stdout: "",
    stderr: "",
    out(text: string) {
      io.stdout += text
    },
    err(text: string) {
      io.stderr += text
    },
  }
  return io
}

/** Exit codes shared by all commands. */
export const Exit = { ok: 0, findings: 1, usage: 2 } as const
