import { stemmer } from "stemmer"
import { Discovery } from "./schema"

/**
 * Words of prompts and resource definitions: tokenizing (camelCase, kebab-case and snake_case split; lower case;
 * stop words dropped), Porter stemming, and keyword extraction for a discovered item (explicit frontmatter keywords,
 * else the description's words, else the file name's).
 *
 * @example
 * Keywords.words("Review my pull-request") // ["review", "pull", "request"]
 * Keywords.extract({ name: "db-migrator", description: "" }) // { keywords: ["db", "migrator"], source: "filename" }
 */
export namespace Keywords {
  /**
   * English function words, plus words every request to a coding agent contains ("please", "help", "code" is kept:
   * it discriminates between agents). Written for this project.
   */
  export const STOP_WORDS: ReadonlySet<string> = new Set(
    (
      "a about above after again against all also am an and any are aren as at be because been before being below " +
      "between both but by can cannot could couldn did didn do does doesn doing don down during each either else " +
      "etc even ever every few for from further get gets getting got had hadn has hasn have haven having he her here " +
      "hers herself him himself his how however i if in into is isn it its itself just let lets like ll me might mine " +
      "more most much must mustn my myself need needs no nor not now of off often on once one only or other ought our " +
      "ours ourselves out over own per please re really s same shall shan she should shouldn so some something such t " +
      "than thank thanks that the their theirs them themselves then there these they thing things this those though " +
      "through to too under until up upon us use used using ve very via want wants was wasn way we well were weren " +
      "what when where whether which while who whom whose why will with within without won would wouldn yes yet you " +
      "your yours yourself yourselves hi hello hey ok okay sure help maybe kind quick quickly lot lots go going " +
      "able try trying make makes made d m y"
    ).split(/\s+/),
  )

  /** Characters of a prompt considered for matching; the rest of a very long prompt (pasted logs) is ignored. */
  export const MAX_PROMPT_CHARS = 8_000

  const SPLIT = /[^\p{L}\p{N}]+/u

  /**
   * Lower-case words of `text`, camelCase split, stop words and one-letter words dropped, in order (duplicates kept).
   *
   * @example
   * Keywords.words("parseHTTPResponse for the DB") // ["parse", "http", "response", "db"]
   */
  export function words(text: string): string[] {
    const spaced = text
      // camelCase / PascalCase boundaries: "fooBar" → "foo Bar", "HTTPServer" → "HTTP Server"
      .replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2")
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
      .toLowerCase()
    const out: string[] = []
    for (const word of spaced.split(SPLIT)) {
      if (word.length < 2 && !/\d/.test(word)) continue
      if (STOP_WORDS.has(word)) continue
      out.push(word)
    }
    return out
  }

  const stems = new Map<string, string>()
  /**
   * The Porter stem of a lower-case word (memoised).
   *
   * @example
   * Keywords.stem("reviewing") // "review"
   */
  export function stem(word: string): string {
    let s = stems.get(word)
    if (s === undefined) {
      s = /^\p{N}+$/u.test(word) || word.length <= 3 ? word : stemmer(word)
      if (stems.size > 50_000) stems.clear()
      stems.set(word, s)
    }
    return s
  }

  /**
   * Stems of `text`'s words, in order.
   *
   * @example
   * Keywords.terms("Reviews deployments") // ["review", "deploy"]
   */
  export function terms(text: string): string[] {
    return words(text).map(stem)
  }

  /**
   * The keywords of a discovered item: explicit ones (frontmatter `keywords`, or `tags`) when given, else the distinct
   * words of the description, else those of the name. At most `KEYWORDS_MAX`, first occurrences first.
   *
   * @example
   * Keywords.extract({ name: "x", description: "", explicit: ["regex"] }) // { keywords: ["regex"], source: "explicit" }
   */
  export function extract(input: {
    name: string
    description: string
    explicit?: readonly string[]
  }): Discovery.KeywordExtractionResult {
    const explicit = distinct((input.explicit ?? []).flatMap(words))
    if (explicit.length) return { keywords: explicit.slice(0, Discovery.KEYWORDS_MAX), source: "explicit" }
    const described = distinct(words(input.description))
    if (described.length) return { keywords: described.slice(0, Discovery.KEYWORDS_MAX), source: "description" }
    return { keywords: distinct(words(input.name)).slice(0, Discovery.KEYWORDS_MAX), source: "filename" }
  }

  function distinct(list: string[]): string[] {
    return [...new Set(list)]
  }
}
