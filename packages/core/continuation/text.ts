/**
 * What a message says about continuing: does the model's final text hand the turn to the user (a question, a request
 * to confirm or choose, or to act: "Please run `gh auth login` and tell me when it's done"), and does the user's
 * message ask the agent to stop? Both err towards "yes": a false "yes" costs one continuation that would not have
 * happened, a false "no" sends the model on while the user was asked.
 *
 * @example
 * ContinuationText.asksUser("Done with the parser. Should I also update the docs?") // true
 * ContinuationText.userStops("stop, I'll take it from here") // true
 */
export namespace ContinuationText {
  const FENCE = /```[\s\S]*?(```|$)|~~~[\s\S]*?(~~~|$)/g
  /** Inline code and double-quoted text: what the message quotes (an error text, a template) is not said to the user. */
  const QUOTED = /`[^`\n]*`|"[^"\n]*"|\u201c[^\u201d\n]*\u201d|(?<=^|[\s(:])'[^'\n]+'(?=[\s.,;:!?)]|$)/g
  const ASKS =
    /\b(let me know|would you like|would you prefer|do you want|do you prefer|should I|shall I|may I|can I proceed|(can|could) you (please )?(confirm|clarify|provide|tell|check|share|choose|decide)|please (confirm|advise|clarify|let me know|choose|decide|review)|which (one|option|approach)|waiting for (your|you)|your (call|decision|input|confirmation|approval)|before I (continue|proceed))\b/i
  /**
   * A request that the user act or provide something: "please …" (not "please note/see"), "tell me / ping me when …",
   * "I need you to …", "I need the key to continue", blocked ("I can't proceed without …", "waiting on you"),
   * "once you have …, I'll …", "you'll need to …".
   */
  const REQUESTS = [
    /\b(please|kindly)\b(?!\s+(note|see|find)\b)/i,
    /\b(tell|ping|notify|message|give|send|show|get back to) me\b/i,
    /\bI (still )?need (you|your)\b/i,
    /\bI('d| would)? (still )?need (?!to\b)(the|a|an|some|access)\b/i,
    /\b(on|from) your (side|end)\b|\b(action|input) (needed|required)\b/i,
    /\bI need (?!to\b)[^.!?;\n]{1,60}\bto (continue|proceed|go on|finish|move on)\b/i,
    /\b(I'?m|I am) (blocked|stuck)\b|^\W*blocked\b/i,
    /\b(can'?t|cannot|can not|couldn'?t|unable to|not able to) (proceed|continue|go on|go further|move on|get past)\b/i,
    /\bwaiting (on|for) (you|your)\b/i,
    /\b(once|when|as soon as|after) you('ve|'re| have| are)?\b[^.!?\n]*\b(I'll|I will|I can|let me know|tell me)\b/i,
    /\byou('ll| will) (need|have) to\b/i,
  ]
  /** A sentence that starts with one of these verbs (outside a list, not a heading like "Check:") asks the user to act. */
  const IMPERATIVE =
    /^\W*((please|just|then)\s+)?(run|provide|add|export|install|log in|sign in|start|restart|grant|give|share|send|paste|confirm|approve|choose|pick|decide|tell|double-check|verify|create|enable|upload|open|click|enter|type|make sure|clone|generate|rotate|reply|answer|wait)\b(?!:)/i

  /**
   * True when the end of `text` (its last paragraph, outside code blocks and quotes) asks the user something: a
   * question, or a request that the user act or provide something before the work can go on.
   */
  export function asksUser(text: string): boolean {
    const prose = text.replace(FENCE, " ").trim()
    if (!prose) return false
    const blocks = prose.split(/\n\s*\n/).filter((b) => b.trim())
    const last = (blocks.at(-1) ?? "").slice(-600)
    if (/\?\s*[)*_`"'\]]*\s*$/.test(last)) return true
    // Typographic apostrophes as ASCII ones ("I’m blocked", "can’t proceed").
    const said = last.replace(/\u2019/g, "'").replace(QUOTED, "code")
    // A question anywhere in the last paragraph (e.g. "Should I …? I can also …").
    if (/\?(\s|$)/.test(said)) return true
    if (ASKS.test(said) || REQUESTS.some((r) => r.test(said))) return true
    return said
      .split(/\n/)
      .filter((line) => !/^\s*([-*+]|\d+[.)])\s/.test(line))
      .flatMap((line) => line.split(/(?<=[.!;:\u2014])\s+/))
      .some((sentence) => IMPERATIVE.test(sentence))
  }

  const STOP_START =
    /^\W*(stop|halt|pause|hold on|hold off|wait|cancel|abort|enough|no more|don'?t continue|do not continue|don'?t proceed|do not proceed|that'?s (all|enough))\b/i
  const STOP_ANYWHERE =
    /\b(stop (here|now|working|there|for now)|don'?t (continue|proceed|keep going)|do not (continue|proceed|keep going)|no need to continue|pause (here|now|for now))\b/i

  /** True when a (short) user message asks the agent to stop. */
  export function userStops(text: string): boolean {
    const t = text.trim()
    if (!t || t.length > 200) return false
    return STOP_START.test(t) || STOP_ANYWHERE.test(t)
  }
}
