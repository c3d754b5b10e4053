import { distance } from "fastest-levenshtein"
import z from "zod"
import type { CommentSyntax } from "./syntax"

/**
 * The comment checker's three heuristics (PRD FR-6), each with thresholds per sensitivity:
 *
 * 1. Density — annotation lines among the non-blank lines the change added. An annotation is a short standalone
 *    comment (one or two lines) or a comment trailing code; explanatory blocks of three or more lines, doc
 *    comments (JSDoc, `///`, docstrings), license headers, lint/type directives and commented-out code do not
 *    count — people write those, assistants narrate line by line. Judged only when the change added at least
 *    `minLines` non-blank lines and `minComments` annotations, so a one-line fix with a comment is not "dense", and
 *    held against a change only when one of its annotations narrates or repeats its line (`CommentCheck.judge`):
 *    short comments that each say why are dense with explanations, not with narration.
 * 2. Narrating comments — a short comment judged against the code it sits on (`narration`): an obvious pattern
 *    (the PRD's six and common restating verbs, at most `MAX_WORDS` words: "Initialize the counter", "Return the
 *    result"), or an imperative narration verb whose content words the code repeats ("Parse CLI arguments" over
 *    `parser.parse_args()`); explanations ("because", "only", "should", a `Label: text` note) never narrate.
 *    Triggers at `obvious` such comments when they are also at least `share` of the new comments (of the non-doc
 *    ones in a change written as sentences), or come two in a row (`CommentCheck.RUN`); "likely" narration counts
 *    where `likely` is set (strict), and in changes whose style is narration (see `CommentCheck.judge`).
 * 3. Duplication — the comment restates the next code line: after both are split into lower-case words
 *    (camelCase and snake_case split, filler words dropped), their Levenshtein distance is under 30% of the
 *    comment's length. Same `share` rule.
 *
 * @example
 * CommentHeuristics.obvious("Loop through the items") // true
 * CommentHeuristics.restates("return the result", "return result") // true
 */
export namespace CommentHeuristics {
  export const Sensitivity = z.union([z.enum(["strict", "normal", "relaxed"]), z.literal(false)])
  export type Sensitivity = z.infer<typeof Sensitivity>
  export type Level = Exclude<Sensitivity, false>

  export const THRESHOLDS: Record<
    Level,
    {
      density: number
      obvious: number
      duplicates: number
      share: number
      minLines: number
      minComments: number
      /** Whether "likely" narration counts (see `narration`). */
      likely: boolean
    }
  > = {
    strict: { density: 0.15, obvious: 1, duplicates: 1, share: 0, minLines: 5, minComments: 2, likely: true },
    normal: { density: 0.3, obvious: 1, duplicates: 1, share: 0.3, minLines: 5, minComments: 3, likely: false },
    relaxed: { density: 0.5, obvious: 2, duplicates: 2, share: 0.3, minLines: 8, minComments: 4, likely: false },
  }

  /** Obvious comments are short: a restatement, not an explanation. */
  export const MAX_WORDS = 8

  /**
   * Imperatives only: a comment in the third person ("Logs a smart edit correction event.", "Returns the pattern as a
   * literal …") describes what a declaration is or does, the style of documentation, not a step narrated.
   */
  const VERBS =
    "get|fetch|retrieve|update|increment|decrement|calculate|compute|add|append|push|remove|delete|call|invoke|" +
    "store|save|send|convert|parse|assign|read|write|open|close|start|stop|handle|process|clear|reset|sort|format|" +
    "build|render|generate|instantiate|load|insert|use|make|run|execute|wait|throw"

  /** The PRD's six patterns first, then the narration patterns this checker adds. */
  export const PATTERNS: RegExp[] = [
    /^(initiali[sz]e|create|set|define|declare) (the|a|an) \w+/i,
    /^(return|log|print|output) (the|a) \w+/i,
    /^(loop|iterate|map|filter) (through|over|the) \w+/i,
    /^(check|verify|validate|ensure) (if|that|the) \w+/i,
    /^(import|require|include) \w+/i,
    /^(function|method|class) (to|that|for) \w+/i,
    new RegExp(`^(${VERBS}) (the|a|an|new|this|that|all|each|every|our|some|it) \\w+`, "i"),
    /^(initiali[sz]e|create|set|define|declare|return|increment|decrement) \w+( \w+){0,3}$/i,
    /^this (function|method|class|variable|line|block|loop|code|constant) \w+/i,
    /^(helper|utility)( function| method)? (to|that|for) \w+/i,
    /^(helper|utility) (function|method) \w+/i,
    /^(constructor|getter|setter|main function|entry point)\.?$/i,
  ]

