/**
 * Well-known secret formats: cloud keys, VCS and registry tokens, chat and payment API keys, private keys, JWTs and
 * credentials inside URLs. One pass finds candidate positions by the first two characters of the formats' literal
 * prefixes (a table lookup per position); each candidate is then confirmed by its full pattern, anchored at that
 * position, so the cost stays linear in the text.
 *
 * @example
 * SecuritySecrets.find("key = AKIAIOSFODNN7EXAMPLE") // [{ start: 6, end: 26, id: "aws-access-key-id" }]
 */
export namespace SecuritySecrets {
  export type Match = { start: number; end: number; id: string }

  /** `prefixes`: the literal strings a match starts with (at least two characters each). */
  type Pattern = { id: string; prefixes: string[]; re: RegExp; group?: number }

  const HEX_DIGITS = [..."0123456789abcdefABCDEF"]
  /** `head` followed by each of `chars`. */
  const each = (heads: string[], chars: string[]) => heads.flatMap((h) => chars.map((c) => h + c))

  // Each `re` is sticky and starts at the prefix. Patterns are facts about public token formats.
  const PATTERNS: Pattern[] = [
    {
      id: "aws-access-key-id",
      prefixes: ["AKIA", "ASIA", "ABIA", "ACCA"],
      re: /(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])/y,
    },
    {
      id: "aws-secret-access-key",
      prefixes: ["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"],
      re: /aws_secret_access_key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/iy,
      group: 1,
    },
    {
      id: "github-token",
      prefixes: each(["gh"], [..."pousr"]).map((p) => p + "_"),
      re: /gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9])/y,
    },
    { id: "github-fine-grained-token", prefixes: ["github_pat_"], re: /github_pat_[A-Za-z0-9_]{22,255}/y },
    { id: "gitlab-token", prefixes: ["glpat-"], re: /glpat-[A-Za-z0-9_-]{20,}/y },
    {
      id: "slack-token",
      prefixes: each(["xox"], [..."abposr"]).map((p) => p + "-"),
      re: /xox[abposr]-[A-Za-z0-9-]{10,}/y,
    },
    {
      id: "slack-webhook",
      prefixes: ["hooks.slack.com/"],
      re: /hooks\.slack\.com\/services\/T[A-Za-z0-9]+\/B[A-Za-z0-9]+\/[A-Za-z0-9]+/y,
    },
    {
      id: "stripe-key",
      prefixes: each(["rk_", "sk_"], ["live_", "test_"]),
      re: /[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/y,
    },
    { id: "google-api-key", prefixes: ["AIza"], re: /AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/y },
    { id: "anthropic-key", prefixes: ["sk-ant-"], re: /sk-ant-[A-Za-z0-9_-]{20,}/y },
    { id: "openai-key", prefixes: ["sk-"], re: /sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/y },
    { id: "npm-token", prefixes: ["npm_"], re: /npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y },
    { id: "pypi-token", prefixes: ["pypi-"], re: /pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/y },
    { id: "huggingface-token", prefixes: ["hf_"], re: /hf_[A-Za-z0-9]{34,}(?![A-Za-z0-9])/y },
    { id: "sendgrid-key", prefixes: ["SG."], re: /SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/y },
    { id: "twilio-key", prefixes: each(["SK"], HEX_DIGITS), re: /SK[0-9a-fA-F]{32}(?![0-9a-fA-F])/y },
    {
      id: "private-key",
      prefixes: ["-----BEGIN "],
      re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$(?![\s\S]))/y,
    },
    { id: "jwt", prefixes: ["eyJ"], re: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/y },
    { id: "azure-storage-key", prefixes: ["AccountKey="], re: /AccountKey=([A-Za-z0-9+/=]{86,88})/y, group: 1 },
    { id: "url-credentials", prefixes: ["://"], re: /:\/\/[^\s:@/"'<>]{1,128}:([^\s@/"'<>]{1,256})@/y, group: 1 },
  ]

  /** Values that stand for a secret rather than being one: `password`, `${PASS}`, `<token>`, `***`, `$X`. */
  const PLACEHOLDER =
    /^(?:pass(?:word|wd)?|secret|token|changeme|example|xxx+|\*+|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|<[^>]*>|\{[^}]*\}|%[sd]|\.\.\.)$/i

  const BOUNDARY = /[A-Za-z0-9_]/

  /**
   * Candidate positions are found by their first two characters: a table over pairs of ASCII code units lists the
   * patterns with a prefix starting with that pair (about 0.5% of positions in source code match a pair), and only
   * there are those prefixes compared. A regular expression alternating the prefixes measured 5 times slower.
   */
  type Candidate = { k: number; prefixes: string[] }
  const PAIRS: (Candidate[] | undefined)[] = new Array(128 * 128)
  PATTERNS.forEach((p, k) => {
    for (const prefix of p.prefixes) {
      const a = prefix.charCodeAt(0)
      const b = prefix.charCodeAt(1)
      if (prefix.length < 2 || a >= 128 || b >= 128)
        throw new Error(`secret prefix ${prefix} is not two ASCII characters`)
      const list = (PAIRS[(a << 7) | b] ??= [])
      const last = list[list.length - 1]
      if (last?.k === k) last.prefixes.push(prefix)
      else list.push({ k, prefixes: [prefix] })
    }
  })

  /**
   * Every secret found in `text`, sorted by position. At a position, patterns are tried in their order; the first
   * that matches wins.
   *
   * @example
   * SecuritySecrets.find("postgres://app:hunter2@db/prod")[0].id // "url-credentials"
   */
  export function find(text: string): Match[] {
    const out: Match[] = []
    const last = text.length - 1
    const dead: Dead = new Map()
    let at = 0
    while (at < last) {
      const a = text.charCodeAt(at)
      const b = text.charCodeAt(at + 1)
      // Code units of 128 and above are folded into the table's range, then ruled out.
      const candidates = PAIRS[((a & 127) << 7) | (b & 127)]
      const match = candidates === undefined || a >= 128 || b >= 128 ? undefined : confirmAt(text, at, candidates, dead)
      if (!match) {
        at++
        continue
      }
      out.push({ start: match.start, end: match.end, id: match.id })
      at = Math.max(at + 1, match.covered)
    }
    return out
  }

  /**
   * Per pattern, the position before which it cannot match any more. A JWT that fails at one position fails at every
   * later position of the same run of its characters (`eyJ-eyJ-eyJ-…` holds a candidate every four characters, each
   * scanning the whole run): without this the scan of such a text took time quadratic in its length.
   */
  type Dead = Map<number, number>
  const RUN = /[A-Za-z0-9_-]*/y

  function confirmAt(text: string, at: number, candidates: Candidate[], dead: Dead) {
    for (const { k, prefixes } of candidates) {
      if (!prefixes.some((prefix) => text.startsWith(prefix, at))) continue
      if (at < (dead.get(k) ?? 0)) continue
      const found = confirm(text, at, k)
      if (found) return found
      // Only when the expression itself failed (not the boundary before it): the same run then fails everywhere.
      if (found === null && PATTERNS[k].id === "jwt") {
        RUN.lastIndex = at
        RUN.exec(text)
        dead.set(k, RUN.lastIndex)
      }
    }
    return undefined
  }

  function confirm(text: string, at: number, k: number) {
    const p = PATTERNS[k]
    // Tokens start at a word boundary (URLs and key headers carry their own context).
    if (p.id !== "url-credentials" && p.id !== "private-key" && at > 0 && BOUNDARY.test(text[at - 1])) return undefined
    p.re.lastIndex = at
    const m = p.re.exec(text)
    if (!m) return null
    if (p.group && PLACEHOLDER.test(m[p.group])) return undefined
    const start = p.group ? at + m[0].indexOf(m[p.group]) : at
    const end = p.group ? start + m[p.group].length : at + m[0].length
    return { start, end, id: p.id, covered: at + m[0].length }
  }

  /**
   * `text` with every secret found replaced by `[REDACTED: <format id>]`, for text kept where a secret has no business
   * (a heartbeat's description of a running call).
   *
   * @example
   * SecuritySecrets.mask("curl -H 'x: ghp_" + "a".repeat(36) + "' …") // "curl -H 'x: [REDACTED: github-token]' …"
   */
  export function mask(text: string): string {
    let out = ""
    let at = 0
    for (const m of find(text)) {
      out += text.slice(at, m.start) + `[REDACTED: ${m.id}]`
      at = m.end
    }
    return at === 0 ? text : out + text.slice(at)
  }

  /** The ids of the formats recognised, for docs and the CLI. */
  export function ids(): string[] {
    return PATTERNS.map((p) => p.id)
  }
}
