import { DiscoveryLexicon } from "./lexicon"
import { Keywords } from "./keywords"

/**
 * Ranks documents (discovered items and project resources) against a prompt.
 *
 * Strategies, compared on the labelled sets in `test/discovery/` (figures in docs/discovery.md):
 * - `bm25f` (the default): BM25F over the name, explicit keywords, description, the first paragraph of the body and
 *   the start of the body (`Discovery.BODY_MAX` characters, weight 0.2), each field with its own weight and length
 *   normalisation; light stems ("responsive" is not "response"), the
 *   derived forms a catalogue contains folded together ("reviewer" meets "review"), the lexicon's phrases and
 *   spellings (`DiscoveryLexicon`), prompt words expanded to related words and families of developer vocabulary at
 *   half weight (each word's expansion scored as the best of its words). A reply that asks for nothing
 *   (`Keywords.chatter`, or `UNTOPICAL_WORDS` words that no name or lexicon entry holds) matches nothing. Hits are
 *   kept when they are strong on their own (a share of what the prompt could score) and close to the best of their
 *   type and of all, at most `MAX_HITS`.
 * - `bm25`: the earlier matcher — BM25 over name (weight 3), keywords and description on Porter stems, with a
 *   relevance floor at half the best score.
 * - `plain`: plain BM25 over name and description (no floor, no lexicon, Porter stems): the baseline.
 * - `overlap`, `overlap-stem`: the spec's keyword overlap (exact words, or stems).
 *
 * @example
 * const index = DiscoveryMatch.index([{ name: "code-reviewer", keywords: [], description: "Reviews diffs for bugs" }])
 * index.search("please review this diff") // [{ index: 0, score: 2.1, matched: ["review", "diff"] }]
 */
export namespace DiscoveryMatch {
  export type Doc = {
    name: string
    keywords: readonly string[]
    description: string
    /** The first paragraph of the body (a command without a description is known by it). */
    lead?: string
    /** Words of the rest of the body (its first `Discovery.BODY_MAX` characters), matched with a low weight. */
    body?: string
    /** False when `keywords` were extracted from the description rather than written: `bm25f` then ignores them. */
    explicitKeywords?: boolean
    /** The kind of entry (agent, command, …): `bm25f` cuts each group relative to its own best hit too. */
    group?: string
  }
  export type Hit = {
    /** Position of the document in the indexed list. */
    index: number
    score: number
    /** The prompt's words that matched, as written in the prompt (lower case), first occurrence first. */
    matched: string[]
  }
  export type Strategy = "overlap" | "overlap-stem" | "plain" | "bm25" | "bm25f"
  export const STRATEGIES: readonly Strategy[] = ["overlap", "overlap-stem", "plain", "bm25", "bm25f"]
  /** The strategy discovery uses (chosen by the labelled-set evaluation). */
  export const STRATEGY: Strategy = "bm25f"

  /**
   * Field weights of `bm25`. Keywords weigh as much as the description: most items have no explicit keywords, and
   * keywords extracted from the description would only count its words twice.
   */
  export const WEIGHTS = { name: 3, keywords: 1, description: 1 } as const
  export const K1 = 1.2
  export const B = 0.75
  /**
   * `bm25` keeps hits scoring at least this fraction of the best hit of the same prompt. The one parameter tuned on
   * the labelled set (0.35–0.8 compared; the evaluation test prints the trade-off).
   */
  export const RELATIVE_CUT = 0.5
  /**
   * `bm25` ignores hits below this absolute score: hits made only of words that nearly every item contains. Kept low
   * so that small catalogues (whose idf values are small) still get suggestions; on the labelled set any floor from 0
   * to 3 gives the same figures.
   */
  export const MIN_SCORE = 0.3
  /**
   * A prompt of at most this many words (after stop words) none of which a definition's name or the lexicon holds
   * gets nothing from `bm25f`: "makes sense", "fair enough" are replies, even when some description uses the words.
   */
  export const UNTOPICAL_WORDS = 2

