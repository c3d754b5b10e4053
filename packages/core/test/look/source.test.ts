import { spawnSync } from "child_process"
import { describe, expect, spyOn, test } from "bun:test"
import fs from "fs"
import { LookMime } from "../../look/mime"
import { LookSource } from "../../look/source"
import { tmpdir } from "../fixture"
import { BMP, GIF, JPEG, PDF, PNG, SVG, WEBP } from "./fixtures"

const LIMITS = { maxBytes: 64 * 1024, maxSvgBytes: 2048 }

describe("look_at sources: type from the bytes, size before decoding", () => {
  test("magic bytes tell every supported type, whatever the name", () => {
    expect(LookMime.sniff(PNG)?.mime).toBe("image/png")
    expect(LookMime.sniff(JPEG)?.mime).toBe("image/jpeg")
    expect(LookMime.sniff(GIF)?.mime).toBe("image/gif")
    expect(LookMime.sniff(WEBP)?.mime).toBe("image/webp")
    expect(LookMime.sniff(PDF)).toEqual({ mime: "application/pdf", kind: "pdf" })
    expect(LookMime.sniff(Buffer.concat([Buffer.from("junk before the header\n"), PDF]))?.kind).toBe("pdf")
    expect(LookMime.sniff(SVG)).toEqual({ mime: "image/svg+xml", kind: "svg" })
    expect(LookMime.sniff(Buffer.from("\uFEFF  <svg viewBox='0 0 1 1'/>"))?.kind).toBe("svg")
    expect(LookMime.sniff(Buffer.from("<html><svg></svg></html>"))).toBeUndefined()
    expect(LookMime.sniff(Buffer.from("RIFF\0\0\0\0WAVEfmt "))).toBeUndefined()
    expect(LookMime.sniff(BMP)).toBeUndefined()
    expect(LookMime.describe(BMP)).toBe("a BMP image")
  })

  test("a file: relative to the project, type by content (a PNG named .jpg, text named .png)", async () => {
    await using dir = await tmpdir({ "shots/a.jpg": PNG, "fake.png": "not an image\n", "doc.pdf": PDF, "d.svg": SVG })
    const png = LookSource.file(dir.file("shots/a.jpg"), dir.path, LIMITS)
    expect(png.label).toBe("shots/a.jpg")
    expect(png.type.mime).toBe("image/png")
    expect(Buffer.from(png.bytes()).equals(PNG)).toBe(true)
    expect(() => LookSource.file(dir.file("fake.png"), dir.path, LIMITS)).toThrow(
      "look_at: fake.png is text, not a supported type (PNG, JPEG, GIF, WebP, SVG, PDF; told by its content, not its name)",
    )
    expect(() => LookSource.file(dir.file("missing.png"), dir.path, LIMITS)).toThrow("missing.png does not exist")
    expect(() => LookSource.file(dir.file("shots"), dir.path, LIMITS)).toThrow("shots is not a file")
    expect(LookSource.file(dir.file("doc.pdf"), dir.path, LIMITS).type.kind).toBe("pdf")
  })

  test("oversize files are refused with the limit named, before their content is read", async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(70 * 1024)])
    await using dir = await tmpdir({ "big.png": big, "big.svg": Buffer.concat([SVG, Buffer.alloc(4096, 32)]) })
    const read = spyOn(fs, "readFileSync")
    const readSync = spyOn(fs, "readSync")
    try {
      expect(() => LookSource.file(dir.file("big.png"), dir.path, LIMITS)).toThrow(
        "look_at: big.png is 70.1 KB, over the limit of 64 KB (lookAt.maxBytes)",
      )
      expect(readSync).not.toHaveBeenCalled()
      expect(() => LookSource.file(dir.file("big.svg"), dir.path, LIMITS)).toThrow(
        "over the SVG limit of 2 KB (SVG is sent as text)",
      )
      expect(read).not.toHaveBeenCalled()
    } finally {
      read.mockRestore()
      readSync.mockRestore()
    }
  })

  test("what is sent is the file opened at the check: a path swapped for a link afterwards changes nothing", async () => {
    const secret = Buffer.concat([PNG, Buffer.from("API_KEY=sk-not-for-the-model")])
    await using dir = await tmpdir({ "shot.png": PNG, "secret.png": secret, "grown.png": PNG })
    const source = LookSource.file(dir.file("shot.png"), dir.path, LIMITS)
    // A command running after the check puts a link to another file where the checked one was.
    fs.rmSync(dir.file("shot.png"))
    fs.symlinkSync(dir.file("secret.png"), dir.file("shot.png"))
    try {
      expect(Buffer.from(source.bytes()).equals(PNG)).toBe(true)
    } finally {
      source.close?.()
    }
    // A file that grew past the limit after it was measured is refused when read, not sent cut or whole.
    const grown = LookSource.file(dir.file("grown.png"), dir.path, LIMITS)
    fs.appendFileSync(dir.file("grown.png"), Buffer.alloc(70 * 1024))
    try {
      expect(() => grown.bytes()).toThrow("over the limit of 64 KB (lookAt.maxBytes)")
    } finally {
      grown.close?.()
    }
  })

  test("a FIFO is refused as not a file without waiting for a writer", async () => {
    await using dir = await tmpdir({})
    const fifo = dir.file("pipe.png")
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0)
    expect(() => LookSource.file(fifo, dir.path, LIMITS)).toThrow("look_at: pipe.png is not a file")
  })

  test("image_data: raw base64 (whitespace, URL-safe), data URLs (declared type ignored), percent-encoded SVG", () => {
    const b64 = PNG.toString("base64")
    expect(LookSource.data(b64, LIMITS).type.mime).toBe("image/png")
    expect(LookSource.data(b64.replace(/(.{20})/g, "$1\n"), LIMITS).size).toBe(PNG.length)
    expect(LookSource.data(b64.replace(/\+/g, "-").replace(/\//g, "_"), LIMITS).type.mime).toBe("image/png")
    expect(LookSource.data(`data:image/jpeg;base64,${b64}`, LIMITS).type.mime).toBe("image/png")
    expect(LookSource.data(`data:application/pdf;base64,${PDF.toString("base64")}`, LIMITS).type.kind).toBe("pdf")
    const svg = LookSource.data(`data:image/svg+xml,${encodeURIComponent(SVG.toString())}`, LIMITS)
    expect(svg.type.kind).toBe("svg")
    expect(new TextDecoder().decode(svg.bytes())).toContain("API gateway")
    expect(svg.label).toBe("image_data")
    expect(() => LookSource.data("not base64 at all!", LIMITS)).toThrow("neither base64 nor a data URL")
    expect(() => LookSource.data("data:image/png;base64", LIMITS)).toThrow("without a comma")
    expect(() => LookSource.data(BMP.toString("base64"), LIMITS)).toThrow("image_data is a BMP image")
  })

  test("oversize image_data is refused from its length, before decoding", () => {
    const huge = "A".repeat(4 * 1024 * 1024)
    const from = spyOn(Buffer, "from")
    try {
      expect(() => LookSource.data(huge, LIMITS)).toThrow("look_at: image_data is 3 MB, over the limit of 64 KB")
      expect(from).not.toHaveBeenCalled()
    } finally {
      from.mockRestore()
    }
  })
})
