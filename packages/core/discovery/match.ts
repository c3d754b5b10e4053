import { Keywords } from "./keywords"

/**
 * Ranks documents (discovered items and project resources) against a prompt.
 *
 * Three strategies, compared on the labelled prompts in `test/discovery/` (figures in docs/discovery.md):
 * - `overlap`: the spec's keyword overlap — score = number of the item's keywords that appear in the prompt.
 * - `overlap-stem`: the same on Porter stems ("reviewing" meets "review").
 * - `bm25`: BM25 over the name (weight 3), keywords (1) and description (1), on stems, with a relevance floor
 *   relative to the best match so that one incidental shared word does not make a suggestion.
 *
 * `bm25` is the default: it has the best recall@5 and precision@5 on the labelled set.
 *
 * @example
 * const index = DiscoveryMatch.index([{ name: "code-reviewer", keywords: [], description: "Reviews diffs for bugs" }])
 * index.search("please review this diff") // [{ index: 0, score: 2.1, matched: ["review", "diff"] }]
 */
export namespace DiscoveryMatch {
  export type Doc = { name: string; keywords: readonly string[]; description: string }
  export type Hit = {
    /** Position of the document in the indexed list. */
    index: number
    score: number
    /** The prompt's words that matched, as written in the prompt (lower case), first occurrence first. */
    matched: string[]
  }
  export type Strategy = "overlap" | "overlap-stem" | "bm25"
  export const STRATEGIES: readonly Strategy[] = ["overlap", "overlap-stem", "bm25"]
  /** The strategy discovery uses (chosen by the labelled-set evaluation). */
  export const STRATEGY: Strategy = "bm25"

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

  export type Index = {
    strategy: Strategy
    size: number
    /** Hits with a positive score, best first, after the strategy's relevance floor. */
    search(prompt: string): Hit[]
  }

  /** Parameters of `bm25`. */
  export type Tuning = {
    weights: { name: number; keywords: number; description: number }
    k1: number
    b: number
    relativeCut: number
    minScore: number
  }
  export const TUNING: Tuning = { weights: WEIGHTS, k1: K1, b: B, relativeCut: RELATIVE_CUT, minScore: MIN_SCORE }

  /**
   * Builds the index of `docs` for `strategy` (`tuning` applies to `bm25`).
   *
   * @example
   * DiscoveryMatch.index(docs, "overlap").search("review") // the spec's keyword overlap, for comparison
   */
  export function index(docs: readonly Doc[], strategy: Strategy = STRATEGY, tuning: Tuning = TUNING): Index {
    if (strategy === "bm25") return bm25(docs, tuning)
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

  function round(x: number) {
    return Math.round(x * 1000) / 1000
  }
}
