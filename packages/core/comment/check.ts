import path from "path"
import type { AddedLines } from "./added"
import { CommentHeuristics } from "./heuristics"
import { CommentLayout } from "./layout"
import { CommentSyntax } from "./syntax"

/**
 * Judges the comments a change added to one file and words the advisory note.
 *
 * Only comments that are new are judged: a comment counts when one of its lines was added and its text did not
 * occur in what the change replaced. Documents of the same file (the edits of a multiedit, the hunks of a patch)
 * are judged together, so a change gets at most one note per file.
 *
 * @example
 * const verdict = CommentCheck.judge(AddedLines.fromWrite("/r/a.ts", "", slop), "normal")
 * verdict?.flagged // true
 * CommentCheck.note([verdict!], "/r") // "Note: The generated code contains excessive comments. …"
 */
export namespace CommentCheck {
  export const NOTE = "Note: The generated code contains excessive comments. Consider removing obvious comments."

  /**
   * A license or module header: a copyright or SPDX line, `@file`/`@module`/`@license`, "Licensed under …", a named
   * license ("MIT License", "Apache License 2.0", "GPL-3.0"), or a pointer to the LICENSE file. The word "license"
   * alone is not one ("Add license information if available" is a step).
   */
  const LICENSE_HEADER =
    /copyright|\(c\)|©|spdx|@file|@module|@license|\blicen[sc]ed\b|\blicen[sc]e\s*(:|\(|v?\d|version|agreement|file)|\b(gpl|lgpl|agpl|mpl|apache)-?\d/i
  /**
   * A license named before the word "license" with only words, spaces and `.,-` between ("MIT License", "Apache
   * License"): the pattern `\b(mit|…)\b[\w\s.,-]*\blicen[sc]e` tested in linear time. As one regex it backtracks
   * quadratically on a long run of names without the word ("mit mit mit …": 9 s at 100 KB). The gap cannot leave a
   * run of `[\w\s.,-]`, and a run's edges are word boundaries like a string's, so each run is searched on its own: from
   * its first license name for the word "license".
   */
  function namedLicense(text: string): boolean {
    for (const run of text.match(/[\w\s.,-]+/g) ?? []) {
      const name = /\b(mit|apache|bsd|gpl|lgpl|agpl|mpl|isc|mozilla|eclipse)\b/i.exec(run)
      if (!name) continue
      const word = /\blicen[sc]e/gi
      word.lastIndex = name.index + name[0].length
      if (word.test(run)) return true
    }
    return false
  }
  /**
   * A named comment; `trailing` when it sits after code on its line; `qualified` for a narrated step that says more
   * than its code (counted for the change's style, never named).
   */
  export type Finding = { line?: number; text: string; trailing?: boolean; qualified?: boolean }
  /** Plain narrations in one change from which its likely ones count too. */
  export const CONSISTENT = 2
  /**
   * Consecutive plain narrations (no other new comment between them) that name a change whatever their share:
   * steps narrated in turn ("Save the previous server", "Start a new server"). Only comments written as sentences
   * (a capital first letter) count; terse lower-case step notes ("reset buffer", "group attributes") are a style of
   * well-commented human code (batches 1-4: 3 of 224 narrating comments open in lower case, 33 of 346 useful ones).
   */
  export const RUN = 2
  const SENTENCE = /^[^a-z]*[A-Z]/
  export type Verdict = {
    file: string
    flagged: boolean
    reasons: string[]
    density: { comments: number; lines: number; ratio: number }
    /** Narrating comments counted against the change (not the steps that say more than their code). */
    obvious: Finding[]
    duplicates: Finding[]
    /** The comments the note holds against the change: those of the obvious and duplicate reasons that apply. */
    named: Finding[]
    /** Every new comment judged for narration, with what the rules read in it (the learned scorer's input). */
    judged: Judged[]
  }
  /** A new comment judged for narration (not documentation) and the rules' reading of it. */
  export type Judged = {
    line?: number
    text: string
    /** The code it sits on (its own line for a trailing comment). */
    code: string[]
    trailing: boolean
    lines: number
    narration?: "plain" | "likely"
    duplicate: boolean
    heading: boolean
  }

  /**
   * The verdict for one file's documents, or undefined when the file type has no comments to judge.
   *
   * @example
   * CommentCheck.judge(AddedLines.fromEdit("/r/a.ts", "", "// Return the sum\nreturn sum"), "strict")?.flagged // true
   */
  export function judge(docs: AddedLines.Document[], sensitivity: CommentHeuristics.Sensitivity): Verdict | undefined {
    if (sensitivity === false || !docs.length) return undefined
    const file = docs[0].file
    const syntax = CommentSyntax.forFile(file)
    if (!syntax) return undefined
    const limits = CommentHeuristics.THRESHOLDS[sensitivity]
    const density = { comments: 0, lines: 0, ratio: 0 }
    const obvious: Finding[] = []
    const duplicates: Finding[] = []
    const likely: Finding[] = []
    const all: Judged[] = []

    let judged = 0
    let run = 0
    // Comments other than documentation, and those of them written as sentences.
    let notes = 0
    let sentences = 0
    let longest = 0
    // Annotations that narrate (plainly or likely) or repeat their line: the density rule needs one.
    let narrating = 0
    for (const doc of docs) {
      run = 0
      const { kinds, comments } = CommentSyntax.extract(doc.lines, syntax)
      const existing = doc.before ? existingComments(doc.before, syntax) : new Set<string>()
      const annotations = new Set<number>()
      // Comments that head a group of sibling blocks ("# API key configuration tests" over `test "…" do` blocks).
      // And comments that head groups of entries of a list, as the list's other comments do (`entryHeadings`).
      const headings = CommentLayout.headings(doc.lines, kinds, comments)
      for (const h of CommentLayout.entryHeadings(doc.lines, kinds, comments)) headings.add(h)
      // And section banners (`-- Parse Request -------`, `// Parsers` / `// --------`).
      for (const h of CommentLayout.banners(doc.lines, comments)) headings.add(h)
      let firstCode = kinds.indexOf("code")
      if (firstCode < 0) firstCode = doc.lines.length
      for (const comment of comments) {
        // A directive appended after a comment (`# stop once found  # pragma: no cover`, `// why //nolint:errcheck`)
        // is addressed to a tool: the comment is what precedes it, and it is new only when that text is.
        const text = withoutDirectives(comment.text, syntax)
        if (!text) continue
        const isNew = isAdded(doc, comment) && !existing.has(sameText(text))
        // Comments before the first code line of a whole file may be a license or module header.
        const header =
          comment.line < firstCode &&
          doc.firstLine === 1 &&
          (LICENSE_HEADER.test(text) || namedLicense(text) || /\bLICENSE\b/.test(text))
        if (!isNew || header || CommentHeuristics.isDirective(text) || CommentHeuristics.looksLikeCode(comment.parts))
          continue
        // Go and Ruby read a plain comment right above a declaration as its documentation (Go's at the top level
        // only: the line as written), Lua one marked `---` (LDoc, LuaCATS), and C's style (OpenBSD style(9)) puts one
        // above every function definition.
        const above = !comment.trailing && kinds[comment.end + 1] === "code"
        const documented =
          comment.doc ||
          (above &&
            !!syntax.declaration?.test(doc.lines[comment.end + 1]) &&
            (!syntax.docMark || syntax.docMark.test(doc.lines[comment.line].trim()))) ||
          (above && syntax.definitions === "c" && CommentLayout.cDefinition(doc.lines, comment.end + 1))
        judged++
        const lines = comment.end - comment.line + 1
        const annotation = !documented && (comment.trailing || lines <= 2)
        if (annotation) for (let l = comment.line; l <= comment.end; l++) annotations.add(l)
        if (documented) continue
        notes++
        if (SENTENCE.test(text)) sentences++
        const where = doc.firstLine ? doc.firstLine + comment.line : undefined
        const code = comment.trailing
          ? [codePart(doc.lines[comment.line], comment.text, syntax)]
          : followingCode(doc.lines, kinds, comment.end)
        // Narration is a short remark: one or two lines. A heading names the group below it, whose names repeat its
        // words: neither narration nor a duplicate.
        const heading = headings.has(comment.line)
        const narration = lines <= 2 && !heading ? CommentHeuristics.narration(text, code) : undefined
        // Plain narrations one after another, written as sentences: steps narrated in turn.
        run = narration === "plain" && SENTENCE.test(text) ? run + 1 : 0
        longest = Math.max(longest, run)
        const duplicate =
          !heading &&
          code.length > 0 &&
          !CommentHeuristics.patternLiteral(code[0]) &&
          CommentHeuristics.restates(text, code[0])
        all.push({
          line: where,
          text,
          code,
          trailing: !!comment.trailing,
          lines,
          narration,
          duplicate,
          heading,
        })
        if (annotation && (narration || duplicate)) narrating++
        // A step that says more than its code (when, how or why it runs: `CommentHeuristics.adds`) is not named, but
        // it is written as a step: it counts for the change's style (the share, a run, the likely ones) as before.
        const qualified = !!narration && CommentHeuristics.adds(text, code)
        const finding: Finding = qualified ? { line: where, text, qualified } : { line: where, text }
        if (narration === "plain" || (narration === "likely" && limits.likely)) obvious.push(finding)
        else if (duplicate) duplicates.push({ line: where, text, trailing: comment.trailing })
        else if (narration === "likely") likely.push(finding)
      }
      const d = CommentHeuristics.density({ kinds, added: doc.added, annotations })
      density.comments += d.comments
      density.lines += d.lines
    }
    density.ratio = density.lines ? density.comments / density.lines : 0

    const reasons: string[] = []
    // Dense comments are held against a change only when at least one of them narrates: a careful change whose few
    // short comments each say why ("Raw value found: could be a coincidental or unquoted match. Ambiguous, use
    // generic.") is dense with explanations, and "remove obvious comments" is wrong advice for it (tester's R-C3).
    if (
      density.lines >= limits.minLines &&
      density.comments >= limits.minComments &&
      density.ratio > limits.density &&
      narrating > 0
    ) {
      reasons.push(
        `${density.comments} of ${density.lines} added lines are comments annotating code ` +
          `(${Math.round(density.ratio * 100)}%, over ${Math.round(limits.density * 100)}%)`,
      )
    }
    // Narrations that are at least `share` of the change's comments, or that come as a run of steps.
    // The share is taken among the comments that are not documentation when at least half of them are written as
    // sentences (docstrings and JSDoc say what an API is; they do not dilute a narrated body), among all otherwise.
    const base = sentences * 2 >= notes ? notes : judged
    const share = (n: number) => (base > 0 && n / base >= limits.share) || longest >= RUN
    // A change whose comments narrate plainly narrates in its likely cases too (one style per change).
    if (obvious.length >= CONSISTENT) obvious.push(...likely.splice(0))
    // Likely narrations that, with the plain ones, make up two fifths of a change's comments are its style too.
    if (likely.length >= CONSISTENT && (likely.length + obvious.length) * 5 >= judged * 2)
      obvious.push(...likely.splice(0))
    // A change all of whose comments (other than documentation) narrate, written as sentences, one of them plainly,
    // narrates in its likely ones too: "Raise an exception for HTTP errors" over `raise_for_status()` beside a plain
    // narration. A likely one alone (one word in common with its code) shows no style: on batches 1-13 the three
    // named so were all useful ("Start with a copy of the default entry", "Use version from auto-generated version.ts
    // file").
    if (
      obvious.length &&
      likely.length &&
      likely.length + obvious.length >= base &&
      likely.every((f) => SENTENCE.test(f.text))
    )
      obvious.push(...likely.splice(0))
    const named: Finding[] = []
    const restating = obvious.filter((f) => !f.qualified)
    if (restating.length >= limits.obvious && share(obvious.length)) {
      reasons.push(`${count(restating.length, "comment")} restating the code: ${examples(restating)}`)
      named.push(...restating)
    }
    if (duplicates.length >= limits.duplicates && share(duplicates.length)) {
      // A trailing comment repeats the line it is on, one above code the line below it.
      const where = duplicates.every((d) => d.trailing)
        ? duplicates.length === 1
          ? "the line of code it is on"
          : "the lines of code they are on"
        : duplicates.some((d) => d.trailing)
          ? "their line of code or the next"
          : "the next line of code"
      reasons.push(`${count(duplicates.length, "comment")} repeating ${where}: ${examples(duplicates)}`)
      named.push(...duplicates)
    }
    return {
      file,
      flagged: reasons.length > 0,
      reasons,
      density,
      obvious: restating,
      duplicates,
      named,
      judged: all,
    }
  }

  /**
   * The text appended to a tool's output, or "" when no verdict is flagged.
   *
   * @example
   * CommentCheck.note([verdict], "/r") // "Note: The generated code contains excessive comments. …\n- a.ts: …"
   */
  export function note(verdicts: (Verdict | undefined)[], directory: string): string {
    const flagged = verdicts.filter((v): v is Verdict => !!v?.flagged)
    if (!flagged.length) return ""
    const lines = flagged.map((v) => `- ${path.relative(directory, v.file) || v.file}: ${v.reasons.join("; ")}.`)
    return [NOTE, ...lines].join("\n")
  }

  function count(n: number, word: string) {
    return `${n} ${word}${n === 1 ? "" : "s"}`
  }

  function examples(findings: Finding[]) {
    const shown = findings.slice(0, 3).map((f) => (f.line ? `line ${f.line} ` : "") + JSON.stringify(clip(f.text)))
    return shown.join(", ") + (findings.length > 3 ? ", …" : "")
  }

  function clip(text: string) {
    return text.length > 60 ? text.slice(0, 57) + "…" : text
  }

  function isAdded(doc: AddedLines.Document, comment: CommentSyntax.Comment) {
    for (let l = comment.line; l <= comment.end; l++) if (doc.added[l]) return true
    return false
  }

  function existingComments(before: string, syntax: CommentSyntax.Syntax) {
    const texts = new Set<string>()
    for (const c of CommentSyntax.extract(before.split(/\r?\n/), syntax).comments) {
      texts.add(sameText(c.text))
      texts.add(sameText(withoutDirectives(c.text, syntax)))
    }
    return texts
  }

  /**
   * A comment's text as compared with the comments a change replaced: its letters and digits, lower case. So a
   * comment that was only re-punctuated ("… preprocessor" → "… preprocessor."), re-cased, re-spaced (`//x` → `// x`,
   * re-indented) or re-wrapped over other lines is the comment it was, not a new one (tester's RW3, fmt c29b64dde7);
   * a changed word makes it new. A text without letters or digits (a rule line) is compared as written.
   *
   * @example
   * sameText("Require modern MSVC.") === sameText("require modern  MSVC") // true
   */
  export function sameText(text: string): string {
    return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "") || text
  }

