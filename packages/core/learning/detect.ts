/**
 * Rule-based detection of what a user message teaches: a correction of the agent ("no, use pnpm instead of npm"), a
 * decision ("let's go with Postgres for the queue", or a fact the user asks to keep: "Remember: all dates are UTC in the
 * API.") or a standing preference ("always add a test when you fix a bug").
 * No model call. Questions, acknowledgements, status reports ("nope, still failing") and one-off task instructions
 * ("use the staging database for this run") teach nothing and are left alone, and so does a directive scoped to the
 * moment or the task at hand ("Looks good. Don't push yet.", "Don't change anything else.", "leave it for now"): it
 * is an instruction for this turn, not a standing rule. Only the user's own words are examined:
 * pasted or quoted material (tool output, stack traces, code and quoted blocks; `LearningPasted.ownWords`) is taken
 * out first, and code spans and quoted tool messages are not read for cues.
 *
 * The text kept for a learning is the message's statement without its opening judgement ("No —", "that's wrong,",
 * "Hmm, that's not right."): what should be done, not that something was wrong. A message that is only a judgement
 * ("that's wrong") is recognised as a correction but yields no text to remember.
 *
 * @example
 * LearningDetect.detect("no, use pnpm instead of npm") // { kind: "correction", text: "Use pnpm instead of npm", … }
 * LearningDetect.detect("No worries, take your time.") // undefined
 */
import { LearningPasted } from "./pasted"

export namespace LearningDetect {
  export type Kind = "correction" | "decision" | "preference"

  export type Found = {
    kind: Kind
    /** The statement to remember (opening judgement removed), or "" when the message is only a judgement. */
    text: string
    /** The rule that fired, for tests and the debug log. */
    rule: string
  }

  /** Longest statement kept, in characters (longer ones are cut at a word boundary). */
  export const MAX_TEXT = 240
  /** Own words longer than this (after pasted material is taken out) are not examined (files, long specifications). */
  export const MAX_MESSAGE = 2_000
  /** Messages longer than this are not examined at all (the paste is not even looked through). */
  export const MAX_RAW = 100_000

  // ---- vocabulary ----------------------------------------------------------------------------------------------

  /** Verbs a directive starts with ("use X", "put it in Y"), as they appear in corrections and preferences. */
  const IMPERATIVE =
    "use|put|keep|call|move|add|write|switch|read|make|change|leave|stop|rename|remove|revert|redo|fix|wrap|go|run|" +
    "import|store|return|throw|rethrow|batch|commit|open|place|set|pass|send|log|name|target|avoid|prefer|ask|show|" +
    "check|include|drop|delete|follow|spell|create|start|do|don't|dont|never|always|only"

