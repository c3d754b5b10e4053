// `npm run glue`: regenerates the glue patches from the repository's glue files (patches/glue/**), keeping each
// patch's header. The validator (npm test) fails while a glue patch and its file disagree.
import fs from "fs"
import path from "path"
import { Series } from "./series"

const dir = path.resolve(import.meta.dir, "../../patches")
const report = Series.validate(dir)
let failed = false
for (const rel of Series.glueFiles(dir)) {
  const target = `${Series.GLUE_TARGET}/${rel}`
  const patch = report.patches.find((p) => p.files.some((f) => f.path === target && f.kind === "add"))
  if (!patch) {
    console.error(
      `${Series.GLUE}/${rel}: no patch in series adds ${target}; create one with a What/Why/Upstream header`,
    )
    failed = true
    continue
  }
  const text = fs.readFileSync(patch.file, "utf8")
  const next = Series.regenerate(text, rel, fs.readFileSync(path.join(dir, Series.GLUE, rel), "utf8"))
  if (next === text) continue
  fs.writeFileSync(patch.file, next)
  console.log(`regenerated ${patch.name} from ${Series.GLUE}/${rel}`)
}
process.exit(failed ? 1 : 0)
