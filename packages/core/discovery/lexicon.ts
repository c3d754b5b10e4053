/**
 * The small lexicon of software-development language that the matcher uses on top of exact words and stems. Written
 * for this project from general usage (not from any labelled prompt), in four parts:
 *
 * - `PHRASES`: multi-word terms read as one word before splitting ("end-to-end" → "e2e", "pull request" → "pr").
 * - `ABBREVIATIONS`: spellings of the same thing, folded into one term on both sides (documents and prompts):
 *   "k8s" and "kubernetes", "db" and "database", "docs" and "documentation".
 * - `RELATED`: words a request uses for what descriptions name otherwise ("slow" → performance, "outage" →
 *   incident). Only prompts are expanded, and an expansion weighs `RELATED_WEIGHT` of a word the prompt contains.
 * - `CONCEPTS`: families of words descriptions use for one activity (debugging: debug, troubleshoot, diagnose, root
 *   cause …). A prompt word of a family, or a `RELATED` entry naming one, brings the family's words.
 *
 * @example
 * DiscoveryLexicon.phrases("write end-to-end tests for the pull request") // "write e2e tests for the pr"
 * DiscoveryLexicon.ABBREVIATIONS.get("k8s") // "kubernetes"
 */
export namespace DiscoveryLexicon {
  /** Weight of a related word added to a prompt, relative to a word of the prompt. */
  export const RELATED_WEIGHT = 0.6

  /**
   * Verbs of requests that say what to do but not to what or in which field ("remove the console.log statements",
   * "fix the parser"): the matcher keeps a hit made only of them when nothing matches the prompt's other words.
   */
  export const GENERIC_VERBS: ReadonlySet<string> = new Set(
    (
      "add adds remove removes removing delete deletes create creates make change changes update updates fix fixes " +
      "get set run runs show find check move rename put give keep start stop open close edit modify handle do log " +
      "write read new"
    ).split(" "),
  )

  /** Phrases (lower case, words separated by spaces or hyphens) and the word that stands for each. */
  export const PHRASES: readonly [string, string][] = [
    ["end to end", "e2e"],
    ["pull request", "pr"],
    ["merge request", "pr"],
    ["continuous integration", "ci"],
    ["continuous delivery", "cd"],
    ["continuous deployment", "cd"],
    ["machine learning", "ml"],
    ["deep learning", "ml"],
    ["artificial intelligence", "ai"],
    ["large language model", "llm"],
    ["language model", "llm"],
    ["infrastructure as code", "iac"],
    ["test driven", "tdd"],
    ["user interface", "ui"],
    ["user experience", "ux"],
    ["real time", "realtime"],
    ["code review", "codereview"],
    ["root cause", "rootcause"],
    ["n 1", "n1"],
    ["type script", "typescript"],
    ["java script", "javascript"],
    ["next js", "nextjs"],
    ["node js", "nodejs"],
    ["vue js", "vue"],
    ["react native", "reactnative"],
    ["web socket", "websocket"],
    ["dead code", "deadcode"],
    ["tech debt", "techdebt"],
    ["technical debt", "techdebt"],
    ["load test", "loadtest"],
    ["load testing", "loadtest"],
    ["rate limit", "ratelimit"],
    ["rate limiting", "ratelimit"],
    ["a b test", "abtest"],
    ["ab test", "abtest"],
    ["git worktree", "worktree"],
    ["work tree", "worktree"],
    ["look over", "review"],
    ["looks over", "review"],
    ["go over", "review"],
    ["go through", "review"],
    ["screen reader", "screenreader"],
    ["stack trace", "stacktrace"],
    ["on call", "oncall"],
    ["post mortem", "postmortem"],
  ]

