import { describe, expect, test } from "bun:test"
import fs from "fs"
import { ProjectFolder } from "../../util/folder"
import { notUtf8Project, tmpdir } from "../fixture"

describe("ProjectFolder", () => {
  test("lossy: the U+FFFD reading of a name that is not UTF-8 is found with its bytes; a real U+FFFD name is not", async () => {
    await using dir = await tmpdir()
    const project = notUtf8Project(dir.path)
    expect(ProjectFolder.lossy(`${project.path}/sub/deeper`)).toEqual({
      parent: dir.path,
      name: Buffer.from("caf\xe9", "latin1"),
    })
    fs.mkdirSync(dir.file("real\ufffd"))
    expect(ProjectFolder.lossy(dir.file("real\ufffd"))).toBeUndefined()
    expect(ProjectFolder.lossy(dir.path)).toBeUndefined()
  })

  test("mkdirInside makes the folders below an existing project folder, never the project folder or one above it", async () => {
    await using dir = await tmpdir()
    ProjectFolder.mkdirInside(dir.path, dir.file(".opencode/builtins-local/capture"))
    expect(fs.statSync(dir.file(".opencode/builtins-local/capture")).isDirectory()).toBe(true)
    expect(() => ProjectFolder.mkdirInside(dir.file("gone"), dir.file("gone/.opencode"))).toThrow(ProjectFolder.Outside)
    expect(() => ProjectFolder.mkdirInside(dir.file("a"), dir.file("b/.opencode"))).toThrow(ProjectFolder.Outside)
    expect(fs.readdirSync(dir.path)).toEqual([".opencode"])
  })
})
