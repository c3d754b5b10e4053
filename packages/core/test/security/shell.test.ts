import { describe, expect, test } from "bun:test"
import { SecurityShell } from "../../security/shell"

const cwd = "/repo"
const analyse = (command: string) => SecurityShell.analyze(command, { cwd, home: "/home/me", env: { TMPDIR: "/tmp" } })
const ops = async (command: string) =>
  (await analyse(command)).accesses.map((a) => `${a.op} ${a.path}${a.recursive ? " (recursive)" : ""}`)

describe("SecurityShell.analyze", () => {
  test("readers, redirects, pipelines and lists", async () => {
    expect(await ops("cat a.txt | grep x > out.txt && wc -l < in.txt")).toEqual([
      "read /repo/a.txt",
      "write /repo/out.txt",
      "read /repo/in.txt",
    ])
  })
  test("cd carries over in lists, not out of subshells", async () => {
    expect(await ops("cd src && cat a; (cd /etc && cat passwd); cat b")).toEqual([
      "read /repo/src/a",
      "read /etc/passwd",
      "read /repo/src/b",
    ])
  })
  test("variables, quoting, brace expansion, escapes", async () => {
    expect(await ops("F=x.txt; D=\"my dir\"; cat \"$D/$F\" '$F' {a,b}.md $'\\x41'")).toEqual([
      "read /repo/my dir/x.txt",
      "read /repo/$F",
      "read /repo/a.md",
      "read /repo/b.md",
      "read /repo/A",
    ])
  })
  test("cp, mv, rm -r, ln: sources, destinations and recursion", async () => {
    expect(await ops("cp -r src dst")).toEqual(["read /repo/src (recursive)", "write /repo/dst"])
    expect(await ops("mv a b")).toEqual(["read /repo/a", "write /repo/a (recursive)", "write /repo/b"])
    expect(await ops("rm -rf build")).toEqual(["write /repo/build (recursive)"])
    expect(await ops("ln -s ../t d/l")).toEqual(["read /repo/t", "write /repo/d/l"])
  })
  test("grep's pattern, sed's script and awk's program are not files", async () => {
    expect(await ops("grep -rn TODO src")).toEqual(["read /repo/src"])
    expect(await ops("sed -i 's/a/b/' f")).toEqual(["read /repo/f", "write /repo/f"])
    expect(await ops("awk '{print $1}' f")).toEqual(["read /repo/f"])
  })
  test("wrappers, nested shells, eval, interpreter literals", async () => {
    expect(await ops("sudo -u root timeout 5 cat x")).toEqual(["read /repo/x"])
    expect(await ops("bash -c 'cat y'")).toEqual(["read /repo/y"])
    expect(await ops("eval cat z")).toEqual(["read /repo/z"])
    expect(await ops("python3 -c \"open('k.txt').read()\"")).toEqual(["write /repo/k.txt"])
  })
  test("what cannot be decided comes back as a dynamic region", async () => {
    const a = await analyse('cat secrets/$X; rm -rf "$TMPDIR/x"; cd $Y && rm z')
    expect(a.dynamic).toEqual([
      { prefix: "/repo/secrets/", op: "read", command: "cat", destructive: false },
      { prefix: "", op: "write", command: "rm", destructive: true },
    ])
    expect(a.accesses.map((x) => x.path)).toEqual(["/tmp/x"])
    expect(a.notes.join(" ")).toContain("not known statically")
  })
  test("xargs gets the words its producer prints; find -exec gets the found folder", async () => {
    expect(await ops("echo a b | xargs rm")).toEqual(["write /repo/a", "write /repo/b"])
    const a = await analyse("find docs -name '*.md' -exec cat {} \\;")
    expect(a.dynamic).toEqual([{ prefix: "/repo/docs/", op: "read", command: "cat", destructive: false }])
  })
  test("syntax errors are noted, not fatal; huge commands are refused", async () => {
    const a = await analyse("cat a && (")
    expect(a.notes.join(" ")).toContain("syntax errors")
    expect((await analyse("x".repeat(SecurityShell.MAX_COMMAND + 1))).error).toContain("not analysed")
  })
  test("brace expansion bounds", () => {
    expect(SecurityShell.braces("a{1..3}")).toEqual(["a1", "a2", "a3"])
    expect(SecurityShell.braces("{a,b}{c,d}")).toEqual(["ac", "ad", "bc", "bd"])
    expect(SecurityShell.braces("{1..100000}")).toHaveLength(256)
  })
})
