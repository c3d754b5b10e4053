// `npm run demo`: stock OpenCode (the pinned npm binary) works on examples/resources with the project's plugin and a
// scripted model — no API key, nothing leaves 127.0.0.1. The transcript shows the agent querying resources, loading
// one with its references, releasing them, and the request sizes the model was sent before and after.
import path from "path"
import { Harness } from "../test/e2e/harness"
import { ModelServer } from "../test/e2e/model-server"

const example = path.join(import.meta.dir, "../examples/resources")
const prompt = "Prepare the 2.4.0 release following the project's own checklists."
const scenario = [
  ModelServer.call("resource-query", { query: "release" }),
  ModelServer.call("resource-load", { id: "ship-release", includeReferences: true }),
  ModelServer.call("resource-list-loaded", {}),
  ModelServer.call("resource-release", {}),
  ModelServer.text("Release prepared: checks done, notes drafted from the template, tag v2.4.0 ready to deploy."),
]

const server = ModelServer.start(scenario)
const project = await Harness.project({ files: await Harness.filesOf(example) })
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`

try {
  console.log(`OpenCode Built-ins — resource loader demo on stock opencode ${await Harness.version()}`)
  console.log(`(scripted model on ${server.url}; project copied from examples/resources to ${project.dir})\n`)
  console.log(`user › ${prompt}\n`)
  const result = await Harness.run(project, server, prompt)
  if (result.exitCode !== 0) {
    console.error(`opencode exited with ${result.exitCode}:\n${result.stderr}`)
    process.exitCode = 1
  }
  for (const tool of result.tools) {
    console.log(`agent › ${tool.tool} ${JSON.stringify(tool.input)}`)
    console.log(`        ${summarize(tool.tool, tool.output)}\n`)
  }
  if (result.text) console.log(`agent › ${result.text.trim()}\n`)

  const turns = server.turns()
  console.log("What the model was sent (request bodies recorded by the scripted server):")
  const labels = [
    "before anything",
    "after resource-query",
    "after resource-load",
    "after resource-list-loaded",
    "after resource-release",
  ]
  turns.forEach((turn, i) => {
    const size = turn.raw.length
    const delta = i ? size - turns[i - 1].raw.length : 0
    const change = i ? `  (${delta >= 0 ? "+" : "-"}${kb(Math.abs(delta))})` : ""
    console.log(`  request ${i + 1}  ${(labels[i] ?? "").padEnd(27)} ${kb(size).padStart(8)}${change}`)
  })
  const runbook = "Route five percent of traffic to the new version"
  const present = turns.map((t) => t.raw.includes(runbook))
  console.log(
    `\nThe runbook's text is in requests ${present.flatMap((p, i) => (p ? [i + 1] : [])).join(", ")} and absent from ` +
      `${present.flatMap((p, i) => (p ? [] : [i + 1])).join(", ")}: after resource-release each loaded resource is ` +
      "replaced by a one-line stub that says how to load it again, on every later request.",
  )
  if (present.at(-1)) process.exitCode = 1
} finally {
  server.stop()
  await project.cleanup()
}

function summarize(tool: string, output: string): string {
  try {
    if (tool === "resource-query") {
      const r = JSON.parse(output)
      return `→ ${r.total} found: ${r.results.map((x: any) => `${x.id} (${x.type})`).join(", ")}`
    }
    if (tool === "resource-list-loaded") {
      const r = JSON.parse(output)
      return `→ ${r.loaded.map((x: any) => `${x.id}: ${x.status}`).join(", ")} — ${r.totalSize} in context`
    }
    if (tool === "resource-release") {
      const r = JSON.parse(output)
      return `→ released ${r.released.join(", ")}`
    }
  } catch {}
  const first = output.split("\n").find((l) => l.startsWith("Loaded")) ?? output.split("\n")[0]
  return `→ ${first.slice(0, 160)}`
}