  /** Per-search changes to `bm25f`'s selection. */
  export type SearchOptions = {
    /** Replaces `FieldTuning.coverage` (share of the prompt's own best possible score) for this search. */
    coverage?: number
    /** Replaces `FieldTuning.relativeCut` (share of the best hit) for this search. */
    relativeCut?: number
    /** Replaces `FieldTuning.groupCut` (share of the best hit of the same group) for this search. */
    groupCut?: number
    /** Every hit above the prompt's own floor (coverage), before the cuts relative to other hits; see `select`. */
    all?: boolean
    /**
     * Items the prompt names by their titles whole (index numbers): the generic-verb rule of `select` keeps them, so
     * "log every request" keeps a Logging article though "log" is a generic verb.
     */
    named?: ReadonlySet<number>
  }

  export type Index = {
    strategy: Strategy
    size: number
    /** Hits with a positive score, best first, after the strategy's relevance floor. */
    search(prompt: string, options?: SearchOptions): Hit[]
    /**
     * The cuts relative to other hits and the cap, applied to hits of `search(prompt, { all: true })` once some were
     * left out (a caller that drops hits, e.g. protected ones, selects among the rest); first, when some hit matches a
     * word that is not a generic verb (`DiscoveryLexicon.GENERIC_VERBS`), the hits matching only generic verbs go.
     * Other strategies: unchanged.
     */
    select(hits: readonly Hit[], options?: SearchOptions): Hit[]
  }

  /** Parameters of `bm25` and `plain`. */
  export type Tuning = {
    weights: { name: number; keywords: number; description: number }
    k1: number
    b: number
    relativeCut: number
    minScore: number
  }
  export const TUNING: Tuning = { weights: WEIGHTS, k1: K1, b: B, relativeCut: RELATIVE_CUT, minScore: MIN_SCORE }

  /** Parameters of `bm25f`, chosen on the tuning set (the evaluation test prints the trade-offs). */
  export type FieldTuning = {
    /** Weight and length normalisation (b) of each field. */
    fields: Record<"name" | "keywords" | "description" | "lead" | "body", { weight: number; b: number }>
    k1: number
    /** Weight of a related word added to the prompt (`DiscoveryLexicon.RELATED`). */
    related: number
    /** A hit must score at least this share of the prompt's own best possible score (its idf mass). */
    coverage: number
    /** A hit must score at least this share of the best hit. */
    relativeCut: number
    /** A hit must score at least this share of the best hit of its group (type), when documents have groups. */
    groupCut: number
    /** At most this many hits, all types together. */
    maxHits: number
    /** Added per prompt term found in a document's name: this times the term's idf among names. */
    nameBonus: number
    /**
     * Hits below this absolute score are dropped: a word that (nearly) every item contains has an idf near 0 and
     * suggests nothing on its own, while in a catalogue of one item a shared word still does.
     */
    minScore: number
  }
  export const FIELD_TUNING: FieldTuning = {
    fields: {
      name: { weight: 3, b: 0.5 },
      keywords: { weight: 1, b: 0.5 },
      description: { weight: 1, b: 0.75 },
      lead: { weight: 0.5, b: 0.75 },
      body: { weight: 0.2, b: 0.75 },
    },
    k1: 1.2,
    related: DiscoveryLexicon.RELATED_WEIGHT,
    coverage: 0.12,
    relativeCut: 0.5,
    groupCut: 0.6,
    maxHits: 5,
    nameBonus: 0.3,
    minScore: 0.25,
  }

