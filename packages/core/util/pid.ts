/**
 * Processes of this machine by their id.
 *
 * @example
 * Pid.running(process.pid) // true
 */
export namespace Pid {
  /**
   * Whether process `pid` runs: a process of another user counts as running (it cannot be signalled, `EPERM`). A
   * reused id of a process that ended reads as running; callers that must tell use the process's start time.
   *
   * @example
   * Pid.running(1) // true
   */
  export function running(pid: number): boolean {
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM"
    }
  }
}
