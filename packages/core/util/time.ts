import z from "zod"

/**
 * Times our state files store (milliseconds since the epoch). JSON holds any number, but only those within ±8.64e15
 * ms are dates: `new Date(1e20).toISOString()` throws `RangeError: Invalid Date`, and one such value in learnings.json
 * or captures.jsonl made `learnings list`, `capture list|show` end in a stack trace and the MCP tools answer
 * "Invalid Date" for every entry. Checked by the schema, such an entry is skipped with a warning like any other bad
 * one.
 *
 * @example
 * StoredTime.schema.safeParse(1e20).success // false
 * StoredTime.iso(1_700_000_000_000) // "2023-11-14T22:13:20.000Z"
 */
export namespace StoredTime {
  /** The largest distance from the epoch a `Date` can hold (ms). */
  export const MAX = 8.64e15

  export const schema = z.number().min(-MAX).max(MAX)

  /** The time as ISO text, or `invalid time <n>` when it is no date (never throws). */
  export function iso(ms: number): string {
    const date = new Date(ms)
    return Number.isNaN(date.getTime()) ? `invalid time ${ms}` : date.toISOString()
  }
}
