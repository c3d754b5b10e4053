// `opencode builtins audit <npm-name | directory> [--json] [--include-dependencies]`: core's static plugin audit, to
// run before installing a plugin. Its own command because `opencode plugin <module>` installs a plugin (`opencode
// plugin audit` would install a package named "audit"). Kept in the OpenCode Built-ins repository as
// patches/glue/src/builtins/cli.ts, from which builtins-add-audit-command.patch is generated.
import type { Argv } from "yargs"
import { run as audit } from "@opencode-builtins/core/audit/cli"
import { cmd } from "@/cli/cmd/cmd"

const AuditCommand = cmd({
  command: "audit <target>",
  describe: "statically audit a plugin (npm package or directory) for code injection and dangerous APIs",
  builder: (yargs: Argv) =>
    yargs
      .positional("target", { type: "string", demandOption: true, describe: "npm package name or plugin directory" })
      .option("json", { type: "boolean", describe: "print the report as JSON" })
      .option("include-dependencies", { type: "boolean", describe: "also scan node_modules inside the directory" }),
  async handler(args) {
    const argv = [String(args.target), ...(args.json ? ["--json"] : [])]
    if (args.includeDependencies) argv.push("--include-dependencies")
    process.exitCode = await audit(argv, {
      cwd: process.cwd(),
      env: process.env,
      out: (text) => void process.stdout.write(text),
      err: (text) => void process.stderr.write(text),
    })
  },
})

export const BuiltinsCommand = cmd({
  command: "builtins",
  describe: "the features built into this OpenCode (OpenCode Built-ins)",
  builder: (yargs: Argv) => yargs.command(AuditCommand).demandCommand(),
  async handler() {},
})
