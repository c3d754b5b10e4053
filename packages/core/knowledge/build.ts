import { DynamicDiscovery } from "../discovery/discover"
import { Keywords } from "../discovery/keywords"
import { DiscoveryMatch } from "../discovery/match"
import type { Host } from "../host"
import type { LearningStore } from "../learning/store"
import type { Resource } from "../resource/schema"
import { ResourceFetch } from "../resource/fetch"

/**
 * The knowledge block injected into a session: the project's learnings (what the user corrected, decided and
 * prefers) and the knowledge-base articles relevant to the first prompt, within a token budget. Deterministic: the
 * same learnings, resources and prompt give the same bytes, so a session's request prefix stays cacheable.
 *
 * Tokens are estimated at one per 3 characters (English prose and code run at 3.5–4.5 with the common tokenizers),
 * so the block stays under its budget whatever the model's tokenizer.
 *
 * @example
 * const text = KnowledgeBuild.block({ prompt: "deploy it", learnings, resources, budget: 1000, ... })
 * // "<project-knowledge>\nLearned from the user in earlier sessions …"
 */
export namespace KnowledgeBuild {
  export const OPEN = "<project-knowledge>"
  export const CLOSE = "</project-knowledge>"

  export const tokens = (text: string) => Math.ceil(text.length / 3)

  /**
   * An article's content is framed by these lines (the id in the opening one), so a later release of the resource
   * can take exactly that content out of the stored block. A body line equal to the closing one is indented by a space.
   */
  export const ARTICLE_OPEN = (id: string) => `<article id="${id}">`
  export const ARTICLE_CLOSE = "</article>"
  const article = (id: string, text: string) =>
    [ARTICLE_OPEN(id), ...text.split("\n").map((l) => (l === ARTICLE_CLOSE ? ` ${l}` : l)), ARTICLE_CLOSE].join("\n")

