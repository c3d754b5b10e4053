// `npm run apply -- <opencode-checkout> [--check]`: applies patches/ to an OpenCode checkout of the pinned version
// (see docs/fork.md). `npm run fork` does this and the rest of the build.
import path from "path"
import { parseArgs } from "util"
import { PatchApply } from "./patches/apply"

const root = path.resolve(import.meta.dir, "..")
let args: ReturnType<typeof parseArgs>
try {
  args = parseArgs({ args: process.argv.slice(2), options: { check: { type: "boolean" } }, allowPositionals: true })
} catch (error) {
  console.error(
    `${error instanceof Error ? error.message : error}\nusage: npm run apply -- <opencode-checkout> [--check]`,
  )
  process.exit(2)
}
if (args.positionals.length !== 1) {
  console.error("usage: npm run apply -- <opencode-checkout> [--check]")
  process.exit(2)
}
const checkout = path.resolve(process.env.INIT_CWD ?? process.cwd(), String(args.positionals[0]))
try {
  const report = await PatchApply.run({
    checkout,
    patches: path.join(root, "patches"),
    core: path.join(root, "packages/core"),
    check: Boolean(args.values.check),
    log: (line) => console.log(line),
  })
  const what = {
    applied: `applied ${report.patches.length} patches and vendored packages/core into ${PatchApply.VENDOR_DIR}`,
    "already-applied": `already applied (${report.patches.length} patches)${report.vendored ? `; ${PatchApply.VENDOR_DIR} refreshed` : ""}`,
    "would-apply": `--check: all ${report.patches.length} patches apply cleanly; nothing was changed`,
  }[report.status]
  console.log(what)
  if (report.status === "applied") console.log("next: npm run fork -- <the same checkout> builds it (see docs/fork.md)")
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error))
  process.exit(1)
}
