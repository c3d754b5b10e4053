import { describe, expect, test } from "bun:test"
import { ShellCommands } from "../../../security/shell/commands"
import { ShellContext } from "../../../security/shell/context"
import { ShellPatch } from "../../../security/shell/git"

const words = (text: string) => text.split(" ").map(ShellContext.literal)
const names = (ws: ShellContext.Word[]) => ws.map((w) => w.values[0])

describe("ShellCommands.parse", () => {
  test("declared options take the next argument, =value, or the rest of a one-letter cluster", () => {
    const spec: ShellCommands.Spec = { values: ["-n", "--lines"], writes: ["-o"] }
    const p = ShellCommands.parse(words("-n 20 -rn5 --lines=3 -oout.txt a b"), spec)
    expect(names(p.operands)).toEqual(["a", "b"])
    expect(names(p.options.get("-n")!)).toEqual(["20", "5"])
    expect(names(p.options.get("--lines")!)).toEqual(["3"])
    expect(names(p.options.get("-o")!)).toEqual(["out.txt"])
  })
  test("-- ends options; undeclared --opt=value values may be files", () => {
    const p = ShellCommands.parse(words("--color=auto -- -x y"), {})
    expect(names(p.operands)).toEqual(["-x", "y"])
    expect(names(p.loose)).toEqual(["auto"])
  })
  test("long single-dash options are whole words", () => {
    const p = ShellCommands.parse(words("enc -in a -outform PEM -aes256"), { long: true, reads: ["-in"] })
    expect(names(p.operands)).toEqual(["enc", "PEM"])
    expect(names(p.options.get("-in")!)).toEqual(["a"])
  })
})

describe("ShellCommands.TABLE", () => {
  test("every entry declares something or reads custom; value options are options", () => {
    for (const [name, spec] of Object.entries(ShellCommands.TABLE)) {
      expect([name, !!(spec.custom || spec.operands)]).toEqual([name, true])
      for (const flag of [...(spec.values ?? []), ...(spec.reads ?? []), ...(spec.writes ?? [])])
        expect([name, flag.startsWith("-")]).toEqual([name, true])
    }
  })
})

describe("ShellPatch.parse", () => {
  test("the files a unified diff changes, with leading folders stripped", () => {
    const diff = [
      "diff --git a/src/a.ts b/src/a.ts",
      "--- a/src/a.ts",
      "+++ b/src/a.ts",
      "--- /dev/null",
      "+++ b/new.txt",
      "rename from old/x",
      "rename to new/x",
    ].join("\n")
    expect(ShellPatch.parse(diff, 1)).toEqual(["src/a.ts", "new.txt", "old/x", "new/x"])
    expect(ShellPatch.parse("--- x/y/z\n+++ x/y/z\n", 0)).toEqual(["x/y/z"])
  })
})
