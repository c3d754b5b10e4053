import { describe, expect, test } from "bun:test"
import path from "path"
import { AstCli } from "../../ast/cli-args"
import { tmpdir } from "../fixture"

const CLI = path.resolve(import.meta.dir, "../../ast/cli.ts")

describe("ast search command", () => {
  test("-h/--help gives the usage; a missing pattern names it and shows the usage", () => {
    expect(AstCli.parse(["--help"]).help).toBe(true)
    expect(AstCli.parse(["-l", "ts", "-h"]).help).toBe(true)
    expect(AstCli.parse(["-p", "-h", "-l", "ts"])).toMatchObject({ pattern: "-h", lang: "typescript" })
    expect(() => AstCli.parse(["-l", "ts"])).toThrow("-p/--pattern is required\n\nusage: ")
  })

  test("every usage error (missing --lang, a missing value, an unknown option, a bad -C) shows the usage too", () => {
    for (const [argv, message] of [
      [["-p", "x"], "-l/--lang is required"],
      [["-p", "x", "-l"], "-l needs a value"],
      [["-p", "x", "-l", "ts", "--bogus"], "unknown option --bogus; see --help"],
      [["-p", "x", "-l", "ts", "-C", "abc"], "--context must be a whole number from 0 to 50"],
      // EF-7: given but empty is said so, not "required".
      [["-p", "", "-l", "python"], "-p/--pattern is empty"],
      [["--pattern", "  ", "-l", "python"], "-p/--pattern is empty"],
      [["-p", "x", "-l", ""], "-l/--lang is empty"],
    ] as const)
      expect(() => AstCli.parse([...argv])).toThrow(`${message}\n\n${AstCli.USAGE}`)
  })

  test("the real process: --help prints the usage with exit 0, bad input exits 2", async () => {
    await using dir = await tmpdir({ "a.ts": "console.log(1)\n" })
    const exec = async (...argv: string[]) => {
      const proc = Bun.spawn([process.execPath, CLI, ...argv], { cwd: dir.path, stdout: "pipe", stderr: "pipe" })
      const [out, err, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ])
      return { out, err, code }
    }
    const help = await exec("--help")
    expect(help.code).toBe(0)
    expect(help.out).toBe(AstCli.USAGE)
    const bad = await exec("-l", "ts")
    expect(bad.code).toBe(2)
    expect(bad.err).toContain("-p/--pattern is required")
    const found = await exec("-p", "console.log($A)", "-l", "ts")
    expect(found.code).toBe(0)
    expect(found.out).toContain("a.ts")
  }, 30_000)
})
