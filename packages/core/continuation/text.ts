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
    /\bwaiting (on|for) (you|your)\b|\bI('ll| will|'m| am) wait(ing)? (on|for) (you|your)\b/i,
    /\b(once|when|as soon as|after) you('ve|'re| have| are)?\b[^.!?\n]*\b(I'll|I will|I can|let me know|tell me)\b/i,
    /\byou('ll| will) (need|have) to\b/i,
  ]
  /** A sentence that starts with one of these verbs (outside a list, not a heading like "Check:") asks the user to act. */
  const IMPERATIVE =
    /^\W*((please|just|then)\s+)?(run|provide|add|export|install|log in|sign in|start|restart|grant|give|share|send|paste|confirm|approve|choose|pick|decide|tell|double-check|verify|create|enable|upload|open|click|enter|type|make sure|clone|generate|rotate|reply|answer|wait)\b(?!:)/i

  /**
   * Question marks: ASCII, full-width (Chinese, Japanese, and IME users typing any language), Arabic, small and
   * reversed forms. The Greek question mark (U+037E) is not one: Unicode normalises it to ";", which ends clauses in
   * every other language, so "Θέλεις να συνεχίσω;" is not recognised (docs/session.md).
   */
  const QMARK = "?\uff1f\u061f\ufe56\u2e2e"
  /** A question mark ending the text, after closing emphasis, quotes or brackets. */
  const ENDS_ASKING = new RegExp(`[${QMARK}]\\s*[)*_\`"'\\]\u300d\u300f\u201d]*\\s*$`)
  /** A question mark ending a sentence: ASCII followed by a space (not `a?.b`), the others anywhere. */
  const QUESTION_END = /\?(?=\s|$)|[\uff1f\u061f\ufe56\u2e2e]/g
  const LIST_LINE = /^\s*([-*+\u2022]|\d+[.)]|[a-z]\))\s/i
  const isList = (block: string) =>
    block.split("\n").every((line) => !line.trim() || LIST_LINE.test(line) || /^\s{2,}\S/.test(line))
  /** A question naming the one it is asked of: English you, Chinese 你/您, Japanese あなた. */
  const ADDRESSES = /\b(you|your|yours)\b|[你您]|あなた/i
  /** Words that open a question the writer may answer: English wh-words, and "why" in other languages. */
  const WH =
    /^\W*((why|what|how|where|when|who)\b|(warum|wieso|weshalb|pourquoi|por qu[eé]|perch[eé]|почему)(?!\p{L})|为什么|为何|為什麼|なぜ|どうして)/iu
  /**
   * A question the message answers itself: it starts with why/what/how/where/when/who (or "why" in German, French,
   * Spanish, Italian, Russian, Chinese or Japanese: "为什么失败？因为…"), does not name the user, and
   * prose follows it in the paragraph ("Why does this fail? Because X. Fixing it now."). A question followed only by
   * options ("Which one should I use?\n1. A\n2. B") or by nothing is asked.
   */
  function rhetorical(question: string, after: string): boolean {
    const sentence = question.split(/(?<=[.!:;?\n\uff1f\u061f])\s*/).at(-1) ?? question
    if (ADDRESSES.test(sentence) || !WH.test(sentence)) return false
    return after
      .split("\n")
      .filter((line) => !LIST_LINE.test(line))
      .some((line) => /\p{L}/u.test(line))
  }

  /**
   * True when the end of `text` (its last paragraph, outside code blocks and quotes; the paragraph before when the
   * last ones are a list of options) asks the user something: a question, or a request that the user act or provide
   * something before the work can go on.
   */
  export function asksUser(text: string): boolean {
    const prose = text.replace(FENCE, " ").trim()
    if (!prose) return false
    const blocks = prose.split(/\n\s*\n/).filter((b) => b.trim())
    const last = (blocks.at(-1) ?? "").slice(-600)
    if (ENDS_ASKING.test(last)) return true
    // Options listed after their question: "Which database should I target?\n\n- Postgres: …\n- MySQL: …".
    let i = blocks.length - 1
    while (i > 0 && isList(blocks[i])) i--
    if (i < blocks.length - 1 && ENDS_ASKING.test(blocks[i])) return true
    // Typographic apostrophes as ASCII ones ("I’m blocked", "can’t proceed").
    const said = last.replace(/\u2019/g, "'").replace(QUOTED, "code")
    // A question anywhere in the last paragraph ("Should I …? I can also …"), unless the message answers it itself.
    for (const m of said.matchAll(QUESTION_END)) {
      const end = m.index! + m[0].length
      if (!rhetorical(said.slice(0, end), said.slice(end))) return true
    }
    if (ASKS.test(said) || REQUESTS.some((r) => r.test(said))) return true
    return said
      .split(/\n/)
      .filter((line) => !LIST_LINE.test(line))
      .flatMap((line) => line.split(/(?<=[.!;:\u2014])\s+/))
      .some((sentence) => IMPERATIVE.test(sentence))
  }

  /**
   * The model's own words that it stops, pauses or leaves the work: first person ("I'll stop here", "I won't touch
   * anything else", "I'll leave the rest to you", "I'll hold off until you've talked to the team"), a participle
   * opening a sentence ("Stopping here.", "Understood — pausing."), or a later resumption offered ("we can pick it back
   * up tomorrow"); also in German, French, Spanish, Portuguese, Italian, Chinese and Japanese. Not advice ("I'd hold
   * off on X"), nor waiting for a process ("I'll wait for CI").
   */
  /** What may follow a stop verb: the end of a sentence, or a word that places or times it ("stop here", "pause now"). */
  const ACK_END =
    "(?=\\s*([.!,;:)\\u2014\\u2013-]|$)|\\s+(here|there|now|for (now|today|tonight|the (day|night|moment))|work(ing)?|all|everything|any|until|till|as (requested|asked)|on (this|that|it|the)\\b|at this point|at that|right (here|there|now)|completely)\\b)"
  const ACK_LEFT = ACK_END.replace("(here|there|", "(here|there|as is|alone|to you|untouched|")
  const ACK_SUBJECT =
    "\\b(i('ll| will| am going to|'m going to|'m| am| have|'ve| shall)?|let me)( (now|just|go ahead and|happily|simply))?"
  const ACK_STOP = [
    new RegExp(
      `${ACK_SUBJECT} ((stop|pause|halt)(ped|ping|ed|ing)?${ACK_END}|hold(ing)? off\\b|step(ping)? back\\b|stand(ing)? by\\b|put(ting)? (it|this|that|things|everything|the work|work) on hold\\b|park(ing)? (it|this|that)${ACK_END}|leav(e|ing) (it|this|that|things|everything|the rest|the remaining\\b[^.!?\\n]{0,40})${ACK_LEFT}|hold(ing)? (everything|it all|all|the (changes|work|rest))\\b|leav(e|ing) ((the|your|my|our|this|that) )?[\\w-]+( [\\w-]+)? (there|here|to you|for (now|today|tonight|tomorrow|later))\\b)`,
      "i",
    ),
    /\b(i('ll| will)|going to) wait (for (you|your|the go-ahead|further|word|instructions)|until you|till you|to hear)\b/i,
    /\b(i('ll| will) not|i won't|i'm not going to|i am not going to|i will no longer|i won't be) ((continue|proceed|go (any )?further|keep going)\b|(make|touch|change|edit|modify|do|run|work on|push|commit)\b[^.!?\n]{0,30}\b(anything|any (more|further)|further|more|else|other|until|for now|without))/i,
    /\bno (further|more) (changes|edits|work|modifications|commands)\b(?!( (are|is))? (needed|required|necessary))/i,
    new RegExp(
      `(^|[.!?\\n:\\u2014\\u2013-]\\s*|\\b(ok|okay|sure|got it|understood|alright|all right|no problem|of course|will do|sounds good|roger( that)?|noted|copy that|fair enough|absolutely|certainly|right)\\W+)(stopping|pausing|halting|stopped|paused|halted|cancell?ed|aborted|aborting|leaving (it|this|that|things|everything|the rest))${ACK_LEFT}|(^|[.!?\\n:\\u2014\\u2013-]\\s*|\\W)(standing (by|down)|holding off)\\b`,
      "im",
    ),
    /\b(we|i) can (pick (it|this|that|things) (back )?up|resume|continue|come back to (it|this|that))( (later|tomorrow|whenever|another time|next time|on \w+day|when(ever)? you))/i,
    // A farewell: the conversation ends here ("See you after standup.", "Good luck with the rest.").
    /\b(see you|talk (to you )?(soon|later|tomorrow)|catch you later|good luck with (it|that|the rest|everything|the remaining\b)|have a (good|great|nice) (day|evening|night|weekend|one)|enjoy (your|the) (weekend|evening|break|lunch|day))\b/i,
    /\bhappy to (resume|continue|pick (it|this|that|things) (back )?up)( (later|tomorrow|whenever|when(ever)? you))/i,
    /\b(ich (höre|halte) (hier |jetzt |erst(mal)? )*(auf|an)|ich (pausiere|stoppe|warte)|je m'arrête|j'arrête|on (s'arrête|arrête)|nous nous arrêtons|arrêtons|wir hören (hier |jetzt )*auf|ich lasse es (so|dabei)|lo dejamos (aquí|así)|paramos (aquí|acá)|parei|je fais une pause|je mets (ça|cela|le travail) en pause|me detengo|paro aquí|lo dejo (aquí|así)|pauso|vou parar|paro por aqui|vou pausar|mi fermo|mi interrompo)(?!\p{L})/iu,
    /(我(先|就)?(停|暂停|停止|不再)|先停|暂停|停止(了|操作|修改)|止め(ます|ておきます|ました|ておきました)|中断(します|しました|しておきます)|停止します|作業を(止め|中断)|ここまでに(します|しておきます))/u,
  ]

  /**
   * True when the model's text says it stops, pauses or leaves the work (see `ACK_STOP`) outside code and quotes. Read
   * with what happened since the user's message: a reply that did no work (no tool call) and says so acknowledges the
   * user's stop, in whatever words the user asked.
   *
   * @example
   * ContinuationText.acknowledgesStop("Understood, I'll leave the migration there. Remaining: 2 todos.") // true
   * ContinuationText.acknowledgesStop("I'd hold off on upgrading React until 19.1 is out.") // false
   */
  export function acknowledgesStop(text: string): boolean {
    const said = text
      .replace(FENCE, " ")
      .replace(/\u2019/g, "'")
      .replace(QUOTED, "code")
    return ACK_STOP.some((re) => re.test(said))
  }

  /*
   * A stop is read clause by clause (split at . , ; : ! ? and dashes), apostrophes dropped ("don't" → "dont"): a clause
   * is a stop when, after words that only frame it (please, pls, ok, no, hey, can you, let's, I think we should …), it
   * is a stop word or phrase (stop, wait, hold on, that's enough, never mind, leave it, I'll take it from here, don't
   * continue, no more changes …) followed by nothing but words that only qualify it (here, now, for now, right there,
   * a sec, please, thanks, that …) or another stop word ("wait wait"). Idioms count ("stand down", "pull the plug").
   * The user's own plan may follow without punctuation ("hold on let me check"). So "stop the server" (an object) and
   * "don't stop until the tests pass" are tasks, "Please stop, I'll take it from here" and "no, stop" are stops. A
   * negated "go on" ("don't proceed with the migration") stops whatever follows it.
   */
  const FRAME =
    "please|pls|plz|kindly|ok|okay|k|hey|hi|no|nope|nah|hmm|um|uh|oh|ah|so|right|alright|actually|yeah|yes|sorry|just|and|but|then|now|guys|thanks|thank you|thx|can you|could you|would you|will you|can we|could we|lets|let us|i said|i think|i guess|maybe|we should|we can|you can|you should|i want you to|id like you to|i need you to"
  const QUALIFY =
    "here|there|now|right now|right there|right here|from here|from here on|from now on|for now|for today|for the day|for the moment|for a (sec|second|moment|minute|bit|while)|a (sec|second|moment|minute|bit)|at that|at this point|please|pls|plz|thanks|thank you|thx|that|this|it|everything|all|working|immediately|already|then|stop|ok|there then|on (this|that|it)|doing (this|that|it|anything)|with (this|that|it)|mate|man|dude|bro|buddy|folks|tbh|until (im|i am|i get|i come) back|till (im|i am) back|until i (say so|tell you)|until further notice"
  const CORE = [
    "sto+p+|stopping|halt|pause|abort|cancel|wa+i+t|hold on|hold off|hold up|hold your horses|hang on|whoa|woah|stand down|down tools|pencils down|put the keyboard down|kill it|pull the plug( on (it|this|that)( one)?)?|knock it off|cut it out|scrap (it|that)|drop (it|that)|park (it|this|that)|shelve (it|this|that)|enough|thats enough|that is enough|thats all|that is all|thats it|that is it|thatll do|that will do|good enough|never ?mind|nvm|forget it|forget about it|leave it( there| here| as is| at that| for now)?|let it be|leave the rest( to me)?",
    "no more( changes| edits| work| of this| for now)?",
    "(were|we are|im|i am) (done|good|all set|finished)|(lets|let us) (call it a (day|night)|wrap (it )?up)|call it a (day|night)|no thanks|no thank you|(thats|that is) all i (needed|need|wanted|asked for)",
    "no need to (continue|proceed|go on|go further|go any further|keep going|do (anything|more)|finish( (it|this|that|the rest|up))?)",
    "(lets|let us|well|we will|ill|i will|we can|you can) (revisit|pick up|pick (it|this|that) (back )?up|come back to|continue|resume|finish|look at) ?(it|this|that)? (tomorrow|later|another (day|time)|next (week|sprint|time|month|monday|tuesday|wednesday|thursday|friday)|on (monday|tuesday|wednesday|thursday|friday|the weekend)|after (the )?(standup|lunch|meeting|call|break|weekend|release|freeze|holidays?))( \\w+){0,3}",
    "(dont|do not) (do|touch|change|edit|make) (anything|any more|more)( else| more| changes)?",
    "(ill|i will|im going to|i am going to|let me|i can) (take it from here|take over|take it over|handle (it|this|the rest)( from here)?|do (it|this|the rest)|finish (it|this|the rest|up)|take care of (it|this|the rest)|continue from here)( myself)?",
  ].join("|")
  const STOP_CLAUSE = new RegExp(`^((${FRAME})\\s+)*(${CORE})(\\s+(${CORE}|${QUALIFY}))*$`)
  const NO_GO_ON = new RegExp(
    `^((${FRAME})\\s+)*(dont|do not) (continue|proceed|keep going|go on|go any further|go further)\\b`,
  )

  /**
   * A clause that gives the agent work: after the framing words (and "you must / you need to …"), a verb of a request
   * ("fix them", "can you now write tests for it", "use the older API instead"), or a requirement stated of the code
   * ("the endpoint must return 404"). A negated verb ("don't do that") gives none.
   */
  const WORK_VERB =
    "skip|add|remove|delete|create|make|change|update|fix|set|run|show|find|check|move|rename|put|give|start|open|close|edit|modify|handle|write|read|revert|undo|redo|use|switch|replace|restore|reset|roll back|rollback|go back|try|retry|rerun|look|investigate|debug|explain|tell|test|build|ship|deploy|release|publish|commit|push|merge|rebase|squash|implement|refactor|rewrite|clean|format|lint|bump|upgrade|downgrade|pin|install|uninstall|migrate|convert|document|review|include|exclude|keep|split|extract|inline|wrap|rework|simplify|improve|optimize|speed up|port|translate|mock|stub|log|print|return|throw|raise|catch|validate|sort|filter|send|fetch|load|save|copy|paste|generate|scaffold|add back|put back|bring back"
  const WORK = new RegExp(
    `^((${FRAME}|instead|also|first|you (must|need to|have to|should)|i want|id like)\\s+)*(${WORK_VERB})\\b`,
  )
  /**
   * Where the user's own plan begins inside a clause, unpunctuated ("hold your horses let me talk to the team first",
   * "no more changes i will review it tonight"): a first-person subject not governed by the word before it ("can i",
   * "if i", "until im back" stay whole).
   */
  const OWN_PLAN =
    /\s+(?<!\b(can|could|would|will|should|shall|may|might|must|do|did|if|when|until|till|before|after|that|so|and|or|think|guess|hope|while|because|once|unless|what|how|where|why)\s+)(?=(let me|i|im|ill|ive|id|imma)\s)/
  /** A convention of the project stated after a stop ("hang on, we use snake_case for db columns here"): new work. */
  const CONVENTION =
    /^((here|in this (repo|project|codebase)|actually|but)\s+)?we (use|prefer|always|never|dont use|do not use|stick to|go with|name|write|keep)\b/
  const REQUIREMENT = /^(?!(i|we|im|ill|were|ive|weve|you)\b).*\b(must|should|needs to|has to|have to)\b(?! have\b)/

  /**
   * True when a (short) user message asks the agent to stop: a stop clause with no clause giving new work after it. A
   * stop followed by new work ("hold on, the tests are failing in CI, fix them", "enough, now add a changelog entry")
   * redirects the agent: the new work goes on, with its continuation (tester R, R1).
   */
  export function userStops(text: string): boolean {
    const t = text.trim()
    if (!t || t.length > 200) return false
    const clauses = t
      .toLowerCase()
      .replace(/['\u2019]/g, "")
      .split(/[.,;:!?\n\u2014\u2013\u3002\uff0c\uff01\uff1f]+|\s-+\s/)
      .map((clause) =>
        clause
          .replace(/[^\p{L}\p{N}\s]/gu, " ")
          .replace(/\s+/g, " ")
          .trim(),
      )
      .flatMap((clause) => clause.split(OWN_PLAN))
      .filter(Boolean)
    const stops = (clause: string) => STOP_CLAUSE.test(clause) || NO_GO_ON.test(clause)
    const last = clauses.findLastIndex(stops)
    if (last < 0) return false
    const after = clauses.slice(last + 1)
    // What the user quotes after a stop ("the README says: run npm install first", "the error says the config must
    // be valid") is what something else said, not work they give: the reporting clause and the one it introduces.
    return !after.some((clause, i) => {
      if (i > 0 && INTRODUCES.test(after[i - 1])) return false
      if (WORK.test(clause) || CONVENTION.test(clause) || corrects(clause)) return true
      return !QUOTES.test(clause) && REQUIREMENT.test(clause)
    })
  }

  /** Words that make "… not …" a remark on the state of things ("thats not what i meant", "it is not working"). */
  const REMARK_BEFORE = new Set(
    "is isnt its thats was wasnt are arent were werent do does did dont doesnt didnt im am youre be been being will would could should can may might must has have had why if or and but just really probably maybe definitely certainly still i we you it this that they he she wrong".split(
      " ",
    ),
  )
  const REMARK_AFTER = new Set(
    "what that this it how why sure yet now so really quite right good ok okay needed necessary worth working done".split(
      " ",
    ),
  )
  /**
   * A clause that corrects a choice names what to take instead of what: "target python 3.9 not 3.12", "main not
   * master", "tabs instead of spaces". Such a clause after a stop is new work (a redirection), like a request verb.
   */
  function corrects(clause: string): boolean {
    for (const m of clause.matchAll(/(\S+) (?:not|instead of|rather than) (\S+)/g))
      if (!REMARK_BEFORE.has(m[1]) && !REMARK_AFTER.has(m[2])) return true
    return false
  }

  const REPORTING =
    "says|said|states|stated|writes|wrote|shows|showed|prints|printed|tells|told|mentions|mentioned|claims|complains|reports|reported|outputs|returned|returns"
  /** A clause reporting what something else says (a tool's output, a file, an error message): its "must" is quoted. */
  const QUOTES = new RegExp(`\\b(${REPORTING})\\b`)
  /** A reporting clause that ends where its quotation begins ("the README says: …", "it printed: …"). */
  const INTRODUCES = new RegExp(`\\b(${REPORTING})( (that|this|me|us))?$`)
}