  /**
   * The block with the content of the `released` articles replaced by one line each; the same text when none of
   * them is in it.
   *
   * @example
   * KnowledgeBuild.withoutArticles(block, new Set(["git-operations"]))
   * // "… - git-operations: released (resource-load git-operations brings it back) …"
   */
  export function withoutArticles(text: string, released: ReadonlySet<string>): string {
    if (!released.size || !text.includes(ARTICLE_CLOSE)) return text
    const lines = text.split("\n")
    const out: string[] = []
    for (let i = 0; i < lines.length; i++) {
      const id = /^<article id="([^"]+)">$/.exec(lines[i])?.[1]
      const end = id === undefined ? -1 : lines.indexOf(ARTICLE_CLOSE, i + 1)
      if (id === undefined || end < 0 || !released.has(id)) {
        out.push(lines[i])
        continue
      }
      out.push(`- ${id}: released (resource-load ${id} brings it back)`)
      i = end
    }
    return out.join("\n")
  }

  export type Input = {
    prompt: string
    learnings: readonly LearningStore.Learning[]
    resources: readonly Resource.Metadata[]
    /** Token budget of the whole block (0: nothing). */
    budget: number
    /** At most this many learnings… */
    maxLearnings: number
    /** …within this many tokens. */
    learningsBudget: number
    /** Reads a resource's body for the model (undefined: not readable or protected). */
    content: (resource: Resource.Metadata) => Promise<string | undefined>
  }

  const KIND: Record<string, string> = { correction: "Correction", decision: "Decision", preference: "Preference" }

  /** Learnings ordered for a prompt: shared terms first, then kind priority, count and recency (the store's order). */
  export function rankLearnings(prompt: string, learnings: readonly LearningStore.Learning[]) {
    const wanted = new Set(Keywords.terms(prompt))
    const overlap = (l: LearningStore.Learning) => Keywords.terms(l.text).filter((t) => wanted.has(t)).length
    return learnings
      .map((l, i) => ({ l, i, o: overlap(l) }))
      .sort((a, b) => b.o - a.o || a.i - b.i)
      .map((x) => x.l)
  }

  /**
   * Injected articles are stored in the session and repeated in every later request, so they need more evidence than
   * a discovery suggestion: a hit must reach this share of what the prompt could score (discovery: 0.12), and share
   * two words with the prompt, or one that only this article's title holds ("how does pagination work?" finds
   * Pagination), or one that is most of what the prompt asks (`SINGLE_WORD_COVERAGE`: "deploy" finds both deploy
   * articles). "server", "return" or "conflicts" shared by chance find nothing. An article named by its title whole in
   * a prompt naming several is judged against its part of the prompt (see `rankResources`). Chosen on
   * `test/knowledge/fixtures/fastmcp-servers.json` (`knowledge/rank.test.ts` prints the figures).
   */
  export const COVERAGE = 0.25
  export const SINGLE_WORD_COVERAGE = 0.6

  /**
   * Words that say what kind of page a title heads, not its topic ("Async Support", "Migration Guide", "API
   * Reference"): a prompt names such an article without them.
   */
  export const TITLE_GENRE: ReadonlySet<string> = new Set(
    "support guide overview introduction intro basics reference usage tips faq concepts documentation docs notes"
      .split(" ")
      .map(Keywords.termOf),
  )

  /**
   * Knowledge-base articles relevant to the prompt, best first, at most `DiscoveryMatch.FIELD_TUNING.maxHits`: the
   * discovery matcher (`DiscoveryMatch`, BM25F with idf over the knowledge base, the title weighted above the tags and
   * the description, as discovery ranks project resources) with its cut relative to the best hit, and the stricter
   * evidence of `COVERAGE`. A word most articles share ("server", "test") weighs next to nothing, so a prompt about
   * something else gets no article.
   *
   * @example
   * KnowledgeBuild.rankResources("How do I add logging middleware?", kb).map((r) => r.id) // ["middleware", "logging"]
   * KnowledgeBuild.rankResources("Fix the failing test in src/git/tests/test_server.py", kb) // []
   */
  export function rankResources(prompt: string, resources: readonly Resource.Metadata[]): Resource.Metadata[] {
    const articles = resources.filter((r) => r.type === "knowledge-base")
    if (!articles.length || !prompt.trim()) return []
    const docs = DynamicDiscovery.documents({ items: [], resources: articles })
    const fields = { ...DiscoveryMatch.FIELD_TUNING, coverage: COVERAGE }
    const index = DiscoveryMatch.index(docs, "bm25f", DiscoveryMatch.TUNING, fields)
    const titles = docs.map((d) => new Set(Keywords.lightTerms(d.name).map((t) => t.term)))
    /** The word is in this article's title and in no other's. */
    const names = (i: number, word: string) => {
      const term = Keywords.termOf(word)
      return titles[i].has(term) && titles.filter((t) => t.has(term)).length === 1
    }
    const rank = (text: string) => {
      const most = new Set(index.search(text, { coverage: SINGLE_WORD_COVERAGE, all: true }).map((h) => h.index))
      return index
        .search(text, { named })
        .filter((h) => h.matched.length >= 2 || names(h.index, h.matched[0]) || most.has(h.index))
    }
    // A prompt that names several articles by their titles ("timeouts on the async client": Timeouts, Async Support,
    // Clients) asks several things; `COVERAGE` measured against all of them leaves each article a share too small to
    // qualify. Such an article is then judged with the prompt less the other named articles' title words. An article
    // is named by its title whole (`TITLE_GENRE` words aside, and words another title holds too), not by one word of
    // it: "code" does not name Code of Conduct, nor "variable" Environment Variables, and a prompt naming fewer than
    // two articles is judged whole, as it was. Words the knowledge base does not hold weigh nothing in a prompt's
    // score, so one word of a title was all of the score of "rename the … code" less its other topic words (tester R,
    // R6).
    const said = new Set(Keywords.lightTerms(prompt).map((t) => t.term))
    // The words of the article's own title (the indexed name may carry its id too: "HTTP/2 http2").
    const distinctive = (i: number) =>
      Keywords.lightTerms(articles[i].name)
        .map((t) => t.term)
        .filter((t) => !TITLE_GENRE.has(t) && titles.filter((o) => o.has(t)).length === 1)
    const named = new Set<number>()
    for (const h of index.search(prompt, { coverage: 0, all: true }))
      if (h.matched.some((w) => names(h.index, w))) {
        const own = distinctive(h.index)
        if (own.length && own.every((t) => said.has(t))) named.add(h.index)
      }
    const hits = rank(prompt)
    if (named.size < 2) return hits.map((h) => articles[h.index])
    const best = new Map(hits.map((h) => [h.index, h.score]))
    for (const i of named) {
      if (best.has(i)) continue
      const others = new Set([...named].filter((o) => o !== i).flatMap((o) => [...titles[o]]))
      // By terms, not by the words as typed: a phrase is one term ("times out" is "timeout").
      const part = Keywords.lightTerms(prompt)
        .filter((t) => !others.has(t.term))
        .map((t) => t.word)
        .join(" ")
      const hit = rank(part).find((h) => h.index === i)
      if (hit) best.set(i, hit.score)
    }
    return [...best]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, DiscoveryMatch.FIELD_TUNING.maxHits)
      .map(([i]) => articles[i])
  }

  /** The block, or "" when there is nothing to say or no budget. */
  export async function block(input: Input): Promise<string> {
    if (input.budget <= 0) return ""
    const frame = tokens(`${OPEN}\n\n${CLOSE}`)
    let left = input.budget - frame
    const sections: string[] = []

    const learningLines: string[] = []
    let learningLeft = Math.min(input.learningsBudget, left)
    const learningHead = "Learned from the user in earlier sessions of this project (follow unless told otherwise):"
    learningLeft -= tokens(learningHead) + 1
    for (const l of rankLearnings(input.prompt, input.learnings)) {
      if (learningLines.length >= input.maxLearnings) break
      const line = `- ${KIND[l.kind] ?? l.kind}${l.count > 1 ? ` (said ${l.count} times)` : ""}: ${l.text}`
      const cost = tokens(line) + 1
      if (cost > learningLeft) continue
      learningLeft -= cost
      learningLines.push(line)
    }
    if (learningLines.length) {
      const text = [learningHead, ...learningLines].join("\n")
      sections.push(text)
      left -= tokens(text) + 2
    }

    const head = "Project knowledge base (resource-load <id> loads an article in full):"
    const resourceParts: string[] = []
    let headCost = tokens(head) + 2
    for (const r of rankResources(input.prompt, input.resources)) {
      const line = `- ${r.id}: ${r.description ?? r.name}`
      const body = await input.content(r)
      const full = body ? article(r.id, `## ${r.id}: ${r.name}\n${body.trim()}`) : undefined
      if (full && tokens(full) + 1 + headCost <= left) {
        resourceParts.push(full)
        left -= tokens(full) + 1
      } else if (tokens(line) + 1 + headCost <= left) {
        resourceParts.push(line)
        left -= tokens(line) + 1
      } else continue
      left -= headCost
      headCost = 0
    }
    if (resourceParts.length) sections.push([head, ...resourceParts].join("\n"))

    if (!sections.length) return ""
    return `${OPEN}\n${sections.join("\n\n")}\n${CLOSE}`
  }

  /**
   * A resource's body for the block, read as `resource-load` reads it (inside the project, allowed by the security
   * check, within the size limit, frontmatter stripped), then redacted (`redact`) as `resource-load`'s output is:
   * the knowledge feature passes `LocalState.fileRedactor`, which takes out segments the role may not read (`read` or
   * `llm`), not only what the `llm` scan finds.
   */
  export async function readBody(
    root: string,
    host: Pick<Host, "access">,
    resource: Resource.Metadata,
    redact: (text: string) => string,
    maxFileSize = 64 * 1024,
  ): Promise<string | undefined> {
    if (resource.type === "schema") return undefined
    const read = await ResourceFetch.read(resource, { root, access: host.access, maxFileSize, fileReadTimeout: 2_000 })
    return read.ok ? redact(read.content) : undefined
  }
}
