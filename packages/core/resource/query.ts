import { lastAtMost } from "../util/sorted"
import z from "zod"
import { formatBytes } from "./format"
import { ResourceIndex } from "./indexer"
import { Resource } from "./schema"

/**
 * Searching the index. Filters (type, domain, tags with AND, referencing agent/command) narrow through the secondary
 * indexes; the query text is split into words that must all match somewhere (case-insensitive); when no resource has
 * them all, those with the most of them are given, marked `partial`. Ranking: matches in
 * the id or name weigh most, then tags, then the description, then type/domain/category; an exact id wins outright.
 * Ties are broken by name, then id.
 *
 * @example
 * const result = ResourceQuery.run(index, { query: "git commit", tags: ["vcs"], limit: 5 })
 * result.results.map((r) => r.id) // ["pre-commit", "git-operations"]
 */
export namespace ResourceQuery {
  export const MAX_LIMIT = 50

  export const Args = z.object({
    type: z.enum([...Resource.TYPES, "all"]).optional(),
    query: z.string().optional(),
    domain: Resource.Domain.optional(),
    tags: z.array(z.string()).optional(),
    referencedBy: z.string().optional(),
    limit: z.number().int().min(1).max(MAX_LIMIT).default(10),
  })
  export type Args = z.input<typeof Args>

  export type Item = {
    id: string
    type: Resource.Type
    name: string
    domain: Resource.Domain
    description?: string
    tags: string[]
    path: string
    size: string
  }

  export type Result = {
    results: Item[]
    total: number
    showing: number
    hint: string
    /**
     * Set when no resource matched every query word and the results are those matching some of them, the most words
     * first (then by the usual ranking); `total` counts those.
     */
    partial?: true
  }

  export function words(text: string | undefined): string[] {
    return (text ?? "").toLowerCase().split(/\s+/).filter(Boolean)
  }

  function intersect(a: Set<string> | undefined, b: Set<string> | undefined): Set<string> {
    if (!a || !b) return new Set()
    const [small, large] = a.size <= b.size ? [a, b] : [b, a]
    const out = new Set<string>()
    for (const x of small) if (large.has(x)) out.add(x)
    return out
  }

  function referencing(index: ResourceIndex.Index, name: string): Set<string> | undefined {
    const exact = index.byReference.get(name)
    if (exact) return exact
    const lower = name.toLowerCase()
    for (const [key, ids] of index.byReference) if (key.toLowerCase() === lower) return ids
    return undefined
  }

  /** Ids passing the filters, or undefined for "every resource" (no filter given). */
  function candidates(index: ResourceIndex.Index, args: z.output<typeof Args>): Set<string> | undefined {
    let set: Set<string> | undefined
    const narrow = (next: Set<string> | undefined) => {
      set = set === undefined ? new Set(next ?? []) : intersect(set, next)
    }
    if (args.type && args.type !== "all") narrow(index.byType.get(args.type))
    if (args.domain) narrow(index.byDomain.get(args.domain))
    for (const tag of args.tags ?? []) if (tag.trim()) narrow(index.byTag.get(tag.trim().toLowerCase()))
    if (args.referencedBy) narrow(referencing(index, args.referencedBy))
    return set
  }

  export function score(hay: ResourceIndex.Haystack, terms: string[], phrase: string): number {
    let total = hay.id === phrase ? 1000 : 0
    for (const term of terms) {
      if (!hay.all.includes(term)) return 0
      let s = 0
      if (hay.id === term) s += 12
      else if (hay.id.includes(term)) s += hay.id.startsWith(term) ? 9 : 8
      if (hay.name.includes(term)) s += 6
      if (hay.tags.includes(term)) s += 4
      if (hay.description.includes(term)) s += 2
      if (hay.rest.includes(term)) s += 1
      if (s === 0) return 0
      total += s
    }
    return total
  }

  /** Positions (in `index.text`) of the resources whose text contains `word`: `indexOf` over the joined bytes. */
  function containing(index: ResourceIndex.Index, word: string): number[] {
    const { bytes, starts } = index.text
    const needle = Buffer.from(word)
    const out: number[] = []
    let from = 0
    while (true) {
      const at = bytes.indexOf(needle, from)
      if (at < 0) return out
      const lo = lastAtMost(starts, at)
      out.push(lo)
      // Continue after this resource's text: each resource is reported once.
      from = lo + 1 < starts.length ? starts[lo + 1] : bytes.length
    }
  }