  /** Different spellings of one thing: every key is read as its value, in documents and prompts alike. */
  export const ABBREVIATIONS: ReadonlyMap<string, string> = new Map([
    ["k8s", "kubernetes"],
    ["kube", "kubernetes"],
    ["kubectl", "kubernetes"],
    ["db", "database"],
    ["dbs", "database"],
    ["databases", "database"],
    ["pg", "postgres"],
    ["postgresql", "postgres"],
    ["psql", "postgres"],
    ["mongo", "mongodb"],
    ["js", "javascript"],
    ["ts", "typescript"],
    ["py", "python"],
    ["golang", "go"],
    ["repo", "repository"],
    ["repos", "repository"],
    ["doc", "documentation"],
    ["docs", "documentation"],
    ["documentation", "documentation"],
    ["config", "configuration"],
    ["configs", "configuration"],
    ["conf", "configuration"],
    ["auth", "authentication"],
    ["authn", "authentication"],
    ["login", "authentication"],
    ["signin", "authentication"],
    ["authz", "authorization"],
    ["perf", "performance"],
    ["a11y", "accessibility"],
    ["i18n", "internationalization"],
    ["l10n", "localization"],
    ["env", "environment"],
    ["infra", "infrastructure"],
    ["deps", "dependency"],
    ["dep", "dependency"],
    ["pkg", "package"],
    ["prod", "production"],
    ["impl", "implementation"],
    ["ui", "ui"],
    ["frontend", "frontend"],
    ["front", "frontend"],
    ["backend", "backend"],
    ["sql", "sql"],
    ["api", "api"],
    ["apis", "api"],
    ["endpoint", "api"],
    ["endpoints", "api"],
    ["gh", "github"],
    ["tf", "terraform"],
    ["rn", "reactnative"],
    ["ios", "ios"],
    ["iphone", "ios"],
    ["macos", "macos"],
    ["osx", "macos"],
    ["nodejs", "node"],
    ["nextjs", "next"],
    ["vuejs", "vue"],
    ["dockerize", "docker"],
    ["dockerise", "docker"],
    ["dockerfile", "docker"],
    ["containerize", "container"],
    ["containerise", "container"],
    ["containerization", "container"],
    ["containerisation", "container"],
    ["unittest", "unit"],
    ["xlsx", "excel"],
    ["spreadsheets", "excel"],
    ["spreadsheet", "excel"],
    ["docx", "word"],
    ["pptx", "powerpoint"],
    ["slides", "powerpoint"],
    ["deck", "powerpoint"],
    ["presentation", "powerpoint"],
    ["presentations", "powerpoint"],
    ["optimise", "optimize"],
    ["optimisation", "optimization"],
    ["analyse", "analyze"],
    ["analysing", "analyzing"],
    ["behaviour", "behavior"],
    ["colour", "color"],
    ["colours", "colors"],
    ["modernise", "modernize"],
    ["organise", "organize"],
    ["summarise", "summarize"],
    ["visualise", "visualize"],
    ["normalise", "normalize"],
    ["serialise", "serialize"],
    ["initialise", "initialize"],
    ["authorise", "authorize"],
    ["customise", "customize"],
    ["minimise", "minimize"],
    ["prioritise", "prioritize"],
    ["standardise", "standardize"],
    ["licence", "license"],
  ])

