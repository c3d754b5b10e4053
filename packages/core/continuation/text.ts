/**
 * What a message says about continuing: does the model's final text hand the turn to the user (a question, a request
 * to confirm or choose), and does the user's message ask the agent to stop? Both err towards "yes": a false "yes"
 * costs one continuation that would not have happened, a false "no" sends the model on while the user was asked.
 *
 * @example
 * ContinuationText.asksUser("Done with the parser. Should I also update the docs?") // true
 * ContinuationText.userStops("stop, I'll take it from here") // true
 */
export namespace ContinuationText {
  const FENCE = /```[\s\S]*?(```|$)|~~~[\s\S]*?(~~~|$)/g
  const ASKS =
    /\b(let me know|would you like|would you prefer|do you want|do you prefer|should I|shall I|may I|can I proceed|(can|could) you (please )?(confirm|clarify|provide|tell|check|share|choose|decide)|please (confirm|advise|clarify|let me know|choose|decide|review)|which (one|option|approach)|waiting for (your|you)|your (call|decision|input|confirmation|approval)|before I (continue|proceed))\b/i

  /** True when the end of `text` asks the user something (outside code blocks). */
  export function asksUser(text: string): boolean {
    const prose = text.replace(FENCE, " ").trim()
    if (!prose) return false
    const blocks = prose.split(/\n\s*\n/).filter((b) => b.trim())
    const last = (blocks.at(-1) ?? "").slice(-600)
    if (/\?\s*[)*_`"'\]]*\s*$/.test(last)) return true
    // A question anywhere in the last paragraph (e.g. "Should I …? I can also …").
    if (/\?(\s|$)/.test(last)) return true
    return ASKS.test(last)
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
