// `bun run bench [name…]`: runs the benchmarks in scripts/bench/ (all, or those named). Each prints its figures
// and the ratio to a baseline measured in the same run; timing never fails anything.
import fs from "fs"
import path from "path"

const dir = path.join(import.meta.dir, "bench")
const all = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.startsWith("_"))
  .map((f) => f.slice(0, -3))
  .sort()
const wanted = process.argv.slice(2)
const unknown = wanted.filter((w) => !all.includes(w))
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; available: ${all.join(", ")}`)
  process.exit(2)
}
for (const name of wanted.length ? wanted : all) {
  console.log(`\n=== ${name} ===`)
  const proc = Bun.spawn([process.execPath, path.join(dir, `${name}.ts`)], { stdio: ["inherit", "inherit", "inherit"] })
  const code = await proc.exited
  if (code !== 0) {
    console.error(`benchmark ${name} exited with ${code}`)
    process.exitCode = 1
  }
}
