/**
 * A byte count for people: "0 B", "512 B", "1.5 KB", "10.0 MB".
 *
 * @example
 * formatBytes(1536) // "1.5 KB"
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`
  const units = ["KB", "MB", "GB", "TB"]
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/**
 * "git-operations_guide" → "Git Operations Guide": the display name derived from a file name.
 *
 * @example
 * titleCase("pre-commit") // "Pre Commit"
 */
export function titleCase(stem: string): string {
  return stem
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ")
}
