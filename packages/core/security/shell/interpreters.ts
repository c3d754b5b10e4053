import type { ShellCommands } from "./commands"
import { ShellContext } from "./context"
import { ShellLiterals } from "./literals"
import { ShellParse } from "./parse"

/**
 * Interpreters (`python -c`, `node -e`, `perl -e`, here-docs fed to them, `awk` programs): the string literals of
 * their program text are paths the program may open; literals passed to a shell (`os.system("…")`, `execSync("…")`,
 * backticks in Perl, Ruby and PHP) are read as shell commands; and a program that opens, writes or runs something
 * while building strings at run time (`open('.e' + 'nv')`, `['.', 'env'].join('')`, f-strings, decoding, listing a
 * folder, reading the environment) reports a dynamic region whose prefix is the text all those strings are known to
 * start with. This is a reading of text, not a parser: what it cannot see the kernel sandbox and the output scanner
 * still stop.
 *
 * @example
 * // python3 -c "open('.e' + 'nv').read()" in /r:
 * // dynamic: [{ prefix: "/r/.e", op: "read", command: "python3", destructive: false }]
 */
export namespace ShellInterpreters {
  type Call = ShellCommands.Call

  /** Interpreters known by name; versioned names (`python3.12`, `node20`) are recognised by `versioned`. */
  export const NAMES = [
    ...["python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "bun", "deno", "ruby", "perl", "php"],
    ...["lua", "luajit", "Rscript", "julia", "osascript", "pwsh", "powershell", "tclsh", "groovy", "scala", "kotlin"],
    "swift",
  ]

  /** `python3.12`, `node20`, `perl5.36`: a versioned interpreter name. */
  export function versioned(name: string) {
    return /^(python|pypy|node|ruby|perl|php|lua)\d*(\.\d+)*$/.test(name)
  }

  /** Options whose next argument is program text. */
  const CODE_FLAGS = ShellContext.list("-c -e -E --eval -p --print -r -x -ne -pe -le -lne -lpe -n -pi -i")

  /** `python -c code args…`, `node -e code`, `perl -pi -e code files…`, `python script.py args…`, `python <<EOF`. */
  export function interpreter(c: Call) {
    const { ctx, name, args, state, stdin } = c
    let code: string | undefined
    let codeIndex = -1
    args.forEach((a, i) => {
      if (code !== undefined) return
      if (CODE_FLAGS.includes(a.raw) || /^-[a-zA-Z]*[ceE]$/.test(a.raw)) {
        const next = args[i + 1]
        if (next && !next.raw.startsWith("-")) {
          codeIndex = i + 1
          code = next.dynamic ? undefined : next.values.join(" ")
          if (next.dynamic) ShellContext.anything(ctx, name, `${name}: inline code not known statically`)
        }
      }
    })
    if (name === "deno" && args[0]?.raw === "eval" && args[1]) {
      codeIndex = 1
      code = args[1].values.join(" ")
    }
    const inPlace = args.some((a) => /^-[a-zA-Z]*i/.test(a.raw) && (name.startsWith("perl") || name.startsWith("ruby")))
    const rest = args.filter((a, i) => i !== codeIndex && !a.raw.startsWith("-"))
    if (code === undefined && codeIndex < 0) {
      // `python script.py args…`: the script is read; other arguments might be anything the script opens.
      const [script, ...more] =
        name === "deno" || name === "bun" ? rest.filter((r) => !["run", "x", "test"].includes(r.raw)) : rest
      if (script) ShellContext.emit(ctx, script, "read", name, state)
      for (const a of more) ShellContext.opaque(ctx, a, name, state)
      if (stdin !== undefined) program(c, stdin)
      return
    }
    if (code !== undefined) program(c, code)
    for (const a of rest) {
      ShellContext.emit(ctx, a, "read", name, state)
      if (inPlace) ShellContext.emit(ctx, a, "write", name, state, { destructive: true })
      else ShellContext.opaque(ctx, a, name, state)
    }
  }

  /** `awk 'program' files…`, `awk -f prog files…`. */
  export function awk(c: Call) {
    const { ctx, name, args, state } = c
    let i = 0
    let program: string | undefined
    while (i < args.length) {
      const raw = args[i].raw
      if (raw === "-f" && args[i + 1]) {
        ShellContext.emit(ctx, args[i + 1], "read", name, state)
        program = ""
        i += 2
        continue
      }
      if (raw === "-v" || raw === "-F") {
        i += 2
        continue
      }
      if (raw.startsWith("-")) {
        i++
        continue
      }
      break
    }
    if (program === undefined && i < args.length) {
      if (!args[i].dynamic) {
        const text = args[i].values.join(" ")
        literals(c, text)
        // `system("…")` and `"…" | getline` run shell commands.
        for (const l of ShellLiterals.scan(text, '"'))
          if (
            l.raw &&
            (/\bsystem\s*\(\s*$/.test(near(text, l.start, -1)) || /^\s*\|\s*getline/.test(near(text, l.end, 1)))
          )
            shellText(c, l.raw.replace(/\\(.)/g, "$1"))
      }
      i++
    }
    for (const a of args.slice(i))
      if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(a.raw)) ShellContext.emit(ctx, a, "read", name, state)
  }

  /** Program text: its literals, the shell commands it runs, and names it builds at run time. */
  function program(c: Call, code: string) {
    literals(c, code)
    const family = FAMILY(c.name)
    for (const re of [RUNNER, ...(family.backticks ? [BACKTICKS] : [])])
      for (const m of code.matchAll(re)) shellText(c, (m[2] ?? m[3] ?? "").replace(/\\(.)/g, "$1"))
    built(c, code, family)
  }

  /** String literals of program text: each could be a file the program opens (read, and write if protected). */
  function literals(c: Call, code: string) {
    for (const l of ShellLiterals.scan(code, "\"'`", 1024)) {
      const value = l.raw.replace(/\\(.)/g, "$1")
      if (!value || /\s{2,}|\n/.test(value) || value.length > 1024) continue
      ShellContext.opaque(c.ctx, ShellContext.literal(value), c.name, c.state)
    }
  }

  function shellText(c: Call, text: string) {
    if (text.trim()) ShellParse.script(c.ctx, text, ShellContext.fork(c.state), c.depth - 1)
  }

  /** At most this much text on either side of a literal is read to see what it is joined to or called with. */
  const NEAR = 256

  /** Up to `NEAR` characters of `code` before `at` (`side` -1, blanks at the end trimmed) or after it (blanks trimmed). */
  function near(code: string, at: number, side: -1 | 1): string {
    return side < 0 ? code.slice(Math.max(0, at - NEAR), at).trimEnd() : code.slice(at, at + NEAR).trimStart()
  }

  /** Space-separated names as `\b(?:a|b|…)` followed by `after` (a regular expression's source). */
  const names = (text: string, after = "\\b", flags = "") =>
    new RegExp(`\\b(?:${ShellContext.list(text).join("|")})${after}`, flags)

  /** Calls whose first argument is a shell command: `os.system("…")`, `execSync('…')`, `subprocess.run("…")`. */
  const RUNNER = new RegExp(
    names(`system popen exec execSync spawnSync shell_exec passthru getoutput getstatusoutput check_output check_call
      call run Popen proc_open execute`).source +
      /\s*\(\s*[rbu]?(?:"((?:[^"\\\n]|\\.){1,1024})"|'((?:[^'\\\n]|\\.){1,1024})')/.source,
    "g",
  )
  /** Backticks, `qx{…}` and `%x(…)` run shell commands in Perl, Ruby and PHP. */
  const BACKTICKS = /(`)([^`\n]{1,1024})`|\b(?:qx|%x)\s*[{(]([^})\n]{1,1024})[})]/g

  type Family = {
    /** Backticks run shell commands. */
    backticks?: boolean
    /** `"a" . "b"` concatenates (Perl, PHP). */
    dot?: boolean
    /** `"a" .. "b"` concatenates (Lua). */
    dotdot?: boolean
    /** `"…$x…"` / `"…#{x}…"` interpolates. */
    interpolates?: boolean
  }
  const FAMILIES: Record<string, Family> = {
    perl: { backticks: true, dot: true, interpolates: true },
    php: { backticks: true, dot: true, interpolates: true },
    ruby: { backticks: true, interpolates: true },
    lua: { dotdot: true },
    luajit: { dotdot: true },
  }
  const FAMILY = (name: string): Family => FAMILIES[name.replace(/\d+(\.\d+)*$/, "")] ?? {}

  /**
   * What program text can do, as tables of names: open or list files, change them, run other code, build names.
   * Each is a list of regular expressions; any match counts.
   */
  const TOKENS: Record<"files" | "writes" | "runs" | "builds", RegExp[]> = {
    files: [
      names(
        `open fopen sysopen opendir readfile file_get_contents readFile readFileSync createReadStream readlines
        read_text read_bytes readLines slurp loadfile dofile fread file scandir listdir readdir readdirSync iterdir
        glob iglob`,
        "\\s*\\(",
      ),
      names("fs fsPromises pathlib Path File FileUtils IO Dir Deno Bun shutil glob Files", "\\s*[.(:[]"),
      /\bos\.(?:open|remove|unlink|rename|replace|rmdir|removedirs|listdir|scandir|walk|chmod|truncate|link)\b/,
      /\bos\.(?:symlink|popen|system|exec\w*|spawn\w*|makedirs|mkdir)\b|\b(?:io|codecs)\.open\b|\bGet-Content\b/,
      /\bopen\s+[A-Za-z$(]|require\s*\(\s*['"](?:node:)?fs(?:\/promises)?['"]|<\s*(?:\$\s*|\$?\w+\s*)?>/,
    ],
    writes: [
      names(`write\\w* append\\w* unlink\\w* remove\\w* rename\\w* rmSync rmtree rmdir\\w* move copy\\w* truncate\\w*
        chmod\\w* chown\\w* symlink\\w* mkdir\\w* makedirs touch file_put_contents fwrite fputs Set-Content Remove-Item
        Out-File Move-Item Copy-Item`),
      // Open modes: `open(p, 'w')`, `mode='a'`, Perl's `open(F, ">", …)`.
      /(?:,|\bmode\s*=)\s*(['"])(?:[wax]\+?[bt]?|r\+[bt]?|rb\+)\1|,\s*['"]\+?>{1,2}/,
    ],
    runs: [
      names(`eval exec\\w* system spawn\\w* popen\\w* subprocess child_process Function compile __import__ importlib
        getattr globals shell_exec passthru proc_open Invoke-Expression iex instance_eval class_eval send public_send
        qx Runtime ProcessBuilder loadstring execute`),
      // A module named at run time: `require(x)`, `import(x)`.
      /(?:require|import)\s*\(\s*[^'"\s)]/,
    ],
    /** Built-in ways to make or fetch a name at run time (the literal they start from is not a prefix). */
    builds: [
      new RegExp(
        "\\.(?:" +
          ShellContext.list(
            `concat replace\\w* lower upper toLowerCase toUpperCase capitalize strip trim\\w* reverse
            decode encode translate substr\\w* slice split repeat center ljust rjust zfill casefold swapcase title
            fromCharCode fromCodePoint fromhex b64decode unhexlify from`,
          ).join("|") +
          ")\\s*\\(",
      ),
      names(`chr bytes bytearray atob btoa unescape decodeURI\\w* sprintf pack unpack lc uc implode str_replace strrev
        base64_decode hex2bin strtolower strtoupper listdir scandir walk glob iglob iterdir readdir\\w* opendir environ
        getenv input raw_input argv ARGV STDIN stdin gets readline ENV`),
      /\[::-?\d*\]|%ENV|\$ENV|process\.(?:env|argv)|Deno\.args|Bun\.argv/,
    ],
  }
  const can = (what: keyof typeof TOKENS, code: string) => TOKENS[what].some((re) => re.test(code))

  /**
   * Names built at run time: when the program touches files or runs code and builds strings, a dynamic region
   * (read, and a destructive write when it can change files or run code) whose prefix is the longest text every
   * built string is known to start with.
   */
  function built(c: Call, code: string, family: Family) {
    const { ctx, name, state } = c
    const files = can("files", code)
    const writes = can("writes", code)
    const runs = can("runs", code)
    if (!files && !writes && !runs) return
    const starts = builtStarts(code, family)
    if (!starts.length) return
    // Built strings handed to code that runs commands are commands, not paths: nothing is known of what they reach.
    const resolved = runs
      ? [""]
      : starts.map((s) => (s ? ShellContext.prefixOf(ctx, ShellContext.unknown(s), state) : ""))
    const prefix = resolved.reduce((a, b) => common(a, b))
    ShellContext.region(ctx, prefix, "read", name, false)
    if (writes || runs) ShellContext.region(ctx, prefix, "write", name, true)
  }

  /** The text each string built at run time starts with ("" when unknown); empty when nothing is built. */
  function builtStarts(code: string, family: Family): string[] {
    const starts: string[] = []
    if (can("builds", code)) starts.push("")
    for (const l of ShellLiterals.scan(code, "\"'")) {
      const doubled = l.quote === '"' ? l.raw : undefined
      const value = l.raw.replace(/\\(.)/g, "$1")
      // Only the text next to the literal decides (the whole text before and after each literal made this quadratic).
      const before = near(code, l.start, -1)
      const after = near(code, l.end, 1)
      // `'a' + x`, `"a" . $x` (Perl, PHP), `"a" .. x` (Lua), `'a' 'b'` (Python): the literal starts the string.
      if (
        /^\+(?![+=])/.test(after) ||
        /^["']/.test(after) ||
        (family.dot && /^\.(?![A-Za-z_.=])/.test(after)) ||
        (family.dotdot && /^\.\.(?!\.)/.test(after)) ||
        /^\*/.test(after)
      )
        starts.push(value)
      else if (/^%(?!=)|^\.format\s*\(/.test(after)) starts.push(leading(value))
      else if (/^\[|^\.[A-Za-z_]/.test(after)) starts.push("")
      // `x + 'a'`: the literal continues a string whose start is not known (after another literal it is known).
      const joinedTo = /(\+=?|\.\.|\.)$/.exec(before)
      if (joinedTo && (joinedTo[1] !== "." || family.dot) && (joinedTo[1] !== ".." || family.dotdot)) {
        const previous = before.slice(0, -joinedTo[1].length).trimEnd()
        if (joinedTo[1] === "+=" || !/["']$/.test(previous)) starts.push("")
      }
      if (family.interpolates && doubled !== undefined && /\$[\w{]|#\{|@\w/.test(doubled))
        starts.push(leading(doubled.split(/\$|#\{|@/)[0]))
    }
    // `['.', 'env'].join('')` starts with its first element; any other `.join(` or `.format(` is unknown.
    let joins = 0
    for (const m of code.matchAll(/\[\s*(['"])((?:(?!\1)[^\\\n]|\\.)*)\1\s*,[^\]]*\]\s*\.join\s*\(/g)) {
      starts.push(m[2])
      joins++
    }
    if ((code.match(/\.join\s*\(/g)?.length ?? 0) > joins) starts.push("")
    if (/[^"'\s]\s*\.format\s*\(/.test(code)) starts.push("")
    for (const m of code.matchAll(/\b[fF][rR]?(['"])((?:(?!\1)[^{\\\n]|\\.)*)\{/g)) starts.push(m[2])
    for (const m of code.matchAll(/`([^`$\n]*)\$\{/g)) starts.push(m[1])
    return starts
  }

  /** The text of a literal before any formatting placeholder (`%s`, `{}`). */
  function leading(value: string) {
    return value.split(/[%{]/)[0]
  }

  function common(a: string, b: string) {
    let i = 0
    while (i < a.length && i < b.length && a[i] === b[i]) i++
    return a.slice(0, i)
  }
}
