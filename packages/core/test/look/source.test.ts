import { describe, expect, spyOn, test } from "bun:test"
import fs from "fs"
import { LookMime } from "../../look/mime"
import { LookSource } from "../../look/source"
import { tmpdir } from "../fixture"
import { BMP, GIF, JPEG, PDF, PNG, SVG, WEBP } from "./fixtures"
import { spawnSync } from "../spawn-sync"

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
    // An SVG is bounded like an image before it is read (it may carry raster images, sent as images); the SVG limit
    // bounds the text sent (look/tool.test.ts › an SVG's embedded raster images …).
    await using dir = await tmpdir({ "big.png": big, "big.svg": Buffer.concat([SVG, Buffer.alloc(70 * 1024, 32)]) })
    const read = spyOn(fs, "readFileSync")
    const readSync = spyOn(fs, "readSync")
    try {
      expect(() => LookSource.file(dir.file("big.png"), dir.path, LIMITS)).toThrow(
        "look_at: big.png is 70.1 KB, over the limit of 64 KB (lookAt.maxBytes)",
      )
      expect(readSync).not.toHaveBeenCalled()
      expect(() => LookSource.file(dir.file("big.svg"), dir.path, LIMITS)).toThrow(
        "look_at: big.svg is 70.2 KB, over the limit of 64 KB (lookAt.maxBytes)",
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

/**
 * A non-SVG XML document (a Maven pom, an Android drawable) opening with many one-line comments. The old SVG prolog
 * regex backtracked exponentially on such text (2-4 s of CPU each, until JavaScriptCore's backtrack limit stopped it;
 * red team CE-2). Linear code takes microseconds: the per-test timeout is the only time limit, set far below what
 * the cases cost the old code.
 */
export function commentedXml(comments: number, root = '<project xmlns="http://maven.apache.org/POM/4.0.0">') {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    Array.from({ length: comments }, (_, k) => `<!-- Licensed line ${k} -->\n`).join("") +
    `${root}\n</project>\n`
  )
}

describe("look_at type sniffing is linear and reads past a long SVG prolog (red team CE-2, CE-7)", () => {
  test("text with many comments or processing instructions before a non-svg element is told apart at once", () => {
    for (let comments = 25; comments < 40; comments++) {
      expect(LookMime.sniff(Buffer.from(commentedXml(comments)))).toBeUndefined()
      expect(LookMime.sniff(Buffer.from(commentedXml(comments).replace(/<!--(.*)-->/g, "<?pi $1?>")))).toBeUndefined()
    }
    // The same prologs before <svg> (or a prefixed <svg:svg>) are SVG; <svgx> or another element first is not.
    expect(LookMime.sniff(Buffer.from(commentedXml(30, "<svg xmlns='http://www.w3.org/2000/svg'>")))?.kind).toBe("svg")
    expect(LookMime.sniff(Buffer.from(commentedXml(30, "<svg:svg>")))?.kind).toBe("svg")
    expect(LookMime.sniff(Buffer.from(commentedXml(30, "<svgx>")))).toBeUndefined()
    const doctype =
      '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd" [\n  <!ENTITY ns_a "http://a/">\n  <!ENTITY b "]">\n]>\n'
    expect(LookMime.sniff(Buffer.from(`<?xml version="1.0"?>\n<!-- c -->\n${doctype}<svg>`))?.kind).toBe("svg")
    expect(LookMime.sniff(Buffer.from(`<!doctype html>\n<html><svg></svg></html>`))).toBeUndefined()
    expect(LookMime.describe(Buffer.from(commentedXml(30)))).toBe("text")
  }, 5_000)

  test("a file_path to such an XML file is refused as unsupported, and a failed image_data call's note is cheap", async () => {
    const xml = commentedXml(30)
    await using dir = await tmpdir({ "res/drawable/icon.xml": xml })
    for (let i = 0; i < 5; i++)
      expect(() => LookSource.file(dir.file("res/drawable/icon.xml"), dir.path, LIMITS)).toThrow(
        "look_at: res/drawable/icon.xml is text, not a supported type",
      )
    // LookTool.forget computes this note before every request, for every failed look_at call of the session.
    for (let i = 0; i < 5; i++)
      expect(LookSource.noteOf(Buffer.from(xml).toString("base64"))).toBe(
        `[image_data, ${LookSource.kb(xml.length)}: given to look_at, not kept here]`,
      )
  }, 5_000)

  test("an SVG whose leading license comment is over 4 KB is still an SVG (file and image_data), bounded by the SVG limit", async () => {
    const license = "Licensed under the Apache License, Version 2.0; you may not use this file except in compliance.\n"
    const svg = `<!--\n${license.repeat(45)}-->\n<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>\n`
    expect(svg.length).toBeGreaterThan(LookMime.HEAD_BYTES)
    const limits = { maxBytes: 1 << 20, maxSvgBytes: 16 * 1024 }
    await using dir = await tmpdir({
      "icons/logo.svg": svg,
      "notes.txt": `<!--\n${license.repeat(45)}-->\nplain text after a comment\n`,
      // A prolog longer than the SVG limit: whatever follows, it is no SVG look_at would take; refused as text.
      "long.svg": `<!--\n${license.repeat(400)}-->\n<svg/>\n`,
    })
    const source = LookSource.file(dir.file("icons/logo.svg"), dir.path, limits)
    try {
      expect(source.type.mime).toBe("image/svg+xml")
      expect(new TextDecoder().decode(source.bytes())).toBe(svg)
    } finally {
      source.close?.()
    }
    expect(LookSource.data(Buffer.from(svg).toString("base64"), limits).type.kind).toBe("svg")
    expect(() => LookSource.file(dir.file("notes.txt"), dir.path, limits)).toThrow("notes.txt is text, not a supported")
    expect(() => LookSource.file(dir.file("long.svg"), dir.path, limits)).toThrow("long.svg is text, not a supported")
    // An unfinished prolog is undecided; a finished one followed by anything else is not.
    expect(LookMime.undecided(Buffer.from("<?xml version='1.0'?>\n<!-- a long licen"))).toBe(true)
    expect(LookMime.undecided(Buffer.from("<!-- c -->\n<!DOCTY"))).toBe(true)
    expect(LookMime.undecided(Buffer.from("<!-- c -->\n<project>"))).toBe(false)
  })
})
