import { describe, expect, test } from "bun:test"
import zlib from "zlib"
import type { Host, HostChildCall } from "../../host"
import { LookEmbedded } from "../../look/embedded"
import { LookModels } from "../../look/models"
import { LookTool } from "../../look/tool"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

// A design tool's SVG export (tester RX's RX3: 0xPlaygrounds/rig's 209 KB README banner holds 4 PNGs as
// `<image xlink:href="data:image/png;base64,…">`): look_at sent it as 193 KB of base64 text the model could not see.

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(bytes: Buffer) {
  let c = 0xffffffff
  for (const b of bytes) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
function chunk(type: string, data: Buffer) {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data])
  const out = Buffer.alloc(body.length + 8)
  out.writeUInt32BE(data.length, 0)
  body.copy(out, 4)
  out.writeUInt32BE(crc32(body), body.length + 4)
  return out
}
/** A real RGB PNG of `size`×`size` pixels of noise from `seed` (incompressible: about 3·size² bytes), with `text`
 * in a tEXt chunk when given. */
function png(size: number, seed: number, text?: string) {
  let x = seed
  const rows: Buffer[] = []
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 3)
    for (let i = 1; i < row.length; i++) row[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24
    rows.push(row)
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    ...(text ? [chunk("tEXt", Buffer.from(`Comment\0${text}`, "latin1"))] : []),
    chunk("IDAT", zlib.deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ])
}

/** An SVG the way design tools export it: each image a base64 data URI, the first broken in lines of 76 by `&#10;`. */
function svg(images: Buffer[], extra = "") {
  const uses = images.map((bytes, i) => {
    const b64 = bytes.toString("base64")
    const payload = i === 0 ? b64.replace(/.{76}/g, "$&&#10;") : b64
    const attr = i % 2 ? "href" : "xlink:href"
    return `  <image x="0" y="${i * 10}" width="800" height="10" ${attr}="data:image/png;base64,${payload}"/>`
  })
  return (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 800 200">\n' +
    '  <text x="10" y="20">Rig by Playgrounds</text>\n' +
    uses.join("\n") +
    `\n${extra}</svg>\n`
  )
}

const VISION = { providerID: "p", id: "eye", capabilities: { input: { text: true, image: true, pdf: false } } }
const TEXT_ONLY = { providerID: "p", id: "words", capabilities: { input: { text: true, image: false, pdf: false } } }

function setup(dir: string, config: LookTool.Config = {}, extra: Partial<Host> = {}) {
  const calls: HostChildCall[] = []
  const host: Host = {
    directory: dir,
    worktree: dir,
    log: Logger.silent,
    child: async (call) => (calls.push(call), "A banner: the word Rig beside a logo."),
    ...extra,
  }
  const models = LookModels.create(host)
  const tool = LookTool.create({ host, config, models }).look_at
  const ctx = { sessionID: "s", messageID: "m2", agent: "build", abort: new AbortController().signal }
  const using = (model: any) =>
    models.observe({ sessionID: "s", model, message: { model: { providerID: model.providerID, modelID: model.id } } })
  const run = (args: any) => tool.execute(args, ctx as any) as Promise<string>
  return { calls, run, using }
}

const texts = (call: HostChildCall) =>
  call.parts
    .filter((p) => p.type === "text")
    .map((p: any) => p.text)
    .join("\n")
const files = (call: HostChildCall) => call.parts.filter((p) => p.type === "file") as any[]