  /**
   * Builds the index of `docs` for `strategy` (`tuning` applies to `bm25` and `plain`, `fields` to `bm25f`).
   *
   * @example
   * DiscoveryMatch.index(docs, "plain").search("review") // plain BM25, for comparison
   */
  export function index(
    docs: readonly Doc[],
    strategy: Strategy = STRATEGY,
    tuning: Tuning = TUNING,
    fields: FieldTuning = FIELD_TUNING,
  ): Index {
    if (strategy === "bm25f") return bm25f(docs, fields)
    if (strategy === "bm25") return bm25(docs, tuning)
    if (strategy === "plain")
      return {
        ...bm25(
          docs.map((d) => ({ ...d, keywords: [] })),
          { ...tuning, weights: { name: 1, keywords: 0, description: 1 }, relativeCut: 0, minScore: 0 },
        ),
        strategy: "plain",
      }
    return overlap(docs, strategy === "overlap-stem")
  }

  /** The prompt's words with their stems, capped at `Keywords.MAX_PROMPT_CHARS`. */
  function promptWords(prompt: string): { word: string; term: string }[] {
    return Keywords.words(prompt.slice(0, Keywords.MAX_PROMPT_CHARS)).map((word) => ({
      word,
      term: Keywords.stem(word),
    }))
  }

  function overlap(docs: readonly Doc[], stemmed: boolean): Index {
    const norm = (w: string) => (stemmed ? Keywords.stem(w) : w)
    const postings = new Map<string, number[]>()
    docs.forEach((doc, i) => {
      const keys = new Set(doc.keywords.flatMap((k) => Keywords.words(k)).map(norm))
      for (const key of keys) {
        const list = postings.get(key)
        if (list) list.push(i)
        else postings.set(key, [i])
      }
    })
    return {
      strategy: stemmed ? "overlap-stem" : "overlap",
      size: docs.length,
      select: (hits) => [...hits],
      search(prompt) {
        const matched = new Map<number, string[]>()
        const seen = new Set<string>()
        for (const { word, term } of promptWords(prompt)) {
          const key = stemmed ? term : word
          if (seen.has(key)) continue
          seen.add(key)
          for (const i of postings.get(key) ?? []) {
            const list = matched.get(i)
            if (list) list.push(word)
            else matched.set(i, [word])
          }
        }
        return [...matched]
          .map(([index, words]) => ({ index, score: words.length, matched: words }))
          .sort((a, b) => b.score - a.score || a.index - b.index)
      },
    }
  }

