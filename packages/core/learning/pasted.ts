/**
 * The user's own words in a message, with the material they pasted or quoted taken out: fenced code blocks, indented
 * blocks, `>` quotes, lines shaped like tool output (linter, compiler and test-runner diagnostics, log lines,
 * `XxxWarning:` / `Error:` lines, stack frames) and the text after an introducer ("the error says: …", "getting
 * this:"). Session learning examines only what is left: a linter's "use let or const instead" pasted with a request
 * for help is the tool's advice, not the user's correction.
 *
 * A removed piece becomes "…" between the own words around it, so the sentences on either side stay apart.
 *
 * @example
 * LearningPasted.ownWords("eslint reports this, can you fix it?\n  3:1  error  Unexpected var  no-var")
 * // "eslint reports this, can you fix it?"
 * LearningPasted.ownWords("We don't use `var`, use `const`.") // unchanged: code spans are the user's own
 */
export namespace LearningPasted {
  export const GAP = "…"

  /** Log and diagnostic severities, as tools print them. */
  const SEVERITY = String.raw`(?:error|warning|warn|err!?|fatal|critical|panic|note|info|hint|failed|failure)`

  /** A linter or compiler rule code (E501, F401, UP035, SC2115, TS2304, PLR0913), not a standard's name (ES2022, RFC3339). */
  const CODE = String.raw`(?!ES\d|RFC|ISO|UTF|SHA|MD\d|AES|CVE|PEP|HTTP|IPV|ECMA|GPT|API|TLS)[A-Z]{1,4}\d{2,5}`