  type Scored = { meta: Resource.Metadata; score: number }

  /** Negative when (score a, meta a) ranks before b: by score, then name, then id. */
  function better(aScore: number, a: Resource.Metadata, b: Scored) {
    return (
      b.score - aScore ||
      (a.name < b.meta.name ? -1 : a.name > b.meta.name ? 1 : 0) ||
      (a.id < b.meta.id ? -1 : a.id > b.meta.id ? 1 : 0)
    )
  }

  /**
   * A resource's score when it matches only some query words: each word it matches counts far above any ranking
   * within a word, so more words always rank first; 0 when it matches none.
   */
  function partialScore(hay: ResourceIndex.Haystack, terms: string[]): number {
    let matched = 0
    let total = 0
    for (const term of terms) {
      const s = score(hay, [term], "")
      if (s > 0) (matched++, (total += s))
    }
    return matched ? matched * 10_000 + total : 0
  }

  export function run(index: ResourceIndex.Index, input: Args): Result {
    const args = Args.parse(input)
    const terms = words(args.query)
    const filtered = candidates(index, args)
    const all = search(index, args, terms, filtered, false)
    if (all.total > 0 || terms.length < 2) return all
    // No resource has every word (a page about backends titled "Terminal" for "terminal backend"): the ones with
    // the most of them, said so, rather than nothing.
    const some = search(index, args, terms, filtered, true)
    return some.total ? { ...some, partial: true } : all
  }

  function search(
    index: ResourceIndex.Index,
    args: z.output<typeof Args>,
    terms: string[],
    filtered: Set<string> | undefined,
    partial: boolean,
  ): Result {
    const phrase = terms.join(" ")
    const top: Scored[] = []
    let total = 0
    // Keep only the best `limit` in order while counting every match: no full sort of thousands of results.
    const consider = (meta: Resource.Metadata, hay: ResourceIndex.Haystack) => {
      const s = !terms.length ? 1 : partial ? partialScore(hay, terms) : score(hay, terms, phrase)
      if (s <= 0) return
      total++
      if (top.length === args.limit && better(s, meta, top[top.length - 1]) >= 0) return
      let i = top.length
      while (i > 0 && better(s, meta, top[i - 1]) < 0) i--
      top.splice(i, 0, { meta, score: s })
      if (top.length > args.limit) top.pop()
    }
    if (filtered) {
      for (const id of filtered) consider(index.resources.get(id)!, index.haystack.get(id)!)
    } else if (partial) {
      // Every resource holding at least one of the words, each once.
      const at = new Set<number>()
      for (const term of new Set(terms)) for (const i of containing(index, term)) at.add(i)
      for (const i of [...at].sort((a, b) => a - b))
        consider(ResourceIndex.metaAt(index, i), ResourceIndex.hayAt(index, i))
    } else if (terms.length) {
      // Without filters, start from the resources containing the longest (most selective) word.
      const longest = terms.reduce((a, b) => (b.length > a.length ? b : a))
      for (const i of containing(index, longest))
        consider(ResourceIndex.metaAt(index, i), ResourceIndex.hayAt(index, i))
    } else {
      for (const [id, meta] of index.resources) consider(meta, index.haystack.get(id)!)
    }
    const shown = top.map(({ meta }) => ({
      id: meta.id,
      type: meta.type,
      name: meta.name,
      domain: meta.domain,
      description: meta.description,
      tags: meta.tags,
      path: meta.relativePath,
      size: formatBytes(meta.size),
    }))
    const note = partial
      ? `No resource matches every word of "${phrase}"; these match some of them, the most words first. `
      : ""
    return { results: shown, total, showing: shown.length, hint: note + hint(index, total, shown.length) }
  }

  /** The hint's advice to the model; the command line, which has no resource-load, replaces it. */
  export const LOAD = "Use resource-load with an id to fetch the full content."

  function hint(index: ResourceIndex.Index, total: number, showing: number) {
    if (index.resources.size === 0)
      return `No resources in this project. Add markdown files under .opencode/{${Resource.TYPES.filter((t) => t !== "schema").join(",")}}/ or JSON schemas under .opencode/schema/.`
    if (total === 0) return "Nothing matched: use fewer query words or drop a filter (every query word must match)."
    if (total > showing)
      return `Showing ${showing} of ${total}: narrow with type, domain or tags, or raise limit (max ${MAX_LIMIT}). ${LOAD}`
    return LOAD
  }
}