  /** Comments that are instructions to tools or markers, never slop. */
  const DIRECTIVE =
    /^((eslint|prettier|tslint|istanbul|c8|biome|noqa|pylint|mypy|nolint|rubocop|TODO|FIXME|XXX|HACK|NOTE|SAFETY|region|endregion|#region|#endregion|SPDX|Copyright)\b|@ts-|type:|fmt:|go:|-\*-|vim:|@license|@preserve|\(c\)|\+build|(-\*-\s*)?(en)?coding[:=])/i

  /**
   * Instructions to tools by family, each a whole word (or ending in punctuation), optionally after `#`, `@` or `$`
   * (`// #nosec`, `@phpstan-ignore`, `$FlowFixMe`): type checkers, linters, formatters, coverage tools, security
   * scanners, spell checkers, bundlers and language servers. Prose rarely starts with one of these words.
   */
  const TOOL_DIRECTIVES = [
    // Type checkers.
    "pyright:",
    "pyre-ignore",
    "pyre-fixme",
    "typed: (true|false|strict|strong|ignore)",
    "@flow",
    "FlowFixMe",
    "FlowIgnore",
    "@psalm-\\w+",
    "@phpstan-\\w+",
    "phpstan-ignore\\S*",
    "@ts-\\w+",
    "steep:ignore",
    // Linters.
    "ruff:",
    "flake8:",
    "pycodestyle:",
    "nolint\\S*",
    "NOLINT(NEXTLINE|BEGIN|END)?",
    "lint:(file-)?ignore",
    "revive:\\S+",
    "exhaustive:ignore",
    "staticcheck",
    "golangci-lint",
    "oxlint-\\S+",
    "deno-lint-ignore\\S*",
    "stylelint-\\S+",
    "jshint",
    "jslint",
    "jscpd:\\S+",
    "markdownlint-\\S+",
    "shellcheck",
    "yamllint",
    "luacheck:",
    "swiftlint:\\S+",
    "ktlint-\\S+",
    "detekt:\\S*",
    "phpcs:\\S+",
    "CHECKSTYLE[:.]\\S+",
    "NOPMD",
    "noinspection",
    "ReSharper (disable|restore)\\S*",
    "cppcheck-suppress\\S*",
    "clang-tidy",
    "standard:\\S+",
    "reek:\\S+",
    "editorconfig-checker-\\S+",
    "codespell:\\S+",
    "cspell:\\S+",
    "spell-?checker:\\S+",
    "NOSONAR",
    // Formatters.
    "isort:",
    "yapf:",
    "autopep8:",
    "rustfmt::skip",
    "clang-format (on|off)",
    "@formatter:(on|off)",
    "spotless:(on|off)",
    "deno-fmt-ignore\\S*",
    "dprint-ignore\\S*",
    "stylua: ignore",
    "swiftformat:\\S+",
    // Coverage.
    "pragma:",
    "v8 ignore",
    "LCOV_EXCL\\w*",
    "GCOVR_EXCL\\w*",
    ":nocov:",
    "@codeCoverageIgnore\\w*",
    // Security scanners.
    "nosec",
    "nosemgrep",
    "lgtm",
    "checkov:skip",
    "tfsec:ignore",
    "trivy:ignore",
    "kics-scan",
    "gitleaks:allow",
    "pragma: allowlist",
    // Bundlers, test runners, runtimes, language servers.
    "@vite-ignore",
    "webpack(Ignore|ChunkName|Mode|Prefetch|Preload|Include|Exclude)",
    "@jsx(ImportSource|Frag|Runtime)?",
    "[#@]__PURE__",
    "@vitest-environment",
    "@jest-environment",
    "sourceMappingURL=",
    "language=",
    "frozen_string_literal:",
    "@refresh",
    "---@\\w+",
  ]
  const TOOL_DIRECTIVE = new RegExp(`^[#@$]?(${TOOL_DIRECTIVES.join("|")})(?:(?<=[:=])|(?![\\w-]))`, "i")

  /**
   * True for comments addressed to tools (lint, type checker, coverage) and for markers such as TODO or a license line.
   *
   * @example
   * CommentHeuristics.isDirective("eslint-disable-next-line") // true
   */
  export function isDirective(text: string): boolean {
    return DIRECTIVE.test(text) || TOOL_DIRECTIVE.test(text)
  }

  const words = (text: string) => text.split(/\s+/).filter(Boolean)

  /**
   * Heuristic 2 on one comment's text (prefix already stripped).
   *
   * @example
   * CommentHeuristics.obvious("Initialize the counter") // true
   */
  export function obvious(text: string): boolean {
    const first = text
      .split(/(?<=[.!?])\s/)[0]
      .replace(/[.:;!]+$/, "")
      .trim()
    if (!first || isDirective(first)) return false
    if (words(first).length > MAX_WORDS || text.length > 120) return false
    return PATTERNS.some((p) => p.test(first))
  }

  /**
   * Imperative verbs that open a narration of the statement below ("Get …", "Set up …", "Mock …", "Fall back …"):
   * operations that code spells out itself.
   */
  export const NARRATION_VERBS = new Set(
    (
      "get set create initialize initialise init define declare make build construct instantiate generate compute " +
      "calculate count increment decrement add append extend concat push insert prepend remove delete drop clear " +
      "reset clean update modify change replace rename convert transform parse format serialize deserialize encode " +
      "decode normalize load read write save store persist fetch retrieve request send emit dispatch publish call " +
      "invoke run execute start stop open close print log display show render return check verify validate ensure " +
      "assert compare find search filter map sort group merge split join extract collect copy move mock simulate " +
      "stub spy wait sleep register setup teardown tear prepare configure apply assign import export use switch fall " +
      "loop iterate handle process record track determine capture skip shutdown raise rebuild prune duplicate keep " +
      "pass test reload restart refresh resolve trim wrap unwrap toggle disable attach detach inject reverse flatten " +
      "dedupe truncate escape unescape encrypt decrypt compress decompress download upload install uninstall mount " +
      "unmount bind subscribe unsubscribe notify schedule cancel abort retry clone allocate acquire unlock commit " +
      "rollback flush kill terminate"
    ).split(" "),
  )

  /** A narration verb, or one of them done again ("reopen", "recompute", "reconnect"). */
  function narrationVerb(w: string): boolean {
    return NARRATION_VERBS.has(w) || (w.length >= 5 && w.startsWith("re") && NARRATION_VERBS.has(w.slice(2)))
  }

  /**
   * Words after the first that mark an explanation, a condition on use, or an instruction: never narration. An example
   * is one too ("e.g.", "such as", "like" before a quoted or numeric literal: "Handle dotted ids like "5.1"").
   */
  const EXPLAINS =
    /\b(because|since|so that|otherwise|regardless|anyways?|either way|instead|unless|avoid\w*|prevent\w*|workaround|hack|why|e\.g|i\.e|see|in case|ideally|but|however|although|though|due to|compat\w*|legacy|bug|issue|must|should|never|always|only|can't|cannot|won't|don't|do not|assum\w*|expects|(note|important|warning)(?=\s*[:!,(-])|careful|race|deadlock|(un)?safe|easier|harder|simpler|faster|slower|cheaper|safer|better|worse|allows?|enables?|lets|such as)\b|\blike\s+["'`\d]|\([^)]*\b(is|are|was|were|means?)\b/i

  /** Explanation words, outside hyphenated compounds ("read-only" and "non-blocking" name a kind, not a reason). */
  function explains(text: string): boolean {
    return EXPLAINS.test(text.replace(/\w+(-\w+)+/g, " "))
  }

  /** Comment words that carry no content of their own when comparing a comment with code. */
  const STOP = new Set(
    (
      "the a an to of and or for with in on at is it its this that by from into as be we our then all any each " +
      "every some new now just also here there up out using via yet already when if not no do does did has have " +
      "had was were are will would can could may might so than too very more most such same other own which who " +
      "what where how s t"
    ).split(" "),
  )

  /**
   * Verbs of comments and the words code uses for the same operation (a comment says "Display", the code `print`s).
   * No word that most code lines hold (`if`, `is`, `for`, `to`, `set`, `time`): a family must point at the operation.
   */
  const FAMILIES = [
    "display show print output log echo puts write render emit",
    "find search glob rglob locate lookup query match",
    "get fetch retrieve read load obtain request",
    "create new make build init initialize construct instantiate spawn",
    "remove delete del drop unlink rm pop clear discard clean cleanup",
    "add append push insert concat extend",
    "check assert expect verify validate ensure",
    "loop iterate foreach each map",
    "start begin open launch run exec execute",
    "stop end close kill terminate shutdown exit",
    "save write store persist dump",
    "parse decode loads unmarshal deserialize",
    "convert cast format transform",
    "compute calculate sum count len total",
    "wait sleep await",
    "mock patch stub spy fake",
    "record track measure",
    "return yield",
    "skip continue pass next",
    "call invoke",
  ].map((f) => f.split(" "))

  function family(verb: string): string[] {
    return FAMILIES.filter((f) => f.includes(verb)).flat()
  }

  /** Abbreviations code uses for words comments spell out. */
  const ABBREVIATIONS: Record<string, string> = Object.fromEntries(
    (
      "args:arguments arg:argument argv:arguments cfg:config conf:config msg:message msgs:messages err:error " +
      "ctx:context env:environment dir:directory num:number str:string val:value idx:index btn:button req:request " +
      "res:response resp:response db:database fn:function func:function param:parameter params:parameters " +
      "repo:repository pkg:package info:information doc:document tmp:temporary len:length max:maximum min:minimum " +
      "src:source dst:destination dest:destination cmd:command opts:options opt:option"
    )
      .split(" ")
      .map((pair) => pair.split(":")),
  )

  /**
   * Two words are the same for comparing comments with code: equal, one a prefix (≥ 4 letters) of the other, or the
   * code's abbreviation of the comment's word.
   */
  function same(a: string, b: string) {
    if (a === b) return true
    if (ABBREVIATIONS[b] && same(a, ABBREVIATIONS[b])) return true
    const [short, long] = a.length <= b.length ? [a, b] : [b, a]
    // A plural of a short word ("vars" and `var`, "ids" and `id`).
    if (short.length >= 2 && (long === short + "s" || long === short + "es")) return true
    return short.length >= 4 && long.startsWith(short)
  }

  /**
   * How many of the comment's content words occur in the code (compared by `same`; two comment words written as one
   * in the code, "key map" and `keymap`, count once).
   *
   * @example
   * CommentHeuristics.overlap("Parse CLI arguments", ["args = parser.parse_args()"]) // { shared: 2, total: 3 }
   */
  export function overlap(comment: string, code: string[]): { shared: number; total: number; byFamily?: boolean } {
    const raw = normalize(comment).split(" ").filter(Boolean)
    const codeWords = new Set(code.flatMap((line) => normalize(line).split(" ")).filter((w) => w.length >= 2))
    const list = [...codeWords]
    const words = [...new Set(raw.filter((w) => !STOP.has(w) && w.length >= 2))]
    const shared = new Set<string>()
    for (const w of words) if (list.some((c) => same(w, c))) shared.add(w)
    // A narration verb (the first word, or one joined to it by "and") matches the code's word for its operation.
    const plain = comment.toLowerCase().split(/[^a-z]+/)
    const verbs = [raw[0], plain[1] === "and" ? plain[2] : undefined]
    let byFamily = false
    for (const v of verbs)
      if (v && NARRATION_VERBS.has(v) && !shared.has(v) && family(v).some((f) => codeWords.has(f))) {
        shared.add(v)
        byFamily = true
      }
    for (let i = 0; i + 1 < raw.length; i++) {
      const joined = raw[i] + raw[i + 1]
      if (!shared.has(raw[i]) && !shared.has(raw[i + 1]) && codeWords.has(joined)) shared.add(raw[i])
    }
    return byFamily
      ? { shared: shared.size, total: words.length, byFamily }
      : { shared: shared.size, total: words.length }
  }

  /**
   * Whether a short comment narrates the code it sits on (`code`: the lines right after it, or its own line for a
   * trailing comment):
   *
   * - `"plain"`: an obvious pattern (`obvious`), or an imperative narration verb ("Get", "Use", "Fall back") whose
   *   content words the code repeats (two of them, or at least half); a short test comment stating the expectation
   *   of the assertion below it ("Should be trimmed" over `assertEqual(…)`; up to 12 words when it names two of the
   *   assertion's words and sets no condition); a `Label: detail` whose label is a
   *   narration verb phrase and most of whose words the code repeats. A step number ("2.") or a sequencing word
   *   ("Also", "Then") before the imperative is passed over, and so is "Try to" ("Try to load existing", "Try
   *   importing …": the attempt is the code's `try`).
   *   A phrase without a verb whose four or more content words the code nearly all repeats ("Path to the sample
   *   code base" over `sample_code_base = Path(…)`), and "If …, &lt;plain narration&gt;" are plain too.
   * - `"likely"`: a narration verb with one content word in the code (not only the code's word for the verb: "Verify
   *   login worked" over an `assert` is not), or a phrase of three content words without a verb that the code nearly all repeats (two are a heading:
   *   "String delimiter"); a check verb right over an assertion that states no outcome ("Check for header").
   *
   * A comment of 13 to 20 words narrates only as an imperative six or more of whose content words (and at least
   * half) the code repeats. Never narration: more than 20 words, a question, a link, any other `Label: text` note, or explanation words
   * after the first ("because", "so that", "only", "should", "don't", "e.g.", …; not inside a hyphenated compound
   * such as "read-only"), a second clause after a semicolon or a dash, a parenthesis adding three content words the
   * code does not hold, or a check over an assertion that asserts an absence ("Verify server didn't authenticate us").
   *
   * @example
   * CommentHeuristics.narration("Parse CLI arguments", ["args = parser.parse_args()"]) // "plain"
   * CommentHeuristics.narration("Parse lazily: the config is large", ["args = parser.parse_args()"]) // undefined
   */
  export function narration(text: string, code: string[]): "plain" | "likely" | undefined {
    // A step number ("1.", "2)", "Step 3:") says where the step is, not what it does: the rest is judged, as is
    // the imperative after a sequencing word ("Also remove …").
    const t = attempt(text.trim().replace(STEP, "").replace(SEQUENCE, ""))
    const all = words(t)
    if (!all.length || all.length > LONG || t.length > 160 || isDirective(t)) return undefined
    if (/\?|https?:/.test(t)) return undefined
    // A cross-reference points elsewhere, whatever words of the code its target repeats.
    if (crossReference(text)) return undefined
    // Beside or above a regular expression, a comment says what the pattern matches: what an opaque literal means.
    if (code.length && patternLiteral(code[0])) return undefined
    // A numbered test case ("Test 9: Verify main branch warning") names the case that follows, and so does a phrase in
    // title case ("Read Tool Stories", "Windows PowerShell"): headings.
    if (CASE.test(text.trim()) || TITLE.test(t)) return undefined
    // A second clause after a semicolon or a dash adds to the step ("Load .env.local locally; on Railway vars are
    // already injected", "Download with fetch() - Bun handles redirects automatically").
    if (/(;|\s[-–—])\s+\S+\s+\S/.test(t)) return undefined
    // So does a parenthesis with three or more content words the code does not hold ("Merge built-in MCP servers
    // (auto-enabled by API key, respecting disabled_mcps)").
    const aside = /\(([^)]*)\)/.exec(t)?.[1]
    // A parenthesis that is a reference ("(gt-8tmz.4)", "(#1088)", "(JIRA-12)") or ends a list of examples with "etc"
    // ("Resolve formula (inheritance, etc)") points past the code: a reference or an example, not narration.
    if (aside !== undefined && (REFERENCE.test(aside.trim()) || /\betc\.?$/i.test(aside.trim()))) return undefined
    if (aside) {
      const { shared, total } = overlap(aside, code)
      if (total - shared >= ASIDE) return undefined
    }
    // A longer sentence narrates only as an imperative most of whose content words (six or more) the code repeats.
    if (all.length > 12 || t.length > 120) {
      if (!narrationVerb(all[0].toLowerCase()) || explains(all.slice(1).join(" "))) return undefined
      const { shared, total } = overlap(t, code)
      return shared >= 6 && shared * 2 >= total ? "plain" : undefined
    }
    if (expectation(t, code)) return "plain"
    const label = /^([^:]+):\s+\S/.exec(t)?.[1]
    if (label) return labelled(t, label, code)
    if (explains(all.slice(1).join(" "))) return undefined
    // "Require …" narrates loading a module (the PRD's `require`) only over code that loads one; over other code it
    // states a requirement ("Require modern MSVC with conformant preprocessor" over `#if defined(_MSC_VER) …` /
    // `#error …`, fmt c29b64dde7, tester's RW3), judged as any other imperative below.
    const requirement = /^require\b/i.test(t) && code.length > 0 && !code.some((c) => LOADS.test(c))
    if (obvious(t) && !requirement) return "plain"
    // "If …, <main clause>" and "Otherwise <main clause>": the main clause is what may narrate.
    const main = /^(if|when|else|otherwise)\b[^,]*,\s*(.+)$/i.exec(t)?.[2]
    if (main && main !== t) {
      const inner = narration(main.replace(/^(just|then|simply)\s+/i, ""), code)
      return inner === "plain" ? "plain" : undefined
    }
    // An imperative opens a phrase of two words or more ("Import" alone is a heading; "start is …" a subject).
    const verb =
      all.length >= 2 &&
      /^[a-z]+$/i.test(all[0]) &&
      narrationVerb(all[0].toLowerCase()) &&
      !/^(is|are|was|were|has|have|had|can|will|would|should|must|may|might|does|do)$/i.test(all[1])
    const { shared, total, byFamily } = overlap(t, code)
    const unbracketed = all
      .slice(1)
      .join(" ")
      .replace(/\([^)]*\)/g, " ")
    const checks = verb && CHECKING.test(all[0]) && code.length > 0 && ASSERTION.test(normalize(code[0]))
    // A check stated over an assertion (`checks`) that asserts an absence ("Verify server didn't authenticate us"
    // over `assert r.status_code == 401`) says what the assertion means, not what it does.
    if (checks && /\b(\w+n't|not|never|no)\b/i.test(unbracketed)) return undefined
    if (verb && (shared >= 2 || (shared >= 1 && shared * 2 >= total))) return "plain"
    // Only the verb's family in the code ("Verify …" over any `assert`) is too little to call it narration.
    if (verb && shared >= 1 && !(byFamily && shared === 1)) return "likely"
    // "Check for header", "Verify …" right over an assertion names what the assertion checks; one that states an
    // outcome ("Verify server succeeded in authenticating") says what the assertion means.
    if (checks && !OUTCOME.test(unbracketed)) return "likely"
    // A lone identifier ("ZodMiniStringFormat") names what follows: a heading, however many words it splits into.
    if (!verb && all.length >= 2 && shared >= 4 && shared * 4 >= total * 3) return "plain"
    if (!verb && all.length >= 2 && total >= 3 && shared * 4 >= total * 3) return "likely"
    return undefined
  }

  /**
   * "Try to load …", "Try loading …": the attempt is the code's `try`; the imperative after it is what may narrate.
   * Returns the text from that imperative on (the gerund as its base form), or the text as it was.
   */
  function attempt(t: string): string {
    const m = /^(?:try|attempt)\s+(?:to\s+)?([a-z]+)(\b.*)$/i.exec(t)
    if (!m) return t
    const w = m[1].toLowerCase()
    const base = w.endsWith("ing")
      ? [w.slice(0, -3), w.slice(0, -3) + "e", w.slice(0, -4)].find((b) => b.length >= 2 && NARRATION_VERBS.has(b))
      : NARRATION_VERBS.has(w)
        ? w
        : undefined
    return base ? base + m[2] : t
  }

  /** A time clause after the step: "… before page loads", "… when the generated code references it". */
  const TIME = /\b(when|whenever|before|after|until|while|once)\s+(\S[^,;.!?(]*)/i
  /**
   * A purpose with its own subject after the step's object: "… for add_turn to find", "… so hooks can modify them"
   * (not "Wait for the server to start", where "for" belongs to the verb).
   */
  const PURPOSE = /(^|\s)(for\s+\S+(\s+\S+)?\s+to|so\s+\S+(\s+\S+)?\s+(can|could|will|would))\s+[a-z]+/i
  /**
   * How or how often a step runs: "Build once", "… lazily", "… atomically", with the stem the code would use to say
   * the same (`lazy`, `atomic`, `parallel`).
   */
  const MANNER: Record<string, string> = {
    once: "once",
    lazily: "lazy",
    eagerly: "eager",
    atomically: "atomic",
    concurrently: "concurren",
    parallel: "parallel",
    background: "background",
    asynchronously: "async",
    synchronously: "sync",
    idempotently: "idempot",
  }
  /** Verbs that state what a test expects (not "check", which as often opens a condition in code). */
  const VERIFYING = /^(verify|confirm|assert)$/i
  /** An absence or a negated outcome. */
  const ABSENCE = /\b(\w+n't|not|never|no|none|nothing|without)\b/i

  /**
   * Whether a step comment says more than the code it sits on: when or how the step is meant to run, or why, in words
   * the code does not hold. A time clause two or more of whose content words the code lacks ("Set theme in
   * localStorage before page loads"; not "Apply filter before sampling"), a manner the code does not name ("Update
   * iteration in state file atomically" over a temporary file and a rename, "Build once" before a loop), a purpose
   * with its own subject ("Set up the thread context for add_turn to find"), or a verification of an absence
   * ("Verify fetch was NOT called": what a test expects not to happen). Such a step is not named; it still shows a
   * change commenting step by step (`CommentCheck.judge`).
   *
   * @example
   * CommentHeuristics.adds("Update the state file atomically", ["mv \"$tmp\" \"$state\""]) // true
   * CommentHeuristics.adds("Apply filter before sampling", ["tests = filter_dataset(tests)"]) // false
   */
  export function adds(text: string, code: string[]): boolean {
    const all = words(attempt(text.trim().replace(STEP, "").replace(SEQUENCE, "")))
    if (all.length < 2) return false
    const rest = all.slice(1).join(" ")
    if (VERIFYING.test(all[0]) && ABSENCE.test(rest)) return true
    if (PURPOSE.test(all.slice(2).join(" "))) return true
    const clause = TIME.exec(rest)?.[2]
    if (clause) {
      const { shared, total } = overlap(clause, code)
      if (total - shared >= 2) return true
    }
    const codeWords = code.flatMap((line) => normalize(line).split(" "))
    for (const w of rest.toLowerCase().split(/[^a-z]+/)) {
      const stem = MANNER[w]
      if (stem && !codeWords.some((c) => c.startsWith(stem))) return true
    }
    return false
  }

  /** Verbs of a check a test states. */
  const CHECKING = /^(check|verify|validate|ensure|assert|confirm|test)$/i

  /** A finite verb in a clause: a past tense or participle, a negation, a form of "be", "do" or "have". */
  const OUTCOME = /\b(\w+ed|\w+n't|is|are|was|were|be|been|did|does|do|has|have|had)\b/i

  /**
   * Ticket or issue references, one or more: "#1088", "gt-8tmz.4", "bd-20j", "JIRA-123", "GH-12" (after the dash a
   * lower-case id mixes letters and digits, so "utf-8" or "sha-256" is not one).
   */
  const REFERENCE =
    /^(#\d+|[a-z]{2,}-(?=[a-z0-9]*[a-z])(?=[a-z0-9]*\d)[a-z0-9]+(\.\d+)*|[A-Z][A-Z0-9]+-\d+)(\s*[,;]\s*(#\d+|[a-z]{2,}-(?=[a-z0-9]*[a-z])(?=[a-z0-9]*\d)[a-z0-9]+(\.\d+)*|[A-Z][A-Z0-9]+-\d+))*$/

  /**
   * A comment that opens as a cross-reference: "See [Constraint::null_matching].", "See also `parse`", "@see Foo#bar",
   * "cf. RFC 9110", "Refer to …", "{@link Foo}". "See if …" / "See whether …" are not (a step that checks).
   *
   * @example
   * CommentHeuristics.crossReference("See [Constraint::null_matching].") // true
   * CommentHeuristics.crossReference("See if the file exists") // false
   */
  export function crossReference(text: string): boolean {
    return /^(@see\b|see\b(?!\s+(if|whether|how|what|that|when|why)\b)|cf\.?\s|refer\s+to\b|\{@link\b)/i.test(
      text.trim(),
    )
  }

  /** A line of code that loads a module: `require(…)`, `import`, `from … import`, `#include`, `use`, `load`. */
  const LOADS = /\b(require|import|include|use|using|from|load|source|dofile)\b|#\s*include/

  /** A numbered test case opening a comment: "Test 9:", "Case 2.", "Scenario 3 -". */
  const CASE = /^(test|case|scenario)\s+\d+\s*[:.)\-–—]/i

  /** Two to five words, each capitalised but for short function words: a heading in title case. */
  const TITLE = /^[A-Z][a-zA-Z]*(\s+([A-Z][a-zA-Z]*|a|an|the|of|to|for|and|or|in|on|with)){1,4}$/

  /** Content words a parenthesis adds beyond the code that make a comment more than narration. */
  const ASIDE = 3

  /** Words of the longest comment judged as narration. */
  const LONG = 20

  /** A sequencing word before an imperative ("Also remove …", "Then parse …", "First, load …"). */
  const SEQUENCE = /^(also|then|next|finally|first|lastly)\b,?\s+(?=[a-z]+\s)/i

  /** A step number opening a comment: "1.", "2)", "(3)", "Step 4:", "a)". */
  const STEP = /^(step\s+\d+[.:)]?|\(?\d+[.)]|[a-z]\))\s+(?=\S)/i

  /** Words of the longest test expectation judged (`expectation`). */
  const LONG_EXPECTATION = 12
  /** A condition or a time in an expectation: what the assertion alone does not say. */
  const CONDITION = /\b(after|before|when|once|until|while|if)\b/i

  /**
   * An expectation a test asserts: "Should be modified", "It should not throw", "Must fail", "Expect an error", with
   * a subject of up to two words ("Result should be joined", "The `repr` must not call it").
   */
  const EXPECTS =
    /^((it|this|that|they|we|(the |a |an )?[\w`.-]+( [\w`.-]+)?)\s+)?(should|must|shall|expects?|needs? to|will)\b/i
  /** The code is an assertion: `assert …`, `self.assertEqual(…)`, `expect(…)`, `require.Equal(…)`, `t.Fatal(…)`. */
  const ASSERTION =
    /^(self |this )?(assert|expect|should|require|must|t (error|fatal|fail)|pytest raises|check|(await )?screen (get|find)s? )/

  /**
   * A short comment stating what the assertion right after it checks ("Should BE modified" over
   * `self.assertEqual(commit.author.name, …)`): the assertion says it already. Explanation words other than the
   * modal verb (`because`, `instead`, `only`, …) make it a reason, not a restatement.
   */
  function expectation(t: string, code: string[]): boolean {
    const all = words(t)
    if (all.length > LONG_EXPECTATION || !code.length || !EXPECTS.test(t)) return false
    if (!ASSERTION.test(normalize(code[0]))) return false
    const rest = t.replace(EXPECTS, "")
    if (EXPLAINS.test(rest)) return false
    // A longer one restates the assertion when it names two of the assertion's words and sets no condition ("It
    // should NOT be our internal "Authentication required" message"); "… after exhausting all retries" tells more.
    return all.length <= MAX_WORDS || (overlap(rest, code).shared >= 2 && !CONDITION.test(rest))
  }

  /**
   * A `Label: detail` comment narrates when its label is a narration verb phrase ("Mock coder args: co-authored-by
   * enabled, author modification disabled") and the code repeats most of its words (three or more, and at least
   * 60%). Other labels ("API rule: …", "Windows: use …", "Note: …") are notes, never narration.
   */
  function labelled(t: string, label: string, code: string[]): "plain" | undefined {
    const head = words(label)
    if (head.length < 2 || !/^[a-z]+$/i.test(head[0]) || !narrationVerb(head[0].toLowerCase())) return undefined
    if (EXPLAINS.test(words(t).slice(1).join(" "))) return undefined
    const { shared, total } = overlap(t, code)
    return shared >= 3 && shared * 10 >= total * 6 ? "plain" : undefined
  }

  const FILLER = new Set(
    "the a an to of and for with in on is it its this that by from into as be we our then".split(" "),
  )

  /**
   * Lower-case words of code or prose: camelCase and snake_case split, punctuation and filler dropped.
   *
   * @example
   * CommentHeuristics.normalize("return this.userName") // "return user name"
   */
  export function normalize(text: string): string {
    // "HTMLParser" → "HTML Parser": a space before the last capital of a run that opens a word, found by a lookahead
    // (`([A-Z]+)([A-Z][a-z])` does the same and backtracks quadratically on a long run of capitals).
    return text
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/([A-Z])(?=[A-Z][a-z])/g, "$1 ")
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w && !FILLER.has(w))
      .join(" ")
  }

  /**
   * True when a line of code holds a regular expression, read by its escapes and groups (`\s`, `\d`, `\w`, `\b`, their
   * capitals, `(?:`, lookarounds, a negated class): a comment beside it that reads like the code ("git push origin
   * main" beside `/git\s+push\s+origin\s+main/`) is an example of what it matches, not narration.
   *
   * @example
   * CommentHeuristics.patternLiteral("/git\\s+push\\s+origin\\s+main/,") // true
   * CommentHeuristics.patternLiteral("run(\"git push origin main\")") // false
   */
  export function patternLiteral(code: string): boolean {
    return /\\[sdwbSDWB]|\(\?(?:[:=!]|<[=!])|\[\^[^\]]+\]/.test(code)
  }

  /**
   * Heuristic 3: the comment is within 30% (Levenshtein) of the code line it precedes.
   *
   * @example
   * CommentHeuristics.restates("return the total", "return total") // true
   */
  export function restates(comment: string, code: string): boolean {
    if (crossReference(comment)) return false
    // A numbered test case is a heading even when the test prints the same words (`echo "Test 8: …"`).
    if (CASE.test(comment.trim())) return false
    const c = normalize(comment)
    const k = normalize(code)
    if (c.length < 4 || !k) return false
    return distance(c, k) < 0.3 * c.length
  }

  /** Keywords that open a statement in common languages, when followed by code rather than prose. */
  const STATEMENT =
    /^(if|elif|else if|while|for|foreach|switch|match|case|return|yield|await|throw|raise|assert|import|from \S+ import|export|const|let|var|val|def|fn|func|function|class|struct|impl|pub|use|package|try|catch|except|finally|with|defer|go|print|puts|echo|require|include|local|end)\b/
  /** Comment words that make a line read as prose even when it has code-like punctuation. */
  const PROSE = /\b(the|an|is|are|was|were|this|that|which|because|when|should|would|will|we|you|it's|don't|doesn't)\b/i

  /**
   * One line of a comment is code: it ends like a statement or opens a block (`;` `{` `}` `(` `,` after code, `end`,
   * `do |x|`, `:` after a Python header), is a call or an assignment, or starts with a statement keyword followed by
   * code (`if (`, `return x`, `for x in y:`, `import os`, `#include <x>`, `def f(`), or is a lone string literal. A
   * line with prose words (`the`, `is`, `should`, …) needs one of the stronger signs (`;`, `{`, `}` at its end, or
   * an assignment or call shape).
   *
   * @example
   * CommentHeuristics.codeLine("x = compute(y)") // true
   * CommentHeuristics.codeLine("Compute y and keep it in x.") // false
   */
  export function codeLine(line: string): boolean {
    const t = line.trim()
    if (!t || /^(https?:|www\.)/.test(t)) return false
    if (/^#\s*(include|define|ifn?def|endif|if|else|pragma|cgo)\b/.test(t)) return true
    // Statement ends and block delimiters.
    if (/(;|\{|\}|\{\s*\|[\w, ]*\|)$/.test(t) && !proseBrace(t)) return true
    // Closing brackets, then `;` `,` `)`: `[)\]}]+[;,)]*` without the overlap on `)` that backtracks quadratically.
    if (/^[)\]}]+(?:[;,][;,)]*)?$/.test(t) || /^(end|do|else|fi|done|esac|endif|})$/.test(t)) return true
    if (/\sdo(\s*\|[^|]*\|)?$/.test(t) && !PROSE.test(t)) return true
    // Calls and assignments: `a.b(c)`, `x = y`, `x := y`, `x += 1`, `await f()`, `@decorator(…)`, `$x = 1`.
    if (/^(await |new |@)?[\w$.]+(!|\?)?\(.*\)[;,]?$/.test(t) && !/\s\w+\s\w+\s\w+/.test(t.split("(")[0])) return true
    if (/^[\w$.[\]'"]+\s*(=|:=|\+=|-=|\*=|\/=|\|\|=|\?\?=|<-|=>)\s*\S/.test(t) && !/^\w+ = \w+ \w+ \w+/.test(t))
      return true
    if (/^(if|while|for|elif|else|def|class|with|try|except)\b.*:$/.test(t)) return true
    if (/^(['"`]).*\1[,;]?$/.test(t) && t.length > 2) return true
    const statement = STATEMENT.exec(t)
    if (statement && !PROSE.test(t)) {
      const rest = t.slice(statement[0].length)
      const loose = !/^(if|elif|else if|while|for|foreach|switch|match|case|try|catch|except|finally|with|end)$/.test(
        statement[0],
      )
      // One code-like character, then any non-space ones (`[…]+[^\s]*` would match the same and backtrack
      // quadratically on a long word).
      if (loose && /^\s*($|[\w$"'`<(\[{.*&!-][^\s]*($|\s*[=({[<:;.,+\-*/|&!?]))/.test(rest)) return true
      if (/[(){}[\];=<>]/.test(rest)) return true
    }
    return false
  }

  /**
   * A sentence that ends with a period before a closing brace ("Close the stream. }"): three words, then
   * `.*\.\s*\}$`. Tested in two steps, as the single pattern backtracks quadratically on a long third word.
   */
  function proseBrace(t: string): boolean {
    const head = /^[A-Z][a-z]+ [a-z]+ [a-z]+/.exec(t)
    return !!head && /^.*\.\s*\}$/.test(t.slice(head[0].length))
  }

  /**
   * The comment is commented-out code: at least half of its non-blank lines are code lines (`codeLine`).
   *
   * @example
   * CommentHeuristics.looksLikeCode("const x = compute(y);") // true
   * CommentHeuristics.looksLikeCode(["get '/' do", '  "Hello World!"', "end"]) // true
   */
  export function looksLikeCode(text: string | string[]): boolean {
    const lines = (typeof text === "string" ? [text] : text).map((l) => l.trim()).filter(Boolean)
    if (!lines.length) return false
    return lines.filter(codeLine).length * 2 >= lines.length
  }

  export type DensityInput = { kinds: CommentSyntax.LineKind[]; added: boolean[]; annotations: Set<number> }

  /**
   * Heuristic 1: `{ comments, lines, ratio }`: annotation lines among added non-blank lines.
   *
   * @example
   * CommentHeuristics.density({ kinds: ["comment", "code"], added: [true, true], annotations: new Set([0]) }).ratio // 0.5
   */
  export function density({ kinds, added, annotations }: DensityInput) {
    let comments = 0
    let lines = 0
    for (let i = 0; i < kinds.length; i++) {
      if (!added[i] || kinds[i] === "blank") continue
      lines++
      if (annotations.has(i)) comments++
    }
    return { comments, lines, ratio: lines ? comments / lines : 0 }
  }
}