  /**
   * A comment's text without the tool directives appended after it as further comments on the same line: "stop once
   * found # pragma: no cover" → "stop once found", "close the file //nolint:errcheck" → "close the file"; "" when the
   * whole text is directives.
   *
   * @example
   * withoutDirectives("stop once found # pragma: no cover", CommentSyntax.forFile("a.py")!) // "stop once found"
   */
  export function withoutDirectives(text: string, syntax: CommentSyntax.Syntax): string {
    if (CommentHeuristics.isDirective(text)) return ""
    const prefixes = syntax.line.length ? syntax.line : ["//", "#"]
    for (;;) {
      let at = -1
      let prefix = ""
      for (const p of prefixes) {
        const i = text.lastIndexOf(" " + p)
        if (i > at) {
          at = i
          prefix = p
        }
      }
      if (at < 0) return text
      const rest = text.slice(at + 1 + prefix.length).trim()
      if (!rest || !CommentHeuristics.isDirective(rest)) return text
      text = text.slice(0, at).trim()
      if (!text) return ""
    }
  }

  /** Up to three code lines after the comment ending at `end`, until a blank line (comment lines are passed over). */
  function followingCode(lines: string[], kinds: CommentSyntax.LineKind[], end: number): string[] {
    const code: string[] = []
    for (let i = end + 1; i < lines.length && code.length < 3; i++) {
      if (kinds[i] === "blank") break
      if (kinds[i] === "code") code.push(lines[i])
    }
    return code
  }

  /**
   * A line with a trailing comment, minus the comment. The comment's text has its whitespace collapsed, so where the
   * line holds it with runs of spaces (`if x:  # stop  here`) it is found by its delimiter: else the code would hold
   * the comment itself, and every such comment would "repeat its line".
   */
  function codePart(line: string, comment: string, syntax: CommentSyntax.Syntax) {
    const at = line.lastIndexOf(comment)
    if (at > 0) return line.slice(0, at).replace(/(\/\/|#|--)\s*$/, "")
    for (const p of syntax.line.length ? syntax.line : ["//", "#", "--"])
      for (let i = line.indexOf(p); i > 0; i = line.indexOf(p, i + 1))
        if (
          line
            .slice(i + p.length)
            .replace(/\s+/g, " ")
            .trim() === comment
        )
          return line.slice(0, i)
    return line.replace(/(\/\/|#|--)\s*$/, "")
  }
}
