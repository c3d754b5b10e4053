/**
 * Well-known secret formats: cloud keys, VCS and registry tokens, chat and payment API keys, private keys, JWTs and
 * credentials inside URLs. One pass finds candidate positions with a combined prefix search; each candidate is then
 * confirmed by its full pattern, anchored at that position, so the cost stays linear in the text.
 *
 * @example
 * SecuritySecrets.find("key = AKIAIOSFODNN7EXAMPLE") // [{ start: 6, end: 26, id: "aws-access-key-id" }]
 */
export namespace SecuritySecrets {
  export type Match = { start: number; end: number; id: string }

  type Pattern = { id: string; prefix: string; re: RegExp; group?: number }

  // Each `re` is sticky and starts at the prefix. Patterns are facts about public token formats.
  const PATTERNS: Pattern[] = [
    {
      id: "aws-access-key-id",
      prefix: "(?:AKIA|ASIA|ABIA|ACCA)",
      re: /(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])/y,
    },
    {
      id: "aws-secret-access-key",
      prefix: "(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY)",
      re: /aws_secret_access_key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/iy,
      group: 1,
    },
    { id: "github-token", prefix: "gh[pousr]_", re: /gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9])/y },
    { id: "github-fine-grained-token", prefix: "github_pat_", re: /github_pat_[A-Za-z0-9_]{22,255}/y },
    { id: "gitlab-token", prefix: "glpat-", re: /glpat-[A-Za-z0-9_-]{20,}/y },
    { id: "slack-token", prefix: "xox[abposr]-", re: /xox[abposr]-[A-Za-z0-9-]{10,}/y },
    {
      id: "slack-webhook",
      prefix: "hooks\\.slack\\.com/",
      re: /hooks\.slack\.com\/services\/T[A-Za-z0-9]+\/B[A-Za-z0-9]+\/[A-Za-z0-9]+/y,
    },
    { id: "stripe-key", prefix: "[rs]k_(?:live|test)_", re: /[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/y },
    { id: "google-api-key", prefix: "AIza", re: /AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/y },
    { id: "anthropic-key", prefix: "sk-ant-", re: /sk-ant-[A-Za-z0-9_-]{20,}/y },
    { id: "openai-key", prefix: "sk-", re: /sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/y },
    { id: "npm-token", prefix: "npm_", re: /npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y },
    { id: "pypi-token", prefix: "pypi-", re: /pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/y },
    { id: "huggingface-token", prefix: "hf_", re: /hf_[A-Za-z0-9]{34,}(?![A-Za-z0-9])/y },
    { id: "sendgrid-key", prefix: "SG\\.", re: /SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/y },
    { id: "twilio-key", prefix: "SK[0-9a-fA-F]", re: /SK[0-9a-fA-F]{32}(?![0-9a-fA-F])/y },
    {
      id: "private-key",
      prefix: "-----BEGIN ",
      re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$(?![\s\S]))/y,
    },
    { id: "jwt", prefix: "eyJ", re: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/y },
    { id: "azure-storage-key", prefix: "AccountKey=", re: /AccountKey=([A-Za-z0-9+/=]{86,88})/y, group: 1 },
    { id: "url-credentials", prefix: "://", re: /:\/\/[^\s:@/"'<>]{1,128}:([^\s@/"'<>]{1,256})@/y, group: 1 },
  ]

  /** Values that stand for a secret rather than being one: `password`, `${PASS}`, `<token>`, `***`, `$X`. */
  const PLACEHOLDER =
    /^(?:pass(?:word|wd)?|secret|token|changeme|example|xxx+|\*+|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|<[^>]*>|\{[^}]*\}|%[sd]|\.\.\.)$/i

  // No capture groups: they made the search about 35% slower. The pattern worth confirming first is the first whose
  // prefix matches at the hit, which is the alternative the search itself took.
  const PREFILTER = new RegExp(PATTERNS.map((p) => p.prefix).join("|"), "g")
  const BOUNDARY = /[A-Za-z0-9_]/
  const HEADS = PATTERNS.map((p) => new RegExp(p.prefix, "y"))

  function firstHead(text: string, at: number): number {
    for (let k = 0; k < HEADS.length; k++) {
      HEADS[k].lastIndex = at
      if (HEADS[k].test(text)) return k
    }
    return -1
  }

  /**
   * Every secret found in `text`, sorted by position.
   *
   * @example
   * SecuritySecrets.find("postgres://app:hunter2@db/prod")[0].id // "url-credentials"
   */
  export function find(text: string): Match[] {
    const out: Match[] = []
    PREFILTER.lastIndex = 0
    let coveredTo = -1
    for (let hit = PREFILTER.exec(text); hit; hit = PREFILTER.exec(text)) {
      const at = hit.index
      if (at < coveredTo) continue
      const first = firstHead(text, at)
      const match = confirm(text, at, first) ?? confirmAny(text, at, first)
      if (!match) {
        PREFILTER.lastIndex = at + 1
        continue
      }
      out.push({ start: match.start, end: match.end, id: match.id })
      coveredTo = match.covered
      PREFILTER.lastIndex = Math.max(PREFILTER.lastIndex, coveredTo)
    }
    return out
  }

  function confirm(text: string, at: number, k: number) {
    const p = PATTERNS[k]
    // Tokens start at a word boundary (URLs and key headers carry their own context).
    if (p.id !== "url-credentials" && !p.prefix.startsWith("-") && at > 0 && BOUNDARY.test(text[at - 1]))
      return undefined
    p.re.lastIndex = at
    const m = p.re.exec(text)
    if (!m) return undefined
    if (p.group && PLACEHOLDER.test(m[p.group])) return undefined
    const start = p.group ? at + m[0].indexOf(m[p.group]) : at
    const end = p.group ? start + m[p.group].length : at + m[0].length
    return { start, end, id: p.id, covered: at + m[0].length }
  }

  /** When the first pattern fails at a position, a later one with an overlapping prefix may still match. */
  function confirmAny(text: string, at: number, skip: number) {
    for (let k = 0; k < PATTERNS.length; k++) {
      if (k === skip) continue
      HEADS[k].lastIndex = at
      if (!HEADS[k].test(text)) continue
      const found = confirm(text, at, k)
      if (found) return found
    }
    return undefined
  }

  /** The ids of the formats recognised, for docs and the CLI. */
  export function ids(): string[] {
    return PATTERNS.map((p) => p.id)
  }
}