  function bm25(docs: readonly Doc[], t: Tuning): Index {
    const postings = new Map<string, { doc: number; tf: number }[]>()
    const lengths = new Float64Array(docs.length)
    docs.forEach((doc, i) => {
      const tf = new Map<string, number>()
      const add = (terms: string[], weight: number) => {
        for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + weight)
        lengths[i] += terms.length * weight
      }
      add(Keywords.terms(doc.name), t.weights.name)
      add(
        doc.keywords.flatMap((k) => Keywords.terms(k)),
        t.weights.keywords,
      )
      add(Keywords.terms(doc.description), t.weights.description)
      for (const [term, f] of tf) {
        const list = postings.get(term)
        if (list) list.push({ doc: i, tf: f })
        else postings.set(term, [{ doc: i, tf: f }])
      }
    })
    const n = docs.length
    const avg = n ? lengths.reduce((a, b) => a + b, 0) / n || 1 : 1
    const idf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5))
    return {
      strategy: "bm25",
      size: n,
      select: (hits) => [...hits],
      search(prompt) {
        const scores = new Map<number, { score: number; matched: string[] }>()
        const seen = new Set<string>()
        for (const { word, term } of promptWords(prompt)) {
          if (seen.has(term)) continue
          seen.add(term)
          const list = postings.get(term)
          if (!list) continue
          const weight = idf(list.length)
          for (const { doc, tf } of list) {
            const s = (weight * tf * (t.k1 + 1)) / (tf + t.k1 * (1 - t.b + (t.b * lengths[doc]) / avg))
            const entry = scores.get(doc)
            if (entry) {
              entry.score += s
              entry.matched.push(word)
            } else scores.set(doc, { score: s, matched: [word] })
          }
        }
        const hits = [...scores]
          .map(([index, e]) => ({ index, score: round(e.score), matched: e.matched }))
          .sort((a, b) => b.score - a.score || a.index - b.index)
        if (!hits.length) return hits
        const floor = Math.max(t.minScore, hits[0].score * t.relativeCut)
        return hits.filter((h) => h.score >= floor)
      },
    }
  }

  type FieldName = keyof FieldTuning["fields"]
  const FIELDS: FieldName[] = ["name", "keywords", "description", "lead", "body"]

  /** The text of each field of a document (a name's separators are spaces). */
  function fieldsOf(doc: Doc): Record<FieldName, string> {
    return {
      name: doc.name.replace(/[/:._-]+/g, " "),
      keywords: doc.explicitKeywords === false ? "" : doc.keywords.join(" "),
      description: doc.description,
      lead: doc.lead ?? "",
      body: doc.body ?? "",
    }
  }

  /**
   * Derived forms folded onto a word of the catalogue: "reviewer" onto "review", "optimization" onto "optimiz"
   * ("optimize"), "deployment" onto "deploy", "dockerize" onto "docker" — only when the catalogue has that word, so
   * "docker" is not "dock" and "server" is not "serve" unless both are there (a few such words are never folded).
   */
  const SUFFIXES: [string, string[]][] = [
    ["ization", ["ize", ""]],
    ["isation", ["ize", ""]],
    ["ation", ["", "at", "e"]],
    ["ement", [""]],
    ["ment", [""]],
    ["izer", ["ize", ""]],
    ["iser", ["ize", ""]],
    ["ize", [""]],
    ["ise", [""]],
    ["er", ["", "e"]],
    ["or", ["", "e"]],
    ["ist", ["", "y"]],
  ]
  const NEVER_FOLDED = new Set(["server", "user", "container", "layer", "order", "number", "power", "paper", "letter"])

  function folder(vocabulary: ReadonlySet<string>) {
    const memo = new Map<string, string>()
    return (term: string): string => {
      let out = memo.get(term)
      if (out !== undefined) return out
      out = term
      if (!NEVER_FOLDED.has(term))
        for (const [suffix, replacements] of SUFFIXES) {
          if (!term.endsWith(suffix) || term.length - suffix.length < 3) continue
          const base = term.slice(0, -suffix.length)
          const candidates = replacements.flatMap((r) => {
            const c = Keywords.light(base + r)
            const undoubled =
              base.length >= 4 && base.at(-1) === base.at(-2) ? Keywords.light(base.slice(0, -1) + r) : c
            return [c, undoubled]
          })
          const found = candidates.find((c) => c !== term && vocabulary.has(c))
          if (found) {
            out = found
            break
          }
        }
      memo.set(term, out)
      return out
    }
  }

  /**
   * The key under which a word a document uses as a name (`Keywords.names`: "Fixer" of "Automate Fixer tasks", the
   * "point" of "SharePoint") is indexed: apart from the common word, so that only a prompt saying the word itself finds
   * it; not a derived form folded onto it ("pointer"), nor a word of a lexicon family ("explain" → "writer"). No word
   * holds "=", so no common word collides with such a key.
   */
  export const NAMED = "="

  /** Terms of each field of a document, kept per document object: an index rebuilt after one edit re-reads one. */
  const fieldTerms = new WeakMap<Doc, string[][]>()
  function termsOf(doc: Doc): string[][] {
    let terms = fieldTerms.get(doc)
    if (!terms) {
      const f = fieldsOf(doc)
      // The words this document uses as names, judged on its own prose (the name is lower case) and the name's
      // camel-case pieces ("SharePoint Automation").
      const named = Keywords.names(`${doc.description}\n${doc.lead ?? ""}`)
      for (const w of Keywords.names(doc.name)) named.add(w)
      terms = FIELDS.map((name) =>
        Keywords.lightTerms(f[name]).map((x) => (named.has(x.word) ? NAMED + x.term : x.term)),
      )
      fieldTerms.set(doc, terms)
    }
    return terms
  }

  /**
   * The catalogue-wide state of a `bm25f` index, what building it costs (tokenizing every document): the vocabulary
   * derived forms are folded onto, and each term's postings. Plain data, so that a cache can keep it (`snapshot`,
   * `restore`).
   */
  export type Snapshot = {
    /** Documents indexed. */
    size: number
    vocabulary: ReadonlySet<string>
    postings: ReadonlyMap<string, Posting>
  }
  /** The documents holding a term, with each one's BM25F pseudo frequency and whether its name holds the term. */
  export type Posting = { docs: number[]; xs: number[]; names: boolean[] }

  const snapshots = new WeakMap<Index, Snapshot>()

  /**
   * The state of a `bm25f` index (undefined for other strategies), to be kept and given to `restore` with the same
   * documents: `restore(docs, snapshot(index(docs)))` ranks exactly as `index(docs)`.
   *
   * @example
   * const kept = DiscoveryMatch.snapshot(DiscoveryMatch.index(docs))
   */
  export function snapshot(index: Index): Snapshot | undefined {
    return snapshots.get(index)
  }

  /**
   * The `bm25f` index of `docs` from the `snapshot` of an index of the same documents, without tokenizing them. The
   * caller vouches that the documents and this module's code are those the snapshot was taken with (a cache keys it
   * by both); a snapshot of another number of documents is refused.
   *
   * @example
   * DiscoveryMatch.restore(docs, kept).search("review the diff")
   */
  export function restore(docs: readonly Doc[], snapshot: Snapshot, fields: FieldTuning = FIELD_TUNING): Index {
    if (snapshot.size !== docs.length)
      throw new RangeError(`snapshot of ${snapshot.size} documents given for ${docs.length}`)
    return bm25f(docs, fields, snapshot)
  }

  /** Tokenizes `docs` and builds the postings of their terms (see `Snapshot`). */
  function build(docs: readonly Doc[], t: FieldTuning): Snapshot {
    const tokenized = docs.map(termsOf)
    const vocabulary = new Set<string>()
    // Derived forms are folded onto words of the catalogue's own descriptions, not of bodies (whose words are many).
    for (const fields of tokenized) for (let f = 0; f < 4; f++) for (const term of fields[f]) vocabulary.add(term)
    const fold = folder(vocabulary)
    const n = docs.length
    const avg = FIELDS.map((_, f) => {
      let total = 0
      for (const fields of tokenized) total += fields[f].length
      return n ? total / n || 1 : 1
    })
    const params = FIELDS.map((f) => t.fields[f])
    /**
     * term → the documents holding it, each with its field-weighted, length-normalised frequency (BM25F's pseudo
     * frequency, before saturation) and whether the name holds it.
     */
    const postings = new Map<string, { docs: number[]; xs: number[]; names: boolean[] }>()
    const local = new Map<string, number>()
    const named = new Set<string>()
    tokenized.forEach((fields, doc) => {
      local.clear()
      named.clear()
      fields.forEach((terms, f) => {
        const p = params[f]
        const unit = p.weight / (1 - p.b + (p.b * terms.length) / avg[f])
        for (const raw of terms) {
          // A word used as a name is never folded: "Writer" (a product) is not "write".
          const term = raw.startsWith(NAMED) ? raw : fold(raw)
          local.set(term, (local.get(term) ?? 0) + unit)
          if (f === 0) named.add(term)
        }
      })
      for (const [term, x] of local) {
        if (x <= 0) continue
        let list = postings.get(term)
        if (!list) postings.set(term, (list = { docs: [], xs: [], names: [] }))
        list.docs.push(doc)
        list.xs.push(x)
        list.names.push(named.has(term))
      }
    })
    return { size: n, vocabulary, postings }
  }

  function bm25f(docs: readonly Doc[], t: FieldTuning, built: Snapshot = build(docs, t)): Index {
    const { vocabulary, postings } = built
    const fold = folder(vocabulary)
    const n = docs.length
    const idf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5))
    const nameDf = new Map<string, number>()
    for (const [term, list] of postings) {
      let df = 0
      for (const named of list.names) if (named) df++
      if (df) nameDf.set(term, df)
    }
    /**
     * How many documents hold a word, as a common word or as a name (a document holds it one way only): the idf of
     * "user" is that of the word, whether or not a few descriptions capitalize it.
     */
    const bare = (term: string) => (term.startsWith(NAMED) ? term.slice(NAMED.length) : term)
    const df = (term: string) =>
      (postings.get(bare(term))?.docs.length ?? 0) + (postings.get(NAMED + bare(term))?.docs.length ?? 0)
    const namesDf = (term: string) => (nameDf.get(bare(term)) ?? 0) + (nameDf.get(NAMED + bare(term)) ?? 0)

    /** A word a definition's name holds, or one of the developer lexicon's: a reply naming it may be a request. */
    function topical(word: string, term = Keywords.termOf(word)): boolean {
      return (
        nameDf.has(fold(term)) ||
        nameDf.has(NAMED + term) ||
        DiscoveryLexicon.related(word).length > 0 ||
        DiscoveryLexicon.related(term).length > 0
      )
    }

    /**
     * The prompt as groups of terms: each word of the prompt is a group of its one term (weight 1); the related words
     * of a prompt word (`DiscoveryLexicon.RELATED`) form one group at weight `related`, scored as the best of its terms
     * for each document (a description naming two of them is not worth more than one naming one). A term belongs to
     * the first group that has it.
     */
    function query(prompt: string): Group[] {
      const groups: Group[] = []
      if (Keywords.chatter(prompt, topical)) return groups
      const seen = new Set<string>()
      // The words of an acknowledgement ("great job", "no, that's wrong") are the reply, not the request.
      const reply = Keywords.acknowledged(prompt)
      const words = Keywords.lightTerms(prompt.slice(0, Keywords.MAX_PROMPT_CHARS)).filter((w) => !reply.has(w.word))
      // One or two words that no name and no lexicon entry knows ("makes sense", "fair enough") ask for nothing a
      // definition serves, even when a description happens to use them.
      if (words.length <= UNTOPICAL_WORDS && !words.some((w) => topical(w.word, w.term))) return groups
      for (const { word, term } of words) {
        const folded = fold(term)
        // A bare number ("42" of a line number, "800" lines) names nothing a definition is about.
        if (seen.has(folded) || /^\d+$/.test(term)) continue
        seen.add(folded)
        // The word as written also finds the documents that use it as a name (not the folded form: "pointer" is
        // folded onto "point", and must not find the "point" of "SharePoint").
        const named = NAMED + term
        const terms = seen.has(named) ? [folded] : [folded, named]
        seen.add(named)
        groups.push({ terms, weight: 1, word })
      }
      for (const { word } of words) {
        const related = DiscoveryLexicon.related(word)
        if (!related.length) continue
        const terms: string[] = []
        for (const r of related) {
          const term = Keywords.termOf(r)
          const folded = fold(term)
          if (!seen.has(folded)) {
            seen.add(folded)
            terms.push(folded)
          }
          // A word of a family ("writer" of documentation, "fix" of debugging) is common vocabulary: it does not find
          // a product of that name. A related word of its own ("container" → docker) names a thing and finds it.
          const named = NAMED + term
          if (!DiscoveryLexicon.family(r) && !seen.has(named)) {
            seen.add(named)
            terms.push(named)
          }
        }
        if (terms.length) groups.push({ terms, weight: t.related, word })
      }
      return groups
    }

    type Group = { terms: string[]; weight: number; word: string }
    /** Scores of every document holding a term of `groups`, and the prompt's idf mass (the most a document scores). */
    function score(groups: Group[]) {
      const scores = new Map<number, { score: number; matched: string[] }>()
      let mass = 0
      const best = new Map<number, number>()
      const docX = new Map<number, number>()
      const docNamed = new Set<number>()
      const words = new Map<string, { plain: boolean; named: boolean }>()
      for (const { terms, weight, word } of groups) {
        best.clear()
        let most = 0
        // A word's postings as a common word and as a name are one word's: a document's frequencies are summed.
        words.clear()
        for (const term of terms) {
          const key = bare(term)
          const forms = words.get(key) ?? { plain: false, named: false }
          if (term === key) forms.plain = true
          else forms.named = true
          words.set(key, forms)
        }
        for (const [key, forms] of words) {
          const lists = [
            forms.plain ? postings.get(key) : undefined,
            forms.named ? postings.get(NAMED + key) : undefined,
          ]
          if (!lists[0] && !lists[1]) continue
          const w = weight * idf(df(key))
          // The most a document can score on this word (x → ∞).
          most = Math.max(most, w * (t.k1 + 1))
          const names = namesDf(key)
          const bonus = t.nameBonus && names ? t.nameBonus * weight * idf(names) : 0
          const [plain, named] = lists
          if (plain && named) {
            docX.clear()
            docNamed.clear()
            for (const list of lists as Posting[]) {
              for (let i = 0; i < list.docs.length; i++) {
                const doc = list.docs[i]
                docX.set(doc, (docX.get(doc) ?? 0) + list.xs[i])
                if (list.names[i]) docNamed.add(doc)
              }
            }
            for (const [doc, x] of docX) {
              const s = (w * x * (t.k1 + 1)) / (x + t.k1) + (docNamed.has(doc) ? bonus : 0)
              if (s > (best.get(doc) ?? 0)) best.set(doc, s)
            }
            continue
          }
          // The common case: the word is written one way only.
          const list = (plain ?? named)!
          for (let i = 0; i < list.docs.length; i++) {
            const x = list.xs[i]
            const s = (w * x * (t.k1 + 1)) / (x + t.k1) + (list.names[i] ? bonus : 0)
            const doc = list.docs[i]
            if (s > (best.get(doc) ?? 0)) best.set(doc, s)
          }
        }
        mass += most
        for (const [doc, s] of best) {
          const entry = scores.get(doc)
          if (entry) {
            entry.score += s
            if (!entry.matched.includes(word)) entry.matched.push(word)
          } else scores.set(doc, { score: s, matched: [word] })
        }
      }
      return { scores, mass }
    }

    const index: Index = {
      strategy: "bm25f",
      size: n,
      select,
      search(prompt, options = {}) {
        const { scores, mass } = score(query(prompt))
        const floor = Math.max((options.coverage ?? t.coverage) * mass, t.minScore, Number.MIN_VALUE)
        const hits = [...scores]
          .map(([index, e]) => ({ index, score: round(e.score), matched: e.matched }))
          .filter((h) => h.score >= floor)
          .sort((a, b) => b.score - a.score || a.index - b.index)
        return options.all ? hits : select(hits, options)
      },
    }
    snapshots.set(index, built)
    return index

    function select(all: readonly Hit[], options: SearchOptions = {}): Hit[] {
      // A generic verb ("remove", "fix", "log") says what to do, the prompt's other words what to do it to: when some
      // hit matches one of those, a hit that matches only generic verbs ("remove", a command removing tasks, for
      // "remove the console.log statements") is about something else. Judged among the hits the caller keeps (a
      // protected item moves nothing).
      const object = (h: Hit) =>
        options.named?.has(h.index) || h.matched.some((w) => !DiscoveryLexicon.GENERIC_VERBS.has(w))
      const hits = all.some(object) ? all.filter(object) : all
      if (!hits.length) return []
      const relative = hits[0].score * (options.relativeCut ?? t.relativeCut)
      const groupCut = options.groupCut ?? t.groupCut
      const best = new Map<string | undefined, number>()
      for (const h of hits) if (!best.has(docs[h.index].group)) best.set(docs[h.index].group, h.score)
      return hits
        .filter((h) => h.score >= relative && h.score >= groupCut * best.get(docs[h.index].group)!)
        .slice(0, t.maxHits)
    }
  }

  function round(x: number) {
    return Math.round(x * 1000) / 1000
  }
}
