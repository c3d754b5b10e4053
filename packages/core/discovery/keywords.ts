import { stemmer } from "stemmer"
import { DiscoveryLexicon } from "./lexicon"
import { Discovery } from "./schema"

/**
 * Words of prompts and resource definitions: tokenizing (camelCase, kebab-case and snake_case split; lower case;
 * stop words dropped), a light inflectional stemmer (plurals, -ing, -ed; "responsive" stays apart from "response"),
 * the Porter stemmer for the older strategies, and keyword extraction for a discovered item (explicit frontmatter
 * keywords, else the description's words, else the file name's).
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
      "able try trying make makes made d m y " +
      // conversation: acknowledgements and chatter carry no request
      "thx ty cool great good nice fine perfect awesome excellent yeah yep yup nope lol haha wow ah oh hmm uh um " +
      "bye night morning evening cheers sounds looks seems works worked done continue ahead mind never anyway " +
      "everything anything nothing stuff actually also still just basically right now today tomorrow yesterday " +
      "ll'd we'll i'm it's that's what's"
    ).split(/\s+/),
  )

  /** Words that acknowledge, praise or hesitate: a message holding one is a reply in a conversation. */
  export const ACKNOWLEDGEMENTS: ReadonlySet<string> = new Set(
    (
      "thanks thank thx ty cheers ok okay cool great good nice fine perfect awesome excellent brilliant lovely " +
      "yeah yep yup yes no nope sure lol haha wow ah oh hmm hm uh um ugh meh bye " +
      // sign-offs and approvals of chat: "lgtm", "alright", "roger", "gotcha", "noted", "np"
      "lgtm alright alrighty roger gotcha understood noted np kk"
    ).split(" "),
  )
  /**
   * Words of talk about the conversation itself (praise of the work, thinking it over, waiting): in a reply with an
   * acknowledgement they ask for nothing ("nice work!", "hmm, let me think about it", "ok, give me a sec").
   */
  export const CONVERSATION: ReadonlySet<string> = new Set(
    (
      "work job effort think thinking thought idea point guess suppose wonder wait sorry appreciate appreciated love " +
      "glad happy later moment sec second bit minute while again exactly agreed agree true indeed totally " +
      // stepping away: "can we take a break? I'll be back after lunch"
      "break lunch dinner coffee back brb afk weekend vacation holiday"
    ).split(" "),
  )
  /**
   * Words that judge what was just said: after an acknowledgement they are part of the reply ("no, that's wrong"),
   * elsewhere they may describe a symptom ("the totals are wrong").
   */
  export const JUDGEMENTS: ReadonlySet<string> = new Set("wrong incorrect right correct true false mistaken".split(" "))

  /**
   * The words of `text` that belong to an acknowledgement: `CONVERSATION` and `JUDGEMENTS` words following one, with
   * only stop words between ("great job", "nice work", "no, that's wrong", "ok, wait"). They are the reply, not a
   * request: the matcher does not match them ("great job, commit it" is about the commit, not about jobs).
   *
   * @example
   * Keywords.acknowledged("great job, commit it") // Set { "job" }
   * Keywords.acknowledged("no, the totals are wrong") // Set {}
   */
  export function acknowledged(text: string): Set<string> {
    const out = new Set<string>()
    let after = false
    for (const w of tokens(text.slice(0, 500))) {
      if (ACKNOWLEDGEMENTS.has(w)) after = true
      else if (after && (CONVERSATION.has(w) || JUDGEMENTS.has(w))) out.add(w)
      else if (keep(w)) after = false
    }
    return out
  }

  /** Content words a reply may hold besides its acknowledgement when none of them is a topic ("haha fair enough"). */
  export const REPLY_WORDS = 3

  /**
   * True for a reply that asks for nothing: it acknowledges or talks about the conversation (`ACKNOWLEDGEMENTS`, or at
   * least two `CONVERSATION` words: "can we take a break? I'll be back after lunch"), and its other words (leaving out
   * those of the acknowledgement, `acknowledged`: "no, that's wrong") are stop words, or at most `REPLY_WORDS` words none of which names a topic
   * (`topical`: the matcher passes the words of the catalogue's names and of the developer lexicon). Such a prompt gets
   * no suggestion however the descriptions are worded: "appreciate" or "fair" in one description is no request.
   *
   * @example
   * Keywords.chatter("nice work!") // true
   * Keywords.chatter("alright, I'll take it from here", (w) => w === "review") // true
   * Keywords.chatter("ok, now review the diff", (w) => w === "review") // false
   */
  export function chatter(text: string, topical: (word: string) => boolean = () => true): boolean {
    const all = tokens(text.slice(0, 500))
    if (!all.some((w) => ACKNOWLEDGEMENTS.has(w) || CONVERSATION.has(w))) return false
    const reply = acknowledged(text)
    const rest = all.filter((w) => keep(w) && !ACKNOWLEDGEMENTS.has(w) && !CONVERSATION.has(w) && !reply.has(w))
    // Without an acknowledgement, a message is talk about the conversation when two of its words are ("I'll be back
    // after lunch"); one is not enough ("wait for the build", "roll back the deploy").
    const talk = new Set(all.filter((w) => CONVERSATION.has(w))).size
    if (!all.some((w) => ACKNOWLEDGEMENTS.has(w)) && rest.length && talk < 2) return false
    if (!rest.length) return true
    return rest.length <= REPLY_WORDS && !rest.some((w) => topical(w))
  }

  /**
   * Words of a text used as names rather than as common words: the pieces of a compound written in camel case
   * ("SharePoint" → share, point; "useEffect" → effect) and words capitalized inside a sentence ("Automate Fixer tasks
   * via Rube" → fixer, rube), unless the same text also writes the word in lower case. A line of capitalized words is a
   * title ("Test Harness Generator"), not names. The matcher matches such a word only with the word itself: not with a
   * derived form folded onto it ("pointer" is not the "point" of "SharePoint"), nor with the lexicon's families ("fix"
   * is not the Fixer API).
   *
   * @example
   * Keywords.names("Automate Fixer tasks via SharePoint") // Set { "fixer", "share", "point" }
   */
  export function names(text: string): Set<string> {
    const found = new Set<string>()
    const plain = new Set<string>()
    for (const segment of text.split(SEGMENT)) {
      const list = segment.match(WORD)
      if (!list) continue
      const long = list.filter((w) => w.length >= 4 && !/\p{N}/u.test(w))
      const title = long.length > 0 && long.every((w) => /^\p{Lu}/u.test(w))
      list.forEach((w, i) => {
        if (CAMEL.test(w)) for (const piece of tokens(w)) found.add(piece)
        else if (/^\p{Ll}[\p{Ll}\p{N}]*$/u.test(w)) plain.add(w)
        else if (i > 0 && !title && /^\p{Lu}\p{Ll}+$/u.test(w)) found.add(w.toLowerCase())
      })
    }
    for (const w of plain) found.delete(w)
    return found
  }
  /** Where a sentence or a clause set apart ends: a word after it starts a sentence, capitalized or not. */
  const SEGMENT = /[.!?;:](?=\s|$)|[\n()[\]{}"`*#|<>\u2014\u2013]|\s-\s/u
  const WORD = /[\p{L}\p{N}]+/gu
  const CAMEL = /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u

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
    return tokens(text).filter(keep)
  }

  /** Lower-case words of `text`, camelCase split, nothing dropped. */
  function tokens(text: string): string[] {
    // ASCII text without a case boundary (most of it) skips the Unicode expressions, which cost more than the rest.
    if (!NON_ASCII.test(text)) {
      const spaced = CAMEL_ASCII.test(text)
        ? text.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
        : text
      return spaced
        .toLowerCase()
        .split(SPLIT_ASCII)
        .filter((w) => w.length > 0)
    }
    const spaced = text
      // camelCase / PascalCase boundaries: "fooBar" → "foo Bar", "HTTPServer" → "HTTP Server"
      .replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2")
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
      .toLowerCase()
    return spaced.split(SPLIT).filter((w) => w.length > 0)
  }
  const NON_ASCII = /[^\x00-\x7f]/
  const CAMEL_ASCII = /[a-z][A-Z]|[A-Z][A-Z][a-z]/
  const SPLIT_ASCII = /[^a-z0-9]+/

  function keep(word: string): boolean {
    return (word.length >= 2 || /\d/.test(word)) && !STOP_WORDS.has(word)
  }

  const stems = new Map<string, string>()
  /**
   * The Porter stem of a lower-case word (memoised). Aggressive: "responsive" and "response" meet; used by the
   * strategies kept for comparison.
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
   * Porter stems of `text`'s words, in order.
   *
   * @example
   * Keywords.terms("Reviews deployments") // ["review", "deploy"]
   */
  export function terms(text: string): string[] {
    return words(text).map(stem)
  }

  const lights = new Map<string, string>()
  /**
   * A light inflectional stem of a lower-case word (memoised): plurals ("dependencies" → "dependency", "tests" →
   * "test"), -ing and -ed ("debugging" → "debug", "deployed" → "deploy"), and a final "e" dropped so that "write" and
   * "writing" meet ("writ"). Derivations are left alone ("responsive", "response" and "responder" stay apart); the
   * matcher folds "-er", "-ation", "-ment" forms only onto a word its catalogue contains (`DiscoveryMatch`).
   *
   * @example
   * Keywords.light("debugging") // "debug"
   * Keywords.light("responsive") // "responsiv"
   */
  export function light(word: string): string {
    let s = lights.get(word)
    if (s === undefined) {
      s = inflection(word)
      if (lights.size > 50_000) lights.clear()
      lights.set(word, s)
    }
    return s
  }

  const VOWEL = /[aeiouy]/
  function inflection(word: string): string {
    if (word.length <= 3 || /\d/.test(word)) return word
    let w = word
    if (w.endsWith("ies") && w.length > 4) w = w.slice(0, -3) + "y"
    else if (w.endsWith("sses")) w = w.slice(0, -2)
    else if (/(xes|zes|ches|shes)$/.test(w)) w = w.slice(0, -2)
    else if (w.endsWith("s") && !/(ss|us|is|as|os)$/.test(w)) w = w.slice(0, -1)
    if (w.endsWith("ing") && w.length >= 6 && VOWEL.test(w.slice(0, -3))) w = undouble(w.slice(0, -3))
    else if (w.endsWith("ed") && w.length >= 6 && VOWEL.test(w.slice(0, -2)) && !w.endsWith("eed"))
      w = undouble(w.slice(0, -2))
    if (w.endsWith("e") && w.length >= 4) w = w.slice(0, -1)
    return w
  }

  /** "debugg" → "debug", "runn" → "run"; "ll", "ss" and "zz" stay ("install", "class"). */
  function undouble(w: string): string {
    const n = w.length
    if (n >= 4 && w[n - 1] === w[n - 2] && !/[lsz]/.test(w[n - 1]) && !VOWEL.test(w[n - 1])) return w.slice(0, -1)
    return w
  }

  /**
   * The terms of `text` for the `bm25f` matcher: phrases of the lexicon joined ("end-to-end" → "e2e"), words split
   * and stop words dropped, spellings of one thing folded ("k8s" → "kubernetes"), light stems. `word` is the word as
   * written (lower case), `term` what is matched.
   *
   * @example
   * Keywords.lightTerms("Write end-to-end tests for k8s").map((t) => t.term) // ["writ", "e2e", "test", "kubernet"]
   */
  export function lightTerms(text: string): { word: string; term: string }[] {
    return DiscoveryLexicon.phrases(tokens(text))
      .filter(keep)
      .map((word) => ({ word, term: termOf(word) }))
  }

  /**
   * The term of one lower-case word: its spelling folded by the lexicon's abbreviations, then its light stem.
   *
   * @example
   * Keywords.termOf("k8s") // "kubernet"
   */
  export function termOf(word: string): string {
    return light(DiscoveryLexicon.ABBREVIATIONS.get(word) ?? word)
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
