// `npm run opencode -- [args]`: the pinned stock OpenCode with this repository's plugin loaded, in the directory npm
// was started from, for real use with your own provider. The plugin is added through OPENCODE_CONFIG_CONTENT, so no
// configuration file is written.
import path from "path"
import { pathToFileURL } from "url"
import { Harness } from "../test/e2e/harness"

const cwd = process.env.INIT_CWD ?? process.cwd()
const plugin = pathToFileURL(path.join(import.meta.dir, "../packages/plugin/index.ts")).href
const inline = process.env.OPENCODE_CONFIG_CONTENT ? JSON.parse(process.env.OPENCODE_CONFIG_CONTENT) : {}
inline.plugin = [...(inline.plugin ?? []), plugin]

const proc = Bun.spawn([Harness.bin(), ...process.argv.slice(2)], {
  cwd,
  env: { ...process.env, PWD: cwd, OPENCODE_CONFIG_CONTENT: JSON.stringify(inline) },
  stdio: ["inherit", "inherit", "inherit"],
})
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => proc.kill(signal))
process.exitCode = await proc.exited
