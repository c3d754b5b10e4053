// Encoded copies as real tools print them: every case runs the tool (base64, xxd, hexdump, od, rev, fold, sed, awk)
// on a temporary file through Bun.spawnSync, so the formats are the tools' own. Two files: one whose content is
// protected (found by its fingerprints: a token and lines), one holding a secret in a well-known format (a GitHub
// token). After scanning and redaction nothing of either may remain — no piece of the token, no line, nothing that
// decodes to them — and the line count is kept. A benign set of realistic outputs (lockfiles, git, checksums, webpack,
// hex dumps of a PNG, minified code) must come out unchanged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import fs from "fs"
import os from "os"
import path from "path"
import zlib from "zlib"
import { SecurityEncoding } from "../../security/encoding"
import { SecurityFingerprint } from "../../security/fingerprint"
import { SecurityRedact } from "../../security/redact"
import { LLMScanner } from "../../security/scanner"
import { bunSpawnSync } from "../spawn-sync"

const ROOT = path.resolve(import.meta.dir, "../../../..")

const TOKEN = "Zx81Qp0vLk27mNb5Yt3RwE9u"
const PROTECTED = [
  "# billing service settings",
  `API_TOKEN=${TOKEN}`,
  "the enterprise rate multiplies the base price by 1.37 per seat",
  "annual plans get a further discount of twelve percent on renewal",
  "",
].join("\n")
const GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC2eF4hJ6"
const DEPLOY = ["# deploy settings", `GITHUB_TOKEN=${GITHUB}`, "REGION=eu-west-1", ""].join("\n")

const index = SecurityFingerprint.create()
SecurityFingerprint.add(index, PROTECTED)
const scanner: LLMScanner.Scanner = {
  scope: "tool",
  markers: [],
  secrets: true,
  indexes: [index],
  pathRules: [],
  root: "/",
  home: "/",
  nocase: false,
  inert: false,
}

function redact(text: string): { text: string; ranges: LLMScanner.Range[] } {
  const ranges = LLMScanner.scanForProtectedContent(text, scanner)
  return { text: SecurityRedact.redactContent(text, ranges, { gutter: true }), ranges }
}

/** Pieces that must not survive: the token in pieces of six, the lines' words, the GitHub token's pieces. */
const PIECES = [
  ...TOKEN.match(/.{6}/g)!,
  "1.37 per",
  "twelve percent",
  "base price",
  ...GITHUB.slice(4).match(/.{6}/g)!,
]

let dir = ""
const files = { protected: "", deploy: "", zeros: "", png: "" }

/** Runs `command` in a shell with FILE standing for `file`; its standard output. */
function run(command: string, file = files.protected): string {
  const proc = bunSpawnSync(["sh", "-c", command.replaceAll("FILE", `'${file}'`)], {
    env: { ...process.env, LC_ALL: "C" },
  })
  if (proc.exitCode !== 0) throw new Error(`${command}: ${proc.stderr.toString()}`)
  const out = proc.stdout.toString()
  if (!out.trim()) throw new Error(`${command}: no output`)
  return out
}

/** The output of `command` on both files, redacted: nothing of the token, the lines or the GitHub token is left. */
function nothingLeaks(command: string, targets: ("protected" | "deploy")[] = ["protected", "deploy"]) {
  for (const target of targets) {
    const output = run(command, files[target])
    const out = redact(output)
    const left = PIECES.filter((p) => out.text.includes(p))
    expect({ command, target, left }).toEqual({ command, target, left: [] })
    expect(out.ranges.length).toBeGreaterThan(0)
    expect(out.text.split("\n")).toHaveLength(output.split("\n").length)
    // Nothing decodes to protected content any more either.
    expect(LLMScanner.scanForProtectedContent(out.text, scanner)).toEqual([])
  }
}

