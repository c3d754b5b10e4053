/**
 * Bun 1.3 can fail to register a child it has just started with its event loop: `epoll_ctl` answers EBADF or EEXIST
 * when a descriptor the loop watched was closed behind its back (oven-sh/bun issues 34069 and 37293, open in the Bun
 * that OpenCode ships). The start then reports that error although the program may be running. A read-only helper
 * program (a search) can be started once more; a command with effects must not be.
 *
 * @example
 * LoopError.is(new Error("EBADF: bad file descriptor, epoll_ctl")) // true
 * LoopError.is(new Error("spawn rg ENOENT")) // false
 */
export namespace LoopError {
  export function is(error: unknown): boolean {
    return error instanceof Error && /\bepoll_ctl\b/.test(error.message)
  }
}
