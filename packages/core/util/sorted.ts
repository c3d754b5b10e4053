/**
 * The last index of `sorted` (ascending) whose value is at most `value`; 0 when none is (callers pass arrays that
 * start at the lowest possible value: line or resource starts at 0, interval bounds at 0).
 *
 * @example
 * lastAtMost([0, 10, 20], 15) // 1
 */
export function lastAtMost(sorted: ArrayLike<number>, value: number): number {
  let lo = 0
  let hi = sorted.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (sorted[mid] <= value) lo = mid
    else hi = mid - 1
  }
  return lo
}
