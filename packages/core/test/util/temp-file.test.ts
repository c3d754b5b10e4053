import { expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { TempFile } from "../../util/temp-file"
import { tmpdir } from "../fixture"

// Red team X11: the AST live replace, the LSP rename and init wrote their temporary file with
// `writeFile(temp, …, { mode })`, which the umask cuts: a 0775 script became 0755, a 0664 file 0644.
test("a staged file gets exactly the mode asked for, whatever the umask; none given is a plain new file", async () => {
  await using dir = await tmpdir({ "run.sh": "echo hi\n" })
  const target = dir.file("run.sh")
  const old = process.umask(0o022)
  try {
    const temp = TempFile.beside(target, "test")
    expect(path.dirname(temp)).toBe(dir.path)
    expect(path.basename(temp)).toMatch(new RegExp(`^\\.run\\.sh\\.test-${process.pid}-[0-9a-f]{12}\\.tmp$`))
    expect(TempFile.beside(target, "test")).not.toBe(temp)
    await TempFile.write(temp, "echo 1\n", 0o100775)
    expect(fs.statSync(temp).mode & 0o7777).toBe(0o775)
    TempFile.writeSync(temp + "2", "echo 2\n", 0o664)
    expect(fs.statSync(temp + "2").mode & 0o7777).toBe(0o664)
    await TempFile.write(temp + "3", "x")
    expect(fs.statSync(temp + "3").mode & 0o777).toBe(0o644)
    expect(fs.readFileSync(temp, "utf8")).toBe("echo 1\n")
  } finally {
    process.umask(old)
  }
})