describe("look_at: an SVG's embedded raster images", () => {
  test(
    "go to a vision model as image parts of their own, each replaced in the text by a placeholder; the SVG limit counts the text sent",
    async () => {
      const images = [png(60, 1), png(40, 2)]
      // The first repeated, as exports repeat an image used as a mask: sent once.
      const text = svg([...images, images[0]])
      expect(text.length).toBeGreaterThan(14_000)
      await using dir = await tmpdir({ "img/banner.svg": text })
      // The SVG limit (2 KB) is far below the file (14 KB) but above its text once the images are cut out.
      const { run, using, calls } = setup(dir.path, { maxSvgBytes: 2048 })
      using(VISION)
      const out = await run({ file_path: "img/banner.svg", goal: "What does the banner show?" })
      expect(out).toStartWith(`look_at img/banner.svg (image/svg+xml, `)
      expect(out).toContain(
        ", analysed by p/eye:\n[SVG: 3 of 3 embedded images sent as images (image/png), 1 of them the same as another, sent once]\n\nA banner: the word Rig",
      )
      expect(calls).toHaveLength(1)
      const [call] = calls
      const sent = texts(call)
      expect(sent).not.toContain("base64")
      expect(sent.length).toBeLessThan(2048)
      expect(sent).toContain(
        `xlink:href="[embedded image 1: image/png, ${(images[0].length / 1024).toFixed(1)} KB, sent as an image part]"/>`,
      )
      expect(sent).toContain('href="[embedded image 2: image/png, ')
      expect(sent).toContain(
        `[embedded image 3: image/png, ${(images[0].length / 1024).toFixed(1)} KB, the same as embedded image 1]`,
      )
      expect(sent).toContain("Rig by Playgrounds")
      expect(call.parts.map((p) => p.type)).toEqual(["text", "text", "text", "file", "text", "file"])
      expect(call.parts[2]).toEqual({ type: "text", text: "Embedded image 1 of banner.svg:" })
      // The bytes sent are the PNGs, decoded whole (the `&#10;` breaks gone).
      expect(files(call).map((f) => [f.mime, f.filename, Buffer.from(f.url.split(",")[1], "base64")])).toEqual([
        ["image/png", "banner.svg embedded image 1.png", images[0]],
        ["image/png", "banner.svg embedded image 2.png", images[1]],
      ])
      // The text sent is what the SVG limit bounds: over it, refused before any model call, the limit named.
      await using big = await tmpdir({
        "wide.svg": svg([...images, images[0]], `  <desc>${"long description ".repeat(200)}</desc>\n`),
      })
      const over = setup(big.path, { maxSvgBytes: 2048 })
      over.using(VISION)
      await expect(over.run({ file_path: "wide.svg", goal: "x" })).rejects.toThrow(
        /^look_at: the text of wide\.svg \(its 3 embedded images cut out\) is 3\.\d KB, over the SVG limit of 2 KB \(SVG is sent as text; lookAt\.maxSvgBytes\)$/,
      )
      expect(over.calls).toHaveLength(0)
    },
    { timeout: 60_000 },
  )

  test("over the count limit, not an image, or holding a protected segment: not sent, the placeholder and the answer say why", async () => {
    const secret = "notes\n// @secure-start\nsalt=Kd93mVx71LqPz0Rw\n// @secure-end\n"
    const images = [png(8, 9, secret), ...Array.from({ length: LookEmbedded.MAX_IMAGES + 1 }, (_, i) => png(8, i))]
    const fake = `  <image href="data:image/png;base64,${Buffer.from("just some text, not a picture").toString("base64")}"/>\n`
    await using dir = await tmpdir({ "many.svg": svg(images, fake) })
    const segments = () => ({ read: [{ start: "@secure-start", end: "@secure-end" }], write: [] })
    const { run, using, calls } = setup(dir.path, {}, { segments })
    using(VISION)
    const out = await run({ file_path: "many.svg", goal: "x" })
    expect(out).toContain(
      "[SVG: 8 of 11 embedded images sent as images (image/png); " +
        "not sent, so not seen by the model: image 1 (it holds a segment the security policy protects); " +
        "not sent, so not seen by the model: image 10 (over the limit of 8 embedded images); " +
        "not sent, so not seen by the model: image 11 (its bytes are not a PNG, JPEG, GIF or WebP image)]",
    )
    const [call] = calls
    const sent = texts(call)
    expect(sent).toContain(
      "[embedded image 1: image/png, 0.3 KB, not sent: it holds a segment the security policy protects]",
    )
    expect(sent).toContain("[embedded image 10: image/png, 0.3 KB, not sent: over the limit of 8 embedded images]")
    expect(sent).toContain(
      "[embedded image 11: image/png, 0 KB, not sent: its bytes are not a PNG, JPEG, GIF or WebP image]",
    )
    expect(files(call).map((f) => f.filename)).toEqual(
      [2, 3, 4, 5, 6, 7, 8, 9].map((i) => `many.svg embedded image ${i}.png`),
    )
    // Nothing of the protected image leaves, in any form.
    const request = JSON.stringify(call.parts)
    expect(request).not.toContain(images[0].toString("base64").slice(0, 200))
    expect(request).not.toContain("Kd93mVx71LqPz0Rw")
    // A CSS url(data:…) is the same URI: cut out up to its closing parenthesis.
    const css = LookEmbedded.extract(
      `<style>.a{background:url(data:image/png;base64,${images[1].toString("base64")})}</style>`,
    )
    expect(css.pieces).toEqual(["<style>.a{background:url(", ")}</style>"])
    expect(Buffer.from(css.images[0].bytes)).toEqual(images[1])
    // Together the images sent stay within lookAt.maxBytes (the file's own bound makes it so for a file; checked
    // still for any input).
    const found = LookEmbedded.extract(svg([png(20, 1), png(20, 2), png(20, 3)]))
    const each = found.images[0].size
    expect(LookEmbedded.choose(found, 2 * each + 10)).toEqual(
      new Map([
        [
          3,
          "over the size limit of " +
            ((2 * each + 10) / 1024).toFixed(1).replace(/\.0$/, "") +
            " KB for all images (lookAt.maxBytes)",
        ],
      ]),
    )
  })

  test("a model without image input still gets the SVG's text, the images named as not sent; nothing else changes for an SVG without them", async () => {
    const images = [png(16, 5)]
    await using dir = await tmpdir({ "b.svg": svg(images), "plain.svg": svg([]) })
    const { run, using, calls } = setup(dir.path)
    using(TEXT_ONLY)
    const out = await run({ file_path: "b.svg", goal: "x" })
    expect(out).toContain(
      "analysed by p/words:\n[SVG: 0 of 1 embedded images sent as images; not sent, so not seen by the model: image 1 (no model known to take image input (the current one, else lookAt.model))]\n\n",
    )
    expect(calls[0].model.modelID).toBe("words")
    expect(files(calls[0])).toEqual([])
    expect(texts(calls[0])).toContain("[embedded image 1: image/png, ")
    expect(texts(calls[0])).not.toContain("base64")
    // An SVG without embedded images: its text as it is, no note.
    const plain = await run({ file_path: "plain.svg", goal: "x" })
    expect(plain).toContain("analysed by p/words:\n\nA banner")
    expect(calls[1].parts[1]).toEqual({ type: "text", text: `SVG source of plain.svg:\n${svg([])}` })
  })
})