  /** Lines that are tool output whatever surrounds them. */
  const DIAGNOSTIC: RegExp[] = [
    // eslint stylish / biome: "  3:1  error  Unexpected var, use let or const instead  no-var"
    new RegExp(String.raw`^\s*\d+:\d+\s+${SEVERITY}\b`, "i"),
    // "src/a.ts:12:5: error …", "src/a.ts(12,5): error TS2322", "./main.go:23:2: printf: …", "--> src/db.rs:14:9",
    // optionally after a tool name ("golangci-lint: internal/api/handler.go:45:12: …")
    /^\s*(?:-->\s*|[\w@. -]{1,30}(?:\s+says)?:\s+)?[\w@~./\\-]*[\w-]\.[a-z][\w]{0,5}(?::\d+(?::\d+)?\b|\(\d+(?:,\d+)?\))/i,
    // "ruff: UP035 `typing.List` …" (a lower-case tool name, then a rule code), "SC2115 (warning): …", "E501: …"
    new RegExp(String.raw`^\s*[a-z][\w@./-]{0,29}:\s+(?:${CODE})\b`),
    new RegExp(String.raw`^\s*(?:${CODE})\b(?::|\s+\(?(?:error|warning|info|style|convention)\)?:)`),
    // "error TS2322", "warning: E501", "[error] F401"
    new RegExp(String.raw`\b(?:[Ee]rror|ERROR|[Ww]arn(?:ing)?|WARN(?:ING)?)\b:?\s+\[?(?:${CODE})\]?\b`),
    // "PydanticDeprecatedSince20: …", "DeprecationWarning: …", "java.lang.IllegalStateException: …", "Error: …"
    /^\s*(?:[a-z_][\w$]*\.)*[A-Z][\w$]*(?:Error|Exception|Warning|Deprecated\w*|Deprecation\w*)\b\s*:/,
    /^\s*(?:error|warning|warn|fatal|panic|exception|caused by|uncaught|unhandled)(?:\[[^\]]*\])?\s*:/i,
    // log levels and tool prefixes: "npm WARN …", "npm ERR! …", "[warn] …", "##[error]…", "ERROR …", "WARNING: …"
    /^\s*(?:npm|yarn|pnpm|bun|pip|cargo|gradle|mvn|docker)\s+(?:WARN|ERR!?|ERROR|error|warning|notice)\b/,
    /^\s*(?:##)?\[(?:warn|warning|error|err|info|debug|fatal|critical)\]/i,
    /^\s*(?:ERROR|WARNING|WARN|INFO|DEBUG|FATAL|CRITICAL|TRACE)\b/,
    /^\s*\d{4}-\d\d-\d\d[T ]\d\d:\d\d/,
    // test runners: "FAILED tests/x.py::test_y - …", "FAIL  src/app.test.ts", "E       assert 401 == 200", "● Test …"
    /^\s*(?:FAILED|FAIL|PASSED|PASS|ERROR|XFAIL)(?:\s+|:\s*)\S/,
    /^\s*E\s{2,}\S/,
    /^\s*[●✕✗×]\s/,
    // stack traces: "Traceback (most recent call last):", "  File "app.py", line 4, in run", "    at f (a.js:1:2)"
    /^\s*Traceback \(most recent call last\)/,
    /^\s*File "[^"]+", line \d+/,
    /^\s*at\s+[\w$.<>[\]\s]*\(?[^()\s]*:\d+(?::\d+)?\)?\s*$/,
    /^\s*at\s+[\w$.<>]+\([\w$.]*(?::\d+)?\)\s*$/,
    /^\s*In\s+\S+\s+line\s+\d+:/,
    // source excerpts in compiler output: "14 |     let conn = …", "   |         ^^^^ help: …"
    /^\s*\d*\s*\|(?:\s|$)/,
    /^\s*\^[~^-]*\^?(?:\s|$)/,
    // a shell prompt line
    /^\s*\$\s+\S/,
  ]

  /**
   * A line that introduces pasted material: the rest of the line after the colon, and the next line, are pasted
   * ("The error says: …", "mypy says: app/models.py:88: …", "Getting this in the logs:", "cargo build:").
   */
  const INTRODUCER_INLINE =
    /\b(?:says|said|reports|reported|prints|printed|shows|showed|outputs|output|complains|complained|warns|warned|reads|gives|gave|returns|returned|throws|threw|logs|logged|(?:error|warning|message|exception|output|log)(?:\s+(?:is|was|message))?)\s*:\s*(?=\S)/i
  const INTRODUCER_LINE =
    /(?:\b(?:says|said|reports?|reported|prints?|printed|shows?|showed|output|outputs|complains?|complained|warns?|warned|gives?|gave|getting|got|get|seeing|see|this|these|logs?|error|errors|warnings?|trace|traceback|message|fails?|failed|failing|breaks|crashes|crashed|means|like)|^\s*(?!(?:note|nb|also|update|edit|context|rules?|conventions?|policy|todo|summary|background|goal|plan|steps|requirements|decision|decided|agreed|settled|correction|preference|important|remember|reminder|fyi|tldr|ps|btw|why|because|reason|again|instead|please|ok|okay)\s*:)[\w@./-]+(?:\s+(?:output|build|test|tests|check|lint|run|log|logs|install|says|reports))?)\s*:\s*$/i

  /** A line ending in a reporting verb without a colon ("that's why alembic says", "npm install prints"). */
  const INTRODUCER_VERB =
    /\b(?:says|said|reports?|reported|prints?|printed|shows?|showed|outputs?|complains?|complained|warns?|warned|got|get|getting|see|seeing|(?:fails?|failed|crashes|crashed)\s+with)\s*$/i

  /** `text` with the spans of `quoted` material after a reporting verb masked, for rule matching. */
  const QUOTED_AFTER_VERB =
    /\b(?:says|said|reports|prints|shows|complains|warns|suggests|suggested|reads)\s+(?:that\s+)?(["“])[^"”\n]*["”]/gi

  /** Whether a line is tool output by its shape alone. */
  export function diagnostic(line: string): boolean {
    // A code span is already marked as quoted by the user: "you keep adding `any` to get past `error TS7006: …`" is
    // the user's sentence around a quote, not a pasted line.
    const bare = line.replace(/`[^`\n]+`/g, "``")
    return DIAGNOSTIC.some((re) => re.test(bare))
  }

  /** The message with fenced blocks, quotes, indented blocks, diagnostics and introduced pastes replaced by "…". */
  export function ownWords(message: string): string {
    const lines = message.replace(/\r\n?/g, "\n").split("\n")
    const multi = lines.filter((l) => l.trim()).length > 1
    const kept: (string | undefined)[] = []
    let fence: string | undefined
    let introduced = false
    let inPaste = false
    for (const raw of lines) {
      const fenceMark = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1]
      if (fence) {
        if (fenceMark && fenceMark[0] === fence[0] && fenceMark.length >= fence.length) fence = undefined
        kept.push(undefined)
        continue
      }
      if (fenceMark) {
        fence = fenceMark
        kept.push(undefined)
        continue
      }
      if (!raw.trim()) {
        // A blank line ends an introduced paste; inside one, it keeps the paste going only when tool output follows.
        introduced = false
        kept.push("")
        continue
      }
      // List items are the user's own (a heading "Rules:" followed by "- use pnpm"), even when indented.
      const item = /^\s*(?:[-*+•]|\d+[.)])\s+\S/.test(raw)
      const pasted =
        (introduced && !item) ||
        /^\s*>/.test(raw) ||
        (multi && !item && /^(?: {2,}|\t)\S/.test(raw)) ||
        diagnostic(raw) ||
        (inPaste && !item && /^\s+\S/.test(raw))
      introduced = false
      if (pasted) {
        kept.push(undefined)
        inPaste = true
        continue
      }
      inPaste = false
      const inline = INTRODUCER_INLINE.exec(raw)
      if (inline && diagnostic(raw.slice(inline.index + inline[0].length))) {
        kept.push(raw.slice(0, inline.index + inline[0].length).trimEnd(), undefined)
        continue
      }
      if (
        inline &&
        /^(?:the\s+)?(?:error|warning|exception|message|output|log|linter|compiler|tool|it|ci)\b/i.test(raw.trim())
      ) {
        kept.push(raw.slice(0, inline.index + inline[0].length).trimEnd(), undefined)
        continue
      }
      if ((INTRODUCER_LINE.test(raw) || INTRODUCER_VERB.test(raw)) && multi) introduced = true
      kept.push(raw)
    }
    // Own lines joined; each run of removed lines becomes one "…" between own words.
    const out: string[] = []
    let gap = false
    for (const line of kept) {
      if (line === undefined) {
        gap = true
        continue
      }
      if (!line.trim()) {
        out.push("")
        continue
      }
      if (gap && out.some((l) => l.trim())) out.push(GAP)
      gap = false
      out.push(line)
    }
    return out
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim()
  }

  /** `text` with code spans and strings quoted after "says"/"reports"… emptied, for rule matching only. */
  export function masked(text: string): string {
    return text
      .replace(/`[^`\n]*`/g, "`x`")
      .replace(QUOTED_AFTER_VERB, (m, q: string) => m.slice(0, m.indexOf(q)) + '"x"')
  }
}
