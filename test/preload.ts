/**
 * Loaded by `bun test` before any test file (bunfig.toml › [test] preload): the suite's caches go to a temporary
 * folder removed when the run ends, so running the tests writes nothing into the user's `~/.cache` or `~/.local/state` (the resource
 * index, the security layer's held links and the TypeScript server's typings cache all live under `XDG_CACHE_HOME`).
 * A test that needs its own cache folder still sets one; end-to-end runs give each OpenCode its own XDG folders.
 */
import { afterAll } from "bun:test"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"

const cache = fs.mkdtempSync(path.join(os.tmpdir(), "ocb-test-cache-"))
process.env.XDG_CACHE_HOME = cache
// And the built-ins' state folder (when the local state's seal began), kept out of the user's ~/.local/state.
process.env.XDG_STATE_HOME = path.join(cache, "state")
// A hook registered here runs once, after the last test file.
afterAll(() => fs.rmSync(cache, { recursive: true, force: true }))