beforeAll(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocb-encoding-")))
  files.protected = path.join(dir, "billing.env")
  files.deploy = path.join(dir, "deploy.env")
  files.zeros = path.join(dir, "zeros.bin")
  files.png = path.join(dir, "pixel.png")
  fs.writeFileSync(files.protected, PROTECTED)
  fs.writeFileSync(files.deploy, DEPLOY)
  fs.writeFileSync(files.zeros, Buffer.concat([Buffer.from(PROTECTED), Buffer.alloc(96), Buffer.from(DEPLOY)]))
  fs.writeFileSync(files.png, png(4, 3))
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("base64 wrapped at any width", () => {
  const commands = [
    "base64 -w 0 FILE",
    "base64 FILE",
    "base64 -w 64 FILE",
    "base64 -w 23 FILE",
    "base64 -w 16 FILE",
    "base64 -w 12 FILE",
    "base64 -w 8 FILE",
    "base64 -w 5 FILE",
    "base64 -w 4 FILE",
    "base64 -w 2 FILE",
    "base64 -w 0 FILE | fold -w 12",
    "base64 -w 0 FILE | fold -w 7",
    "base64 -w 10 FILE | sed 's/^/    /'",
    "base64 -w 9 FILE | sed 's/^/> /'",
    "base64 -w 14 FILE | sed 's/$/\\r/'",
    "base64 -w 0 FILE | tr '+/' '-_' | tr -d '=' | fold -w 6",
    "base64 -w 11 FILE | cat -n",
    "base64 -w 20 FILE | awk '{ print NR \": \" $0 }'",
    'echo "data: $(base64 -w 18 FILE)"',
    "base64 -w 8 FILE; echo done",
  ]
  for (const command of commands) test(command, () => nothingLeaks(command))
})

describe("hex as xxd -p prints it, at any -c", () => {
  const commands = [
    "xxd -p FILE",
    "xxd -p -c 1 FILE",
    "xxd -p -c 2 FILE",
    "xxd -p -c 3 FILE",
    "xxd -p -c 4 FILE",
    "xxd -p -c 8 FILE",
    "xxd -p -c 16 FILE",
    "xxd -p -c 64 FILE",
    "xxd -p -u FILE",
    "xxd -p -c 5 FILE | sed 's/^/  /'",
    "xxd -p -c 6 FILE | sed 's/$/\\r/'",
    "xxd -p -c 32 FILE | tr -d '\\n'",
  ]
  for (const command of commands) test(command, () => nothingLeaks(command))
})

describe("hex dumps, taken whole (their ASCII column too)", () => {
  const commands = [
    "xxd FILE",
    "xxd -g1 FILE",
    "xxd -g4 FILE",
    "xxd -u FILE",
    "xxd -c 4 FILE",
    "xxd -c 1 FILE",
    "xxd -e FILE",
    "hexdump -C FILE",
    "hexdump FILE",
    "od -A x -t x1z FILE",
    "od -t x1 FILE",
    "od -x FILE",
    "od -A n -t x1 FILE",
    "od -t x4 FILE",
    "hexdump -C FILE | sed 's/^/    /'",
    "xxd FILE | awk '{ print NR \": \" $0 }'",
  ]
  for (const command of commands) test(command, () => nothingLeaks(command))
  test("a dump with repeated lines (*) is one block", () => {
    for (const command of ["hexdump -C FILE", "od -A x -t x1z FILE", "xxd -a FILE"]) {
      const output = run(command, files.zeros)
      expect(output).toContain("*")
      const out = redact(output)
      expect(PIECES.filter((p) => out.text.includes(p))).toEqual([])
      expect(out.ranges.filter((r) => r.kind === "encoded")).toHaveLength(1)
    }
  })
})

describe("byte lists and C arrays", () => {
  const commands = [
    "xxd -i FILE",
    "xxd -i -u FILE",
    "xxd -i -c 4 FILE",
    "xxd -i -c 1 FILE",
    "xxd -i -C FILE",
    "xxd -p -c1 FILE | sed 's/^/0x/' | paste -sd, -",
    "xxd -p -c1 FILE | sed 's/^/0x/' | paste -sd' ' -",
    "xxd -p -c1 FILE | sed 's/^/0x/' | paste -d, - - - - - - - -",
    "xxd -i FILE | sed 's/0x/0X/g'",
    "od -A n -t x1 -v FILE | sed 's/ \\([0-9a-f][0-9a-f]\\)/0x\\1, /g'",
  ]
  for (const command of commands) test(command, () => nothingLeaks(command))
})

describe("\\xNN escape strings", () => {
  const commands = [
    "xxd -p -c1 FILE | awk '{ printf \"\\\\x%s\", $0 }'",
    "xxd -p -c1 FILE | awk '{ printf \"\\\\x%s\", toupper($0) }'",
    'xxd -p -c1 FILE | awk \'NR%8==1 { printf "\\"" } { printf "\\\\x%s", $0 } NR%8==0 { print "\\"" }\'; echo \'"\'',
    String.raw`printf "s = b'%s'\n" "$(xxd -p -c1 FILE | awk '{ printf "\\x%s", $0 }')"`,
    "xxd -p -c1 FILE | sed 's/^/\\\\x/'",
    String.raw`xxd -p -c1 FILE | awk '{ printf "\\x%s", $0 } NR%16==0 { print "\\" }'`,
    "sed 's/[0-9]/\\\\x3&/g; s/e/\\\\x65/g' FILE",
    "sed 's/a/\\\\x61/g; s/e/\\\\x65/g; s/o/\\\\x6f/g; s/A/\\\\x41/g' FILE",
    'echo "printf \\"$(xxd -p -c1 FILE | awk \'{ printf "\\\\x%s", $0 }\')\\""',
    String.raw`printf "$'%s'\n" "$(xxd -p -c1 FILE | awk '{ printf "\\x%s", $0 }')"`,
  ]
  for (const command of commands) test(command, () => nothingLeaks(command))
})

describe("spaced hex pairs", () => {
  const commands = [
    "xxd -p FILE | sed 's/../& /g'",
    "xxd -p -c 16 FILE | sed 's/../& /g'",
    "xxd -p FILE | sed 's/../& /g' | tr a-f A-F",
    'hexdump -v -e \'16/1 "%02x " "\\n"\' FILE',
    "hexdump -v -e '/1 \"%02X \"' FILE",
    "xxd -p FILE | sed 's/../& /g; s/^/data: /'",
    "xxd -p -c 12 FILE | sed 's/../& /g; s/^/> /'",
    "od -A n -t x1 -v -w8 FILE",
    "xxd -p -c 20 FILE | sed 's/../&  /g'",
    "echo \"bytes: $(xxd -p FILE | tr -d '\\n' | sed 's/../& /g')\"",
  ]
  for (const command of commands) test(command, () => nothingLeaks(command))
})

describe("protected lines reversed (rev)", () => {
  const commands = [
    "rev FILE",
    "rev FILE | tac",
    "rev FILE | cat -n",
    "rev FILE | awk '{ print NR \": \" $0 }'",
    "rev FILE | sed 's/^/    /'",
    "rev FILE | sed 's/$/\\r/'",
    "grep TOKEN FILE | rev",
    "rev FILE | sort",
    "tac FILE | rev | sed 's/^/> /'",
    "rev FILE | head -c 4096",
  ]
  for (const command of commands) test(command, () => nothingLeaks(command, ["protected"]))
})

describe("encodings of encodings", () => {
  const commands = [
    "xxd FILE | base64",
    "base64 FILE | base64 -w 20",
    "base64 -w 8 FILE | xxd -p",
    "hexdump -C FILE | base64 -w 0",
    "xxd -p FILE | base64 | xxd -p -c 8",
  ]
  for (const command of commands) test(command, () => nothingLeaks(command))
  test("the label names every layer", () => {
    const out = redact(run("base64 -w 8 FILE | xxd -p", files.deploy))
    expect(out.ranges.map((r) => r.label)).toContain("hex-encoded base64-encoded secret (github-token)")
  })
})

describe("blocks and thresholds", () => {
  test("a dump goes whole: offsets, hex and ASCII column, with read-tool line numbers kept", () => {
    const output = run("xxd FILE", files.deploy)
    const numbered = output
      .trimEnd()
      .split("\n")
      .map((l, i) => `${i + 1}: ${l}`)
      .join("\n")
    const out = redact(numbered)
    expect(out.text.split("\n").map((l) => l.replace(/\[REDACTED: [^\]]+\]/, "[…]"))).toEqual(
      numbered.split("\n").map((_, i) => (i === 0 ? "1: […]" : `${i + 1}: `)),
    )
  })
  test("blocks report their form and encoding", () => {
    const forms = (command: string) =>
      SecurityEncoding.blocks(run(command)).map((b) => `${b.format}/${b.encoding}${b.binary ? "/binary" : ""}`)
    expect(forms("base64 -w 8 FILE")).toEqual(["wrapped/base64"])
    expect(forms("base64 -w 0 FILE")).toEqual(["run/base64"])
    expect(forms("xxd -p -c 2 FILE")).toEqual(["wrapped/hex"])
    expect(forms("hexdump -C FILE")).toEqual(["dump/hex"])
    expect(forms("xxd -i FILE")).toEqual(["bytes/hex"])
    expect(forms("xxd -p -c1 FILE | awk '{ printf \"\\\\x%s\", $0 }'")).toEqual(["escapes/hex"])
    expect(forms("xxd -p FILE | sed 's/../& /g; s/^/data: /'")).toEqual(["pairs/hex"])
    expect(forms("xxd -p FILE | sed 's/../& /g; s/^/data: /'")).toEqual(["pairs/hex"])
    expect(forms(`hexdump -C FILE`).length).toBe(1)
  })
  test("binary content is scanned as its printable runs", () => {
    const blocks = SecurityEncoding.blocks(run("xxd FILE", files.zeros))
    expect(blocks.map((b) => b.binary)).toEqual([true])
    expect(blocks[0].decoded).toContain(`API_TOKEN=${TOKEN}`)
    expect(blocks[0].decoded).toContain(`GITHUB_TOKEN=${GITHUB}`)
  })
  test("little-endian words (hexdump, od -x, xxd -e) are read in both byte orders", () => {
    for (const command of ["hexdump FILE", "od -x FILE", "xxd -e FILE"]) {
      const [block] = SecurityEncoding.blocks(run(command))
      expect(block.decoded).toContain(`API_TOKEN=${TOKEN}`)
    }
  })
  test("short or unstructured look-alikes are not blocks", () => {
    for (const text of [
      "de ad be ef",
      "0x41, 0x42, 0x43",
      "QUJD\nREVG",
      "ab\ncd\nef",
      "\\x41\\x42",
      "a1b2 c3d4 e5f6",
      "return\nbreak\nthrow",
      "deadbeef\ncafebabe",
    ])
      expect(SecurityEncoding.blocks(text)).toEqual([])
  })
  test("a word after a block is not part of it; a block ends at its padding", () => {
    const output = run("base64 -w 8 FILE; echo done; base64 -w 12 FILE", files.deploy)
    const blocks = SecurityEncoding.blocks(output)
    expect(blocks.map((b) => b.format)).toEqual(["wrapped", "wrapped"])
    expect(blocks.map((b) => b.decoded)).toEqual([DEPLOY, DEPLOY])
    expect(output.slice(blocks[0].end)).toStartWith("\ndone\n")
  })
  test("two outputs one after the other are found apart or together, whichever decodes", () => {
    const output = run("base64 -w 76 FILE; xxd -p -c 14 FILE", files.deploy)
    const blocks = SecurityEncoding.blocks(output)
    expect(blocks.map((b) => [b.encoding, b.decoded.startsWith(DEPLOY)])).toEqual([
      ["base64", true],
      ["hex", true],
    ])
  })
})

