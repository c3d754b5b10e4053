import { Discovery } from "./schema"
import { DiscoveryFormat } from "./format"

/**
 * `memory think <create|add|counter|branch|conclude>` prompts: detection, the text to match (the thought itself, not
 * the command words), and the memory-think view of the matches with usage guidance for `--agent` and `--style`.
 *
 * @example
 * MemoryThink.detect("memory think add 'cache invalidation risk'") // { pattern: "add", topic: "'cache invalidation risk'" }
 * MemoryThink.detect("what do you think?") // undefined
 */
export namespace MemoryThink {
  export type Detection = {
    pattern: Discovery.MemoryThinkPattern
    /** The prompt without the `memory think <command>` words: what the thought is about. */
    topic: string
  }

  /**
   * The memory-think command of a prompt and its thought, or undefined.
   *
   * @example
   * MemoryThink.detect("memory think branch 'use a queue'") // { pattern: "branch", topic: "'use a queue'" }
   */
  export function detect(prompt: string): Detection | undefined {
    const match = Discovery.MEMORY_THINK_PATTERN.exec(prompt)
    if (!match) return undefined
    const pattern = match[1].toLowerCase() as Discovery.MemoryThinkPattern
    const topic = (prompt.slice(0, match.index) + " " + prompt.slice(match.index + match[0].length))
      .replace(/\s+/g, " ")
      .trim()
    return { pattern, topic }
  }

  /** Example thought per command, used when the prompt carries none. */
  const EXAMPLE_TOPIC: Record<Discovery.MemoryThinkPattern, string> = {
    create: "the question to think through",
    add: "a consideration",
    counter: "this approach",
    branch: "an alternative view",
    conclude: "what we decided",
  }

  /**
   * The memory-think context for a detected prompt and the prompt's matched agents and output styles.
   *
   * @example
   * MemoryThink.context(MemoryThink.detect(prompt)!, ctx.matchedAgents, ctx.matchedOutputStyles).usageGuidance
   */
  export function context(
    detection: Detection,
    agents: readonly Discovery.MatchedItem[],
    styles: readonly Discovery.MatchedItem[],
  ): Discovery.MemoryThinkContext {
    const suggestedAgents = agents.slice(0, Discovery.MAX_SUGGESTIONS)
    const suggestedStyles = styles.slice(0, Discovery.MAX_SUGGESTIONS)
    return {
      pattern: detection.pattern,
      suggestedAgents,
      suggestedStyles,
      usageGuidance: guidance(detection, suggestedAgents, suggestedStyles),
    }
  }

  function guidance(
    detection: Detection,
    agents: readonly Discovery.MatchedItem[],
    styles: readonly Discovery.MatchedItem[],
  ): string {
    const topic = quote(shortTopic(detection.topic) || EXAMPLE_TOPIC[detection.pattern])
    const cmd = `memory think ${detection.pattern} ${topic}`
    const lines = [
      `Consider using --agent <name> for domain expertise or --style <name> for perspective.`,
      ...(agents.length
        ? ["", "Suggested agents:", ...agents.map((m) => `- ${cmd} --agent ${DiscoveryFormat.inline(m.item.name)}`)]
        : []),
      ...(styles.length
        ? ["", "Suggested styles:", ...styles.map((m) => `- ${cmd} --style ${DiscoveryFormat.inline(m.item.name)}`)]
        : []),
    ]
    if (!agents.length && !styles.length) lines.push("", `Example: ${cmd} --agent <name> --style <name>`)
    return lines.join("\n")
  }

  /** The thought without surrounding quotes or flags, at most 60 characters. */
  function shortTopic(topic: string) {
    const bare = topic
      .replace(/\s--?(agent|style)(\s+|=)\S+/g, "")
      .trim()
      .replace(/^["'“‘]|["'”’]$/g, "")
      .trim()
    return bare.length > 60 ? bare.slice(0, 59).trimEnd() + "…" : bare
  }

  function quote(text: string) {
    return `'${text.replace(/'/g, "’")}'`
  }
}
