import fs from "fs/promises"
import path from "path"
import { tmpdir } from "../fixture"
import { SecurityGuard } from "../../security/guard"

/** The policy most security tests run against. */
export const POLICY = {
  version: "1.0",
  roles: [
    { name: "viewer", level: 10 },
    { name: "dev", level: 50 },
    { name: "admin", level: 100 },
  ],
  rules: [
    { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: ["admin"] },
    { pattern: "**/.env*", type: "file", deniedOperations: ["read", "llm"], allowedRoles: [] },
    { pattern: "docs/private.md", type: "file", deniedOperations: ["llm"], allowedRoles: [] },
    { pattern: "config/*.key", type: "file", deniedOperations: ["read"], allowedRoles: ["dev"] },
    { pattern: "~/.ssh", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: [] },
    { pattern: "vendor", type: "directory", deniedOperations: ["write"], allowedRoles: [] },
  ],
  segments: {
    markers: [
      { start: "@secure-start", end: "@secure-end", deniedOperations: ["read", "llm"], allowedRoles: ["admin"] },
      { start: "@locked-start", end: "@locked-end", deniedOperations: ["write"], allowedRoles: [] },
    ],
  },
}

export const SECRET_FILE = [
  "API_KEY=Zx81Qp0vLk27mNb5Yt3RwE9u",
  "line two of the api key file, long enough to remember",
  "line three of the api key file, also long enough",
  "line four closes the protected content of this file",
].join("\n")

export const APP = [
  "export function visible() {",
  "  return 1",
  "}",
  "// @secure-start",
  'const pricing = "the confidential pricing algorithm"',
  "// @secure-end",
  "# @locked-start",
  "LOCKED_VALUE = 42",
  "# @locked-end",
  "export const tail = true",
  "",
].join("\n")

/** A real temporary project with the policy above, protected files and ordinary ones. */
export async function project(extra: Record<string, string> = {}, policy: unknown = POLICY) {
  const dir = await tmpdir({
    ".opencode-security.json": JSON.stringify(policy, null, 2),
    "secrets/api.key": SECRET_FILE,
    "secrets/nested/deep.txt":
      "deep secret content that is long enough\nsecond deep line that is long enough\nthird deep line\n",
    ".env": "DATABASE_PASSWORD=Hq83kfP2mZ0xQ7vB\n",
    "app/.env.production": "TOKEN=prodtoken99887766aabbccdd\n",
    "docs/private.md":
      "# Private\nthe private roadmap sentence number one is here\nthe private roadmap sentence number two is here\nthe private roadmap sentence number three is here\n",
    "docs/public.md": "# Public\nAnyone may read this.\n",
    "config/server.key": "server key material\n",
    "vendor/lib.js": "module.exports = 1\n",
    "src/app.ts": APP,
    "src/util.ts": "export const x = 1\n",
    "README.md": "# Project\n",
    "home/.ssh/id_rsa":
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
    ...extra,
  })
  await fs.mkdir(path.join(dir.path, ".git"), { recursive: true })
  return dir
}

export async function guardFor(
  dir: string,
  env: Record<string, string> = {},
  extra: Partial<SecurityGuard.Options> = {},
) {
  const guard = await SecurityGuard.create({
    directory: dir,
    worktree: dir,
    home: path.join(dir, "home"),
    env,
    intervalMs: 0,
    ...extra,
  })
  await guard.ready()
  return guard
}

/**
 * Runs `command` in bubblewrap as a helper is started: `args` (bubblewrap's own options) read from descriptor 3 when
 * given, and `filter` (a seccomp program) on descriptor 4; the exit code and what it printed.
 *
 * @example
 * const { code, out } = await inBubblewrap("bwrap", ["python3", "-c", "print(1)"], { args: ["--ro-bind", "/", "/"] })
 */
export async function inBubblewrap(
  bwrap: string,
  command: string[],
  options: { args?: string[]; filter?: Uint8Array; env?: Record<string, string | undefined> } = {},
) {
  const { spawn } = await import("child_process")
  const proc = spawn(bwrap, [...(options.args ? ["--args", "3"] : []), ...command], {
    stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
    env: options.env ?? process.env,
  })
  ;(proc.stdio[3] as import("stream").Writable).end((options.args ?? []).map((a) => a + "\0").join(""))
  ;(proc.stdio[4] as import("stream").Writable).end(options.filter ? Buffer.from(options.filter) : undefined)
  let out = ""
  proc.stdout!.on("data", (c) => (out += c))
  proc.stderr!.on("data", (c) => (out += c))
  const code = await new Promise((resolve) => proc.on("exit", resolve))
  return { code, out }
}