  /**
   * Words of requests and the words descriptions use for the same need. A prompt word adds its related words at
   * `RELATED_WEIGHT`; the relation is one-way (a description saying "performance" is not expanded to "slow"). A value
   * that names a family of `CONCEPTS` ("debugging", "performance") stands for the family's words.
   */
  export const RELATED: ReadonlyMap<string, readonly string[]> = new Map<string, string[]>([
    // how requests describe a failure → the debugging family (and "error")
    ["httperror", ["error", "debugging"]],
    ["bug", ["debugging"]],
    ["bugs", ["debugging"]],
    ["broken", ["debugging"]],
    ["broke", ["debugging"]],
    ["crash", ["error", "debugging"]],
    ["crashes", ["error", "debugging"]],
    ["crashing", ["error", "debugging"]],
    ["crashed", ["error", "debugging"]],
    ["exception", ["error", "debugging"]],
    ["exceptions", ["error", "debugging"]],
    ["stacktrace", ["error", "debugging"]],
    ["traceback", ["error", "debugging"]],
    ["undefined", ["error", "debugging"]],
    ["null", ["error", "debugging"]],
    ["nan", ["error", "debugging"]],
    ["error", ["debugging"]],
    ["errors", ["debugging"]],
    ["fail", ["error", "debugging"]],
    ["fails", ["error", "debugging"]],
    ["failing", ["error", "debugging"]],
    ["failed", ["error", "debugging"]],
    ["failure", ["error", "debugging"]],
    ["failures", ["error", "debugging"]],
    ["wrong", ["debugging"]],
    ["incorrect", ["debugging"]],
    ["unexpected", ["debugging"]],
    ["issue", ["debugging"]],
    ["issues", ["debugging"]],
    ["problem", ["debugging"]],
    ["problems", ["debugging"]],
    ["hang", ["debugging"]],
    ["hangs", ["debugging"]],
    ["hanging", ["debugging"]],
    ["freeze", ["debugging"]],
    ["freezes", ["debugging"]],
    ["stuck", ["debugging"]],
    ["leak", ["debugging", "memory"]],
    ["leaks", ["debugging", "memory"]],
    ["leaking", ["debugging", "memory"]],
    ["timeout", ["debugging"]],
    ["timeouts", ["debugging"]],
    ["intermittent", ["debugging"]],
    ["intermittently", ["debugging"]],
    ["glitch", ["debugging"]],
    ["regression", ["debugging", "test"]],
    ["slow", ["performance", "optimize"]],
    ["slowly", ["performance", "optimize"]],
    ["slower", ["performance", "optimize"]],
    ["latency", ["performance"]],
    ["faster", ["performance", "optimize"]],
    ["speed", ["performance", "optimize"]],
    ["bottleneck", ["performance"]],
    ["bottlenecks", ["performance"]],
    ["jank", ["performance"]],
    ["janks", ["performance"]],
    ["lag", ["performance"]],
    ["outage", ["incident", "production"]],
    ["downtime", ["incident", "production"]],
    ["oncall", ["incident"]],
    ["postmortem", ["incident"]],
    ["vulnerability", ["security"]],
    ["vulnerabilities", ["security"]],
    ["vulnerable", ["security"]],
    ["cve", ["security", "vulnerability"]],
    ["exploit", ["security", "vulnerability"]],
    ["injection", ["security", "vulnerability"]],
    ["xss", ["security", "vulnerability"]],
    ["csrf", ["security", "vulnerability"]],
    ["owasp", ["security", "vulnerability"]],
    ["secrets", ["security"]],
    ["pentest", ["penetration", "security"]],
    ["hardening", ["security"]],
    ["harden", ["security", "hardening"]],
    ["2fa", ["authentication"]],
    ["mfa", ["authentication"]],
    ["sso", ["authentication"]],
    ["password", ["authentication"]],
    ["passwords", ["authentication"]],
    ["flaky", ["test", "debugging"]],
    ["coverage", ["test"]],
    ["tdd", ["test"]],
    ["e2e", ["test"]],
    ["mock", ["test"]],
    ["mocks", ["test"]],
    ["fake", ["mock"]],
    ["stub", ["mock"]],
    ["cleanup", ["refactor", "clean"]],
    ["messy", ["refactor", "clean"]],
    ["spaghetti", ["refactor"]],
    ["simplify", ["refactor"]],
    ["restructure", ["refactor"]],
    ["rewrite", ["refactor"]],
    ["deadcode", ["refactor", "unused"]],
    ["unused", ["refactor"]],
    ["duplicated", ["refactor"]],
    ["readme", ["documentation"]],
    ["docstring", ["documentation"]],
    ["onboarding", ["documentation"]],
    ["changelog", ["release"]],
    ["version", ["release"]],
    ["tag", ["release"]],
    ["ship", ["release", "deploy"]],
    ["rollout", ["deploy", "release"]],
    ["rollback", ["deploy"]],
    ["deploy", ["deployment"]],
    ["pipeline", ["ci"]],
    ["actions", ["ci", "github"]],
    ["jenkins", ["ci"]],
    ["upgrade", ["update", "dependency"]],
    ["bump", ["update", "dependency"]],
    ["outdated", ["update", "dependency"]],
    ["npm", ["dependency", "package"]],
    ["pip", ["dependency", "package", "python"]],
    ["yarn", ["dependency", "package"]],
    ["cargo", ["rust", "dependency"]],
    ["gem", ["ruby"]],
    ["gems", ["ruby"]],
    ["migration", ["migrate"]],
    ["migrate", ["migration"]],
    ["schema", ["database"]],
    ["query", ["sql", "database"]],
    ["queries", ["sql", "database"]],
    ["index", ["database"]],
    ["indexes", ["database"]],
    ["table", ["database"]],
    ["tables", ["database"]],
    ["column", ["database"]],
    ["orm", ["database"]],
    ["cache", ["caching", "performance"]],
    ["caching", ["cache", "performance"]],
    ["bill", ["cost"]],
    ["billing", ["cost", "payment"]],
    ["spend", ["cost"]],
    ["spending", ["cost"]],
    ["expensive", ["cost"]],
    ["checkout", ["payment"]],
    ["stripe", ["payment"]],
    ["paypal", ["payment"]],
    ["subscription", ["payment"]],
    ["aws", ["cloud"]],
    ["gcp", ["cloud"]],
    ["azure", ["cloud"]],
    ["s3", ["aws", "cloud"]],
    ["lambda", ["aws", "serverless"]],
    ["helm", ["kubernetes"]],
    ["pod", ["kubernetes"]],
    ["pods", ["kubernetes"]],
    ["oomkilled", ["kubernetes", "memory"]],
    ["cluster", ["kubernetes"]],
    ["container", ["docker"]],
    ["image", ["docker"]],
    ["metrics", ["monitoring"]],
    ["dashboard", ["monitoring"]],
    ["dashboards", ["monitoring"]],
    ["alerting", ["monitoring"]],
    ["alerts", ["monitoring"]],
    ["prometheus", ["monitoring"]],
    ["grafana", ["monitoring"]],
    ["sentry", ["monitoring", "error"]],
    ["datadog", ["monitoring"]],
    ["observability", ["monitoring"]],
    ["tracing", ["monitoring"]],
    ["logs", ["logging"]],
    ["log", ["logging"]],
    ["screenreader", ["accessibility"]],
    ["screen", ["ui"]],
    ["wcag", ["accessibility"]],
    ["aria", ["accessibility"]],
    ["responsive", ["css", "layout"]],
    ["layout", ["css", "ui"]],
    ["styling", ["css"]],
    ["style", ["css"]],
    ["page", ["frontend", "web"]],
    ["component", ["frontend", "ui"]],
    ["components", ["frontend", "ui"]],
    ["hooks", ["react"]],
    ["jsx", ["react"]],
    ["tsx", ["react", "typescript"]],
    ["swiftui", ["swift", "ios"]],
    ["xcode", ["ios", "swift"]],
    ["android", ["mobile"]],
    ["ios", ["mobile"]],
    ["app", ["application"]],
    ["kotlin", ["android"]],
    ["jetpack", ["android"]],
    ["compose", ["android"]],
    ["notebook", ["data", "python"]],
    ["jupyter", ["data", "python"]],
    ["pandas", ["data", "python"]],
    ["csv", ["data"]],
    ["etl", ["data", "pipeline"]],
    ["warehouse", ["data"]],
    ["analytics", ["data", "analysis"]],
    ["churn", ["ml", "model"]],
    ["predict", ["ml", "model"]],
    ["prediction", ["ml", "model"]],
    ["classifier", ["ml", "model"]],
    ["train", ["ml", "model"]],
    ["training", ["ml", "model"]],
    ["rag", ["llm", "ai"]],
    ["embeddings", ["llm", "vector"]],
    ["chatbot", ["llm", "ai"]],
    ["prompt", ["llm"]],
    ["gpt", ["llm", "ai"]],
    ["openai", ["llm", "ai"]],
    ["anthropic", ["claude", "llm"]],
    ["plan", ["planning"]],
    ["sprint", ["agile", "planning"]],
    ["backlog", ["agile", "planning"]],
    ["standup", ["agile"]],
    ["stories", ["requirements"]],
    ["story", ["requirements"]],
    ["acceptance", ["requirements"]],
    ["spec", ["specification", "requirements"]],
    ["estimate", ["estimation"]],
    ["risk", ["risks"]],
    ["gdpr", ["privacy", "compliance"]],
    ["hipaa", ["compliance", "healthcare"]],
    ["soc2", ["compliance"]],
    ["pci", ["compliance", "payment"]],
    ["patient", ["healthcare"]],
    ["medical", ["healthcare"]],
    ["proxy", ["network"]],
    ["dns", ["network"]],
    ["tls", ["network", "ssl"]],
    ["ssl", ["network", "tls"]],
    ["nginx", ["network", "proxy"]],
    ["firewall", ["network", "security"]],
    ["vpn", ["network"]],
    ["vpc", ["network", "cloud"]],
    ["subnets", ["network"]],
    ["branch", ["git"]],
    ["branches", ["git"]],
    ["merge", ["git"]],
    ["rebase", ["git"]],
    ["commit", ["git"]],
    ["commits", ["git"]],
    ["worktree", ["git"]],
    ["diff", ["review", "changes"]],
    ["feedback", ["review"]],
    ["comments", ["review", "feedback"]],
    ["translate", ["internationalization", "localization"]],
    ["translation", ["internationalization", "localization"]],
    ["german", ["localization"]],
    ["french", ["localization"]],
    ["spanish", ["localization"]],
    ["announcement", ["communication"]],
    ["newsletter", ["communication"]],
    ["memo", ["communication"]],
    ["poster", ["design", "visual"]],
    ["logo", ["design", "visual"]],
    ["icon", ["design", "visual"]],
    ["gif", ["animation"]],
    ["brand", ["branding"]],
    ["fonts", ["typography"]],
    ["font", ["typography"]],
    ["seo", ["search"]],
    ["subagents", ["agent", "agents"]],
    ["parallel", ["concurrent"]],
  ])