  const NEGATION = /^(?:(?:no+|nope|nah|ugh|hmm+|uh|erm|well|wait)\b[\s,.!:;—–-]*)+/i
  /** After an opening "no": replies that are not corrections ("no worries", "no, I haven't run it", "nope, still failing"). */
  const NOT_AFTER_NO =
    /^(?:worries|problem|prob|idea|rush|thanks|thank|need|way|clue|luck|i\s+(?:haven'?t|didn'?t|don'?t\s+(?:know|think)|wasn'?t|am\s+not)|it'?s?\s+still|still|not\s+yet|never\s*mind|it\s+(?:still|doesn'?t|didn'?t)|that\s+(?:works|helped|was\s+it))\b/i

  /** A judgement of the agent's work that a correction opens with. */
  const JUDGEMENT = new RegExp(
    [
      String.raw`^(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+(?:right|correct|it|what|how|quite)|a\s+mistake|backwards|the\s+(?:wrong|old)\b)`,
      String.raw`^(?:that|this)\s+(?:isn'?t|is\s+not|wasn'?t)\s+(?:right|correct|how|what)`,
      String.raw`^(?:not\s+(?:quite|like\s+that|that\b|what\s+i|right)|wrong\b|incorrect\b)`,
      String.raw`^(?:you(?:'ve|\s+have)?\s+(?:misread|misunderstood|forgot|got\s+it\s+wrong))`,
    ].join("|"),
    "i",
  )

  /**
   * Words that scope a directive to the moment or to the task at hand: "don't push yet", "leave it for now", "don't
   * change anything else", "not today", "don't merge it until I review it". A sentence holding one is an instruction for
   * this turn; corrections and preferences are not read from it, nor is it kept in what is remembered. (A decision
   * "for now" is still the project's decision: "the public API stays REST, no GraphQL for now".)
   */
  const SCOPED = new RegExp(
    [
      String.raw`\byet\b(?!\s+(?:another|again|more|other)\b)`,
      String.raw`\bfor\s+(?:now|today|the\s+(?:moment|time\s+being)|this\s+(?:one|run|task|time|step|change|commit|pr|ticket|session|branch|file))\b`,
      String.raw`\b(?:right|just)\s+now\b`,
      String.raw`\bat\s+the\s+moment\b`,
      String.raw`\bthis\s+time\b`,
      String.raw`\b(?:today|tonight|tomorrow)\b`,
      String.raw`\b(?:anything|nothing)\s+else\b`,
      String.raw`\b(?:until|till)\s+(?:i|we)(?:'ve|\s+have)?\s+(?:say|said|tell|told|review|reviewed|check|checked|look|looked|approve|approved|confirm|confirmed|decide|decided|merge|merged|get\s+back|finish|finished|am|are)\b`,
    ].join("|"),
    "i",
  )

  /** A sentence that only acknowledges or praises ("Looks good.", "Thanks, that works!", "Great."). */
  const ACKNOWLEDGEMENT =
    /^(?:(?:ok(?:ay)?|thanks|thank\s+you|thx|great|perfect|nice|cool|awesome|excellent|good|lgtm|looks\s+(?:good|great|fine)|sounds\s+good|that(?:'s|\s+is)\s+(?:great|perfect|good|better|it)|(?:that|it)\s+(?:works|worked)(?:\s+now)?|works(?:\s+now)?)\b[\s,.!]*)+$/i

  /**
   * A fact to keep that the user asks the agent to remember ("Remember: all dates are UTC in the API.", "Keep in
   * mind that the staging database is shared"): the cue, then a statement with a verb of state or rule. A reminder
   * of a task ("remember to update the changelog") is not one.
   */
  const REMEMBER =
    /^(?:please\s+)?(?:remember|keep\s+in\s+mind|bear\s+in\s+mind|note\s+for\s+the\s+future)\s*(?::|—|–|-|,|\s+that\b)\s*(?!to\b)[^.!?]*?\b(?:is|are|must|should|always|never|only|uses?|lives?|runs?|goes|needs?|has\s+to|have\s+to|stays?|belongs?)\b/i

  /** Signals of a correction anywhere in a sentence. */
  const CORRECTION_CUES: [string, RegExp][] = [
    [
      "judgement",
      /\b(?:that|this|it)(?:'s|\s+is)\s+(?:wrong|incorrect|not\s+(?:right|correct|what\s+i)|a\s+mistake|backwards)\b/i,
    ],
    ["not-what-i-meant", /\bnot\s+what\s+i\s+(?:asked|meant|wanted|said)\b/i],
    ["you-should-not", /\byou\s+(?:shouldn'?t|should\s+not|weren'?t\s+supposed|were\s+not\s+supposed)\b/i],
    ["supposed-to", /\byou(?:'re|\s+are)\s+supposed\s+to\b/i],
    ["you-again", /\byou\s+(?:used|did|added|made|wrote|changed|put)\b[^.!?]*\bagain\b/i],
    ["you-keep", /\byou\s+keep\s+\w+ing\b|\byou\s+keep\s+doing\b/i],
    ["you-forgot-that", /\byou\s+forgot\s+(?:that|about|to\s+use)\b/i],
    ["you-misread", /\byou\s+(?:misread|misunderstood)\b/i],
    [
      "wrong-thing",
      /\b(?:the\s+)?wrong\s+(?:file|branch|package|folder|directory|endpoint|port|version|library|tool|command|test\s+runner|assertion|package\s+manager|one)\b/i,
    ],
    ["you-use-wrong", /\byou(?:'re|\s+are)\s+using\s+the\s+wrong\b/i],
    ["i-said", /\b(?:i\s+(?:said|told\s+you)|as\s+i\s+said)\b/i],
    [
      "stop-doing",
      /\b(?:please\s+)?stop\s+(?:using|adding|creating|doing|writing|putting|calling|importing|making)\b/i,
    ],
    [
      "we-dont",
      /\bwe\s+(?:don'?t|do\s+not|never|no\s+longer)\s+(?:use|push|commit|write|put|call|need|do|run|import|mock|allow|deploy)\b/i,
    ],
    [
      "we-moved",
      /\bwe\s+(?:moved|switched|migrated|removed|dropped|replaced)\b[^.!?]*\b(?:from|to|it|with|last|ago)\b/i,
    ],
  ]

  /** Weaker signals of a correction, tried after the decisions ("let's use X instead of Y" is a decision). */
  const CORRECTION_WEAK: [string, RegExp][] = [
    [
      "dont-do",
      /(?:^|[.;:—–-]\s*|,\s*|\bplease\s+|\band\s+)(?:don'?t|do\s+not)\s+(?!forget|worry|mind|bother|know|think|understand|see|get|care|have\s+to|need|hesitate)[a-z]+/i,
    ],
    ["i-dont-want", /\bi\s+(?:don'?t|do\s+not)\s+want\s+you\s+to\s+[a-z]+/i],
    ["instead-of", /\binstead\s+of\s+(?!\w+ing\b)[`'"\w@./-]/i],
    ["use-instead", /\buse\s+[^.!?]{1,60}?\s+(?:instead|rather\s+than)\b/i],
    ["rather-than-use", /\brather\s+than\s+[^.!?]{1,40},\s*use\b/i],
    ["should-be-not", /\b(?:it|this|that|these|they)\s+(?:should|must|has\s+to|needs\s+to)\s+be\b[^.!?]*,\s*not\b/i],
    [
      "x-not-y",
      /\b(?:uses?|it'?s|is|are|goes?|lives?|runs?|should\s+be|must\s+be)\s+[^.!?,]{1,50},?\s+not\s+(?:in\s+|on\s+|the\s+)?[`'"\w@./-]/i,
    ],
    ["actually-use", /^actually[,.]?\s+(?:use|it\s+should|we\s+use|the\b|i\s+want)/i],
    ["ever", /\.\s*ever\.?$/i],
    ["not-x-its-y", /^not\s+[^.!?]{1,40}?\s*[—–-]+\s*(?:it'?s|use|we)\b/i],
  ]

  /** Signals of a decision. */
  const DECISION_CUES: [string, RegExp][] = [
    [
      "decided",
      /\b(?:we|i)(?:'ve|\s+have)?\s+decided\b|^(?:ok(?:ay)?[,.]?\s+)?decided\b|^decision\b\s*[:—–-]|\bfinal\s+(?:decision|call|answer)\b|\bdecision\s+is\b/i,
    ],
    ["agreed", /\b(?:we|the\s+team|everyone)\s+(?:have\s+)?agreed\b|^agreed\b[,.!]?\s+\w/i],
    ["settled", /^settled\b\s*[:—–-]|\b(?:let'?s|we'?ll|we\s+will|we(?:'re|\s+are))\s+settl(?:e|ing)\s+on\b/i],
    [
      "lets",
      /\blet'?s\s+(?:go\s+with|use|keep|make|standardi[sz]e|adopt|stick\s+with|switch\s+to|move\s+to|choose|pick|do\s+it\s+your\s+way|drop|deprecate|require|store)\b/i,
    ],
    [
      "we-will",
      /\b(?:we'?ll|we\s+will|we(?:'re|\s+are)\s+going\s+to)\s+(?:not\s+)?(?:use|keep|go\s+with|deploy|store|switch|move|adopt|standardi[sz]e|support|run|require|build|host|ship|release|vendor|drop)\b/i,
    ],
    [
      "we-are-switching",
      /\bwe(?:'re|\s+are)\s+(?:switching|moving|migrating|going\s+with|standardi[sz]ing|dropping|adopting)\b/i,
    ],
    ["going-with", /^(?:ok(?:ay)?[,.]?\s+)?going\s+(?:with|forward)\b/i],
    ["we-chose", /\bwe\s+(?:chose|picked|have\s+chosen|'ve\s+chosen|went\s+with)\b/i],
    ["from-now-on-rule", /^from\s+now\s+on\s*,?\s+(?:the|all|every|our|we)\b/i],
  ]

  /** Signals of a standing preference. */
  const PREFERENCE_CUES: [string, RegExp][] = [
    [
      "i-prefer",
      /\bi(?:'d|\s+would)\s+(?:prefer|rather)\b|\bi\s+(?:prefer|(?:really\s+)?(?:like|love|hate|dislike)|don'?t\s+like|do\s+not\s+like)\b/i,
    ],
    ["my-preference", /\bmy\s+preference\b|\bhow\s+i\s+like\b/i],
    ["always-never", /^(?:please\s+)?(?:always|never)\s+[a-z]+/i],
    ["from-now-on", /^from\s+now\s+on\s*,?\s+(?:please\s+)?[a-z]+/i],
    ["keep-answers", /^(?:please\s+)?keep\s+(?:your\s+)?(?:answers|responses|replies|explanations|messages)\b/i],
  ]

  // ---- text ------------------------------------------------------------------------------------------------------

  /** Sentences of a message (code spans kept whole; a dash or semicolon does not split). */
  export function sentences(text: string): string[] {
    const out: string[] = []
    let current = ""
    let code = false
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      current += c
      if (c === "`") code = !code
      if (code) continue
      if ((c === "." || c === "!" || c === "?" || c === "\n") && (i + 1 >= text.length || /\s/.test(text[i + 1]))) {
        // "e.g." and "v2." style abbreviations do not end a sentence.
        if (c === "." && /\b(?:e\.g|i\.e|etc|vs|approx|incl)\.$/i.test(current)) continue
        while (i + 1 < text.length && /[.!?]/.test(text[i + 1])) current += text[++i]
        if (current.trim()) out.push(current.trim())
        current = ""
      }
    }
    if (current.trim()) out.push(current.trim())
    return out
  }

  const isQuestion = (sentence: string) =>
    sentence.trimEnd().endsWith("?") ||
    /^(?:can|could|would|will|should|shall|do(?!\s+not\b)|does|did|is|are|was|were|what|why|how|which|where|when|who|any\s+idea)\b/i.test(
      sentence,
    )

  /** A sentence that only judges ("Wrong file.", "No no no.", "Hmm, that's not right.", "Not what I asked."). */
  function onlyJudgement(sentence: string): boolean {
    const rest = sentence
      .replace(NEGATION, "")
      .replace(/[.!?]+$/, "")
      .trim()
    if (!rest) return true
    if (rest.split(/\s+/).length > 5) return false
    return JUDGEMENT.test(rest) || /^(?:no+|nope|nah)(?:\s+no+)*$/i.test(rest)
  }

  /** A sentence that only acknowledges ("Looks good.", "Thanks, that works!"). */
  const onlyAcknowledgement = (sentence: string) => ACKNOWLEDGEMENT.test(sentence.trim())

  /** A sentence scoped to the moment or the task at hand (`SCOPED`); code spans are not read for it. */
  const scoped = (sentence: string) => SCOPED.test(LearningPasted.masked(sentence))

  /**
   * The statement to remember: judgement-only and acknowledgement-only sentences and the opening "no," / "that's
   * wrong," / "Remember:" taken off; with `standing`, sentences scoped to the moment ("Don't push yet.") too.
   */
  export function statement(text: string, options: { standing?: boolean } = {}): string {
    const kept = sentences(text).filter(
      (s) => !onlyJudgement(s) && !isQuestion(s) && !onlyAcknowledgement(s) && !(options.standing && scoped(s)),
    )
    if (!kept.length) return ""
    let first = kept[0]
      .replace(NEGATION, "")
      .replace(
        /^(?:please\s+)?(?:remember|keep\s+in\s+mind|bear\s+in\s+mind|note\s+for\s+the\s+future)\s*(?::|—|–|-|,|\s+that\b)\s*/i,
        "",
      )
    // "that's wrong, the config lives in …" → "the config lives in …"; "Actually, use ruff" → "use ruff"
    first = first
      .replace(
        /^(?:(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+right|a\s+mistake|backwards|the\s+old\s+\w+)|not\s+(?:quite|like\s+that|that\s+[\w\s]{0,20}?)|wrong|incorrect|actually)\s*[,.:;!—–-]+\s*/i,
        "",
      )
      .replace(/^[,.:;!—–-]+\s*/, "")
    let out = [first, ...kept.slice(1)].join(" ").replace(/\s+/g, " ").trim()
    if (out.length > MAX_TEXT) {
      const cut = out.lastIndexOf(" ", MAX_TEXT - 1)
      out = out.slice(0, cut > MAX_TEXT / 2 ? cut : MAX_TEXT - 1) + "…"
    }
    return out ? out[0].toUpperCase() + out.slice(1) : ""
  }

  // ---- classification ----------------------------------------------------------------------------------------------

  function leadingNo(text: string): { rest: string } | undefined {
    const m = NEGATION.exec(text)
    if (!m || !/^(?:no+|nope|nah)\b/i.test(text.replace(/^(?:ugh|hmm+|uh|erm|well|wait)\b[\s,.!:;—–-]*/i, "")))
      return undefined
    return { rest: text.slice(m[0].length) }
  }

  /** After an opening "no": a directive, a contrast or a fact put right, which makes it a correction. */
  function directiveAfterNo(rest: string): boolean {
    if (!rest.trim() || NOT_AFTER_NO.test(rest.trim())) return false
    const first = sentences(rest)[0] ?? rest
    if (isQuestion(first)) return false
    return (
      new RegExp(String.raw`^(?:please\s+)?(?:${IMPERATIVE})\b`, "i").test(rest.trim()) ||
      /\b(?:not|instead|rather|never|don'?t|do\s+not|should|must|needs?\s+to|has\s+to|supposed)\b/i.test(rest) ||
      /^(?:we|the|this|that|it|these|those|our|i\s+want|i\s+said|[`'"])/i.test(rest.trim())
    )
  }

  /** A message wholly wrapped in quotes (`opencode run "no, use pnpm"` quotes arguments with spaces) unwrapped. */
  function unquote(text: string): string {
    const m = /^(["'“‘])([^]*)(["'”’])$/.exec(text)
    if (!m) return text
    const pair =
      (m[1] === '"' && m[3] === '"') ||
      (m[1] === "'" && m[3] === "'") ||
      (m[1] === "“" && m[3] === "”") ||
      (m[1] === "‘" && m[3] === "’")
    return pair && !m[2].includes(m[1]) ? m[2].trim() : text
  }

  /**
   * What `message` teaches, or undefined. Rules are tried per kind in this order: correction, decision, preference;
   * within a message the first kind found wins.
   *
   * @example
   * LearningDetect.detect("Let's go with Postgres for the job queue instead of Redis.")?.kind // "decision"
   */
  export function detect(message: string): Found | undefined {
    if (message.length > MAX_RAW) return undefined
    const own = unquote(LearningPasted.ownWords(message).replace(/\s+/g, " ").trim())
    if (!own || own.length > MAX_MESSAGE) return undefined
    // Rules read the own words with code spans and quoted tool messages emptied; the statement keeps them.
    const text = LearningPasted.masked(own)
    const all = sentences(text)
    const statements = all.filter((s) => !isQuestion(s))
    if (!statements.length) return undefined
    // Corrections, preferences and facts to remember are standing rules: read from the sentences not scoped to the
    // moment, and kept without those. A decision is the project's even "for now".
    const standing = statements.filter((s) => !scoped(s))
    const found = (kind: Kind, rule: string, standingRule = kind !== "decision"): Found | undefined => {
      if (!standingRule) return { kind, rule, text: statement(own) }
      const kept = statement(own, { standing: true })
      // Only judgements, acknowledgements and scoped directives: nothing standing was said.
      if (!kept && statement(own)) return undefined
      return { kind, rule, text: kept }
    }

    // Corrections: an opening "no" followed by what to do instead, an opening judgement, or a cue anywhere.
    const no = leadingNo(text)
    if (no && directiveAfterNo(no.rest) && !scoped(sentences(no.rest)[0] ?? no.rest))
      return found("correction", "no-then-directive")
    for (const s of statements) {
      const bare = s.replace(NEGATION, "")
      if (JUDGEMENT.test(bare) && (all.length > 1 || /[,:;—–-]\s*\S/.test(bare)))
        return found("correction", "judgement")
    }
    for (const [rule, re] of CORRECTION_CUES) if (standing.some((s) => re.test(s))) return found("correction", rule)

    for (const [rule, re] of DECISION_CUES) if (statements.some((s) => re.test(s))) return found("decision", rule)
    for (const [rule, re] of CORRECTION_WEAK) if (standing.some((s) => re.test(s))) return found("correction", rule)
    if (standing.some((s) => REMEMBER.test(s))) return found("decision", "remember", true)

    for (const [rule, re] of PREFERENCE_CUES)
      if (standing.some((s) => re.test(s) && !/^i\s+always\b/i.test(s))) return found("preference", rule)
    return undefined
  }
}
