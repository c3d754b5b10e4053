/**
 * The policy and file the segment scenarios share (red team GA, GD): `secrets/**` protected whole, and `@secure`
 * segments denied for the operations given to every role but admin.
 *
 * @example
 * Harness.project({ files: { ".opencode-security.json": JSON.stringify(segmentPolicy(["read"])), "src/config.ts": SEGMENTED_CONFIG } })
 */
export function segmentPolicy(ops: string[]) {
  return {
    version: "1.0",
    roles: [
      { name: "viewer", level: 10 },
      { name: "admin", level: 100 },
    ],
    rules: [
      { pattern: "secrets/**", type: "directory", deniedOperations: ["read", "write", "llm"], allowedRoles: ["admin"] },
    ],
    segments: {
      markers: [{ start: "@secure-start", end: "@secure-end", deniedOperations: ops, allowedRoles: ["admin"] }],
    },
  }
}

/** A source file with a two-line segment: a short line (`pin=Q7x9W`) and a long one ("… cost plus nine"). */
export const SEGMENTED_CONFIG =
  'export const a = 1\n// @secure-start\npin=Q7x9W\nconst pricing = "the confidential pricing algorithm is cost plus nine"\n// @secure-end\nexport const b = 2\n'