  /**
   * Families of words that descriptions of developer tools use for one activity: a description of a debugging agent
   * says "troubleshoot", "diagnose" or "root cause" as often as "debug". A prompt word of a family brings the others
   * (as one related group, `related`), and so does a `RELATED` word that names a family ("wrong" → debugging).
   */
  export const CONCEPTS: Readonly<Record<string, readonly string[]>> = {
    debugging: ["debug", "troubleshoot", "diagnose", "rootcause", "investigate", "fix"],
    performance: ["performance", "optimize", "profile", "bottleneck", "speed", "latency"],
    security: ["security", "secure", "vulnerability", "harden", "owasp", "threat"],
    documentation: ["documentation", "document", "readme", "guide", "writer", "technical"],
    testing: ["test", "testing", "tdd", "e2e", "coverage", "qa", "spec"],
    refactoring: ["refactor", "simplify", "cleanup", "restructure", "maintainability", "clean", "techdebt", "deadcode"],
    review: ["review", "reviewer", "codereview", "audit", "inspect", "critique"],
    deployment: ["deploy", "deployment", "release", "ci", "cd", "pipeline", "devops"],
    planning: ["plan", "planning", "planner", "roadmap", "breakdown", "estimate", "task"],
    architecture: ["architecture", "architect", "design", "system"],
    understanding: ["explain", "explore", "understand", "onboarding", "walkthrough", "tour"],
    verification: ["verify", "verification", "validate", "validation", "confirm"],
    research: ["research", "investigate", "analysis", "survey", "compare"],
  }
  const MEMBER = new Map<string, string[]>()
  for (const [name, words] of Object.entries(CONCEPTS))
    for (const w of words) MEMBER.set(w, [...(MEMBER.get(w) ?? []), name])

