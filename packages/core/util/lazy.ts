/**
 * Properties computed at their first read.
 *
 * @example
 * const index = { words: [] as string[] }
 * Lazy.define(index, "words", () => expensive()) // computed when `index.words` is first read
 */
export namespace Lazy {
  /**
   * Makes `target[key]` a getter that runs `compute` once, at the first read, then leaves a plain property holding
   * its value. Assigning it before that replaces it like a plain property.
   */
  export function define<T extends object, K extends keyof T>(target: T, key: K, compute: () => T[K]) {
    const settle = (value: T[K]) =>
      Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
    Object.defineProperty(target, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        const value = compute()
        settle(value)
        return value
      },
      set: settle,
    })
  }
}