/** A real PNG of `width` × `height` pixels (signature, IHDR, IDAT, IEND with their CRCs). */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data])
    const out = Buffer.alloc(8 + data.length + 4)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(zlib.crc32(body), 8 + data.length)
    return out
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const rows = Buffer.alloc(height * (1 + width * 3))
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) rows.set([x * 60, y * 80, 200], y * (1 + width * 3) + 1 + x * 3)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ])
}

/** Lockfile entries from the repository's package-lock.json (real names, versions and integrity hashes). */
function lockEntries(): { name: string; version: string; resolved: string; integrity: string }[] {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8"))
  return Object.entries(lock.packages as Record<string, any>)
    .filter(([key, p]) => key.startsWith("node_modules/") && p.integrity && p.version)
    .slice(0, 150)
    .map(([key, p]) => {
      const name = key.slice(key.lastIndexOf("node_modules/") + 13)
      const resolved = `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${p.version}.tgz`
      return { name, version: p.version, resolved, integrity: p.integrity }
    })
}

function git(repo: string, ...args: string[]): string {
  const proc = bunSpawnSync(["git", ...args], {
    cwd: repo,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Ada Lovelace",
      GIT_AUTHOR_EMAIL: "ada@example.com",
      GIT_COMMITTER_NAME: "Ada Lovelace",
      GIT_COMMITTER_EMAIL: "ada@example.com",
      GIT_AUTHOR_DATE: "2024-03-01T10:00:00Z",
      GIT_COMMITTER_DATE: "2024-03-01T10:00:00Z",
      GIT_CONFIG_GLOBAL: "/dev/null",
    },
  })
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${proc.stderr.toString()}`)
  return proc.stdout.toString()
}

describe("benign output comes out unchanged", () => {
  const unchanged = (name: string, text: string) => {
    expect(text.length).toBeGreaterThan(200)
    const out = redact(text)
    expect({ name, ranges: out.ranges }).toEqual({ name, ranges: [] })
    expect(out.text).toBe(text)
  }
  /** Hashes and identifiers decode to nothing readable. */
  const noReadableBlocks = (text: string) =>
    expect(
      SecurityEncoding.blocks(text)
        .filter((b) => !b.binary)
        .map((b) => b.decoded),
    ).toEqual([])

  test("npm package-lock.json", () => {
    const text = fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8")
    unchanged("package-lock.json", text)
    noReadableBlocks(text)
  })
  test("bun.lock and yarn.lock", () => {
    const entries = lockEntries()
    const bun = [
      "{",
      '  "lockfileVersion": 1,',
      '  "packages": {',
      ...entries.map((e) => `    "${e.name}": ["${e.name}@${e.version}", "", {}, "${e.integrity}"],`),
      "  }",
      "}",
    ].join("\n")
    const yarn = entries
      .map(
        (e) =>
          `"${e.name}@^${e.version}":\n  version "${e.version}"\n  resolved "${e.resolved}"\n  integrity ${e.integrity}\n`,
      )
      .join("\n")
    for (const [name, text] of [
      ["bun.lock", bun],
      ["yarn.lock", yarn],
    ]) {
      unchanged(name, text)
      noReadableBlocks(text)
    }
  })
  test("git log, rev-list, show", () => {
    const repo = path.join(dir, "repo")
    fs.mkdirSync(repo)
    git(repo, "init", "-q", "-b", "main")
    for (let i = 0; i < 12; i++) {
      fs.writeFileSync(path.join(repo, `file-${i % 4}.ts`), `export const value${i} = ${i * 37}\n`.repeat(i + 1))
      git(repo, "add", "-A")
      git(repo, "commit", "-q", "-m", `Change ${i}: adjust value ${i} and its callers`)
    }
    for (const args of [
      ["log", "--stat"],
      ["log", "--format=fuller"],
      ["log", "--oneline", "--graph", "--decorate"],
      ["rev-list", "--all"],
      ["log", "--format=%H %T %P"],
      ["log", "-p", "-3"],
      ["show", "--stat", "HEAD"],
      ["ls-tree", "-r", "HEAD"],
    ]) {
      const text = git(repo, ...args)
      unchanged(`git ${args.join(" ")}`, text.length > 200 ? text : text.repeat(4))
      noReadableBlocks(text)
    }
  })
  test("sha256sum, sha512sum, md5sum, b2sum", () => {
    const targets = ["node_modules/zod/package.json", "node_modules/ajv/package.json", "package.json", "tsconfig.json"]
      .map((f) => `'${path.join(ROOT, f)}'`)
      .join(" ")
    for (const tool of ["sha256sum", "sha512sum", "md5sum", "b2sum", "sha1sum"]) {
      const text = run(`${tool} ${targets} ${targets}`)
      unchanged(tool, text)
      noReadableBlocks(text)
    }
  })
  test("webpack build output", () => {
    const hash = (i: number) => (i * 2654435761).toString(16).padStart(8, "0").slice(-8) + "c0ffee42deadbeef"
    const text = [
      "asset main.3f2a1b9c8d7e6f5a.js 148 KiB [emitted] [immutable] [minimized] (name: main) 1 related asset",
      ...Array.from(
        { length: 40 },
        (_, i) => `asset ${i}.${hash(i)}.chunk.js ${(i * 1.7).toFixed(2)} KiB [emitted] [immutable] [minimized]`,
      ),
      "asset index.html 1.2 KiB [emitted]",
      "orphan modules 2.45 MiB [orphan] 812 modules",
      "runtime modules 7.02 KiB 12 modules",
      "cacheable modules 1.4 MiB",
      "  modules by path ./node_modules/ 1.1 MiB 402 modules",
      "  modules by path ./src/ 310 KiB 96 modules",
      "webpack 5.91.0 compiled successfully in 8423 ms",
      `Hash: ${hash(7)}${hash(9)}`,
      "Version: webpack 5.91.0",
      "Time: 8423ms",
      "Built at: 2024-03-01 10:00:00",
    ].join("\n")
    unchanged("webpack", text)
  })
  test("hex dumps and base64 of a PNG header", () => {
    for (const command of [
      "xxd FILE",
      "xxd -p FILE",
      "hexdump -C FILE",
      "od -A x -t x1z FILE",
      "head -c 64 FILE | xxd -i",
      "base64 FILE",
      "base64 -w 16 FILE",
    ]) {
      const text = run(command, files.png)
      unchanged(command, text.length > 200 ? text : text.repeat(4))
    }
  })
  test("minified JavaScript, a source map, UUIDs, CSS colours and image digests", () => {
    const minified = fs.readFileSync(path.join(ROOT, "node_modules/diff/dist/diff.min.js"), "utf8")
    unchanged("diff.min.js", minified)
    const mapFile = path.join(ROOT, "node_modules/opencode-linux-x64-baseline-musl/bin/parser.worker.js.map")
    if (fs.existsSync(mapFile)) unchanged("source map", fs.readFileSync(mapFile, "utf8").slice(0, 200_000))
    const uuids = Array.from({ length: 60 }, (_, i) =>
      [8, 4, 4, 4, 12]
        .map((n, k) => ((i + 1) * 2654435761 * (k + 3)).toString(16).padStart(n, "0").slice(-n))
        .join("-"),
    ).join("\n")
    unchanged("UUIDs", uuids)
    const css = Array.from(
      { length: 60 },
      (_, i) =>
        `.c${i} { color: #${((i * 2654435761) >>> 8).toString(16).padStart(6, "0").slice(-6)}; border: 1px solid #fff }`,
    ).join("\n")
    unchanged("CSS", css)
    const digests = Array.from(
      { length: 20 },
      (_, i) => `registry.example.com/app@sha256:${Bun.hash(`image ${i}`).toString(16).padStart(16, "0").repeat(4)}`,
    ).join("\n")
    unchanged("image digests", digests)
  })
})