  /**
   * The related words of a prompt word (lower case, as written): its `RELATED` words, a family named there replaced
   * by its words, and the other words of the families the word belongs to.
   *
   * @example
   * DiscoveryLexicon.related("slow") // ["performance", "optimize", "profile", "bottleneck", "speed", "latency"]
   */
  export function related(word: string): readonly string[] {
    const out: string[] = []
    for (const r of RELATED.get(word) ?? []) out.push(...(CONCEPTS[r] ?? [r]))
    for (const name of MEMBER.get(word) ?? []) out.push(...CONCEPTS[name].filter((w) => w !== word))
    return [...new Set(out)]
  }

  /**
   * True for a word of a family of `CONCEPTS` (common vocabulary of an activity: "fix", "writer", "guide").
   *
   * @example
   * DiscoveryLexicon.family("writer") // true
   * DiscoveryLexicon.family("docker") // false
   */
  export function family(word: string): boolean {
    return MEMBER.has(word)
  }

  /**
   * Phrasal verbs whose joined form is the noun docs and tools are named by ("when a request times out" → Timeouts,
   * "roll back the migration" → rollback): the verb in any inflection, then its particle. Only pairs whose particle
   * cannot start the verb's object ("log in the handler" is a log, so "log in" is not here).
   */
  export const PHRASAL_VERBS: readonly [string, string, string][] = [
    ["time", "out", "timeout"],
    ["roll", "back", "rollback"],
    ["shut", "down", "shutdown"],
    ["tear", "down", "teardown"],
    ["back", "up", "backup"],
    ["fall", "back", "fallback"],
    ["sign", "up", "signup"],
    ["log", "out", "logout"],
    ["look", "up", "lookup"],
    ["check", "out", "checkout"],
  ]
  /** The inflections of a regular English verb: "time" → times, timed, timing; "shut" → shuts, shutting. */
  function inflections(verb: string): string[] {
    const last = verb.at(-1)!
    const doubled = /[^aeiou][aeiou][bdglmnprt]$/.test(verb) ? verb + last : verb
    const stem = verb.endsWith("e") ? verb.slice(0, -1) : doubled
    const past = verb.endsWith("e") ? verb + "d" : doubled + "ed"
    return [verb, verb + "s", past, stem + "ing"]
  }

  /** Phrases by their first word: the rest of each phrase's words and the word that replaces them. */
  const BY_FIRST = new Map<string, { rest: string[]; word: string }[]>()
  const addPhrase = (first: string, rest: string[], word: string) => {
    const list = BY_FIRST.get(first) ?? []
    list.push({ rest, word })
    BY_FIRST.set(first, list)
  }
  for (const [words, word] of PHRASES) {
    const [first, ...rest] = words.split(" ")
    addPhrase(first, rest, word)
  }
  for (const [verb, particle, word] of PHRASAL_VERBS)
    for (const form of inflections(verb)) addPhrase(form, [particle], word)
  const HTTP_ERROR = /^[45]\d\ds?$/

  /**
   * `tokens` (lower-case words, stop words still in) with each phrase of `PHRASES` replaced by its word; the last
   * word of a phrase may take a plural ("root causes"). An HTTP error status ("500", "404") reads as "httperror".
   *
   * @example
   * DiscoveryLexicon.phrases(["end", "to", "end", "tests"]) // ["e2e", "tests"]
   */
  export function phrases(tokens: readonly string[]): string[] {
    const out: string[] = []
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]
      const candidates = BY_FIRST.get(token)
      let joined = false
      if (candidates)
        for (const { rest, word } of candidates) {
          if (i + rest.length >= tokens.length) continue
          let all = true
          for (let k = 0; k < rest.length && all; k++) {
            const t = tokens[i + 1 + k]
            const last = k === rest.length - 1
            all = t === rest[k] || (last && (t === rest[k] + "s" || t === rest[k] + "es"))
          }
          if (!all) continue
          out.push(word)
          i += rest.length
          joined = true
          break
        }
      if (!joined) out.push(HTTP_ERROR.test(token) ? "httperror" : token)
    }
    return out
  }
}
