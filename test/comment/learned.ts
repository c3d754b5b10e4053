import { CommentCheck } from "../../packages/core/comment/check"
import { CommentHeuristics } from "../../packages/core/comment/heuristics"
import { CommentHistory } from "./history/history"

/**
 * An experiment, not part of the checker: a learned scorer of judged comments (L2-regularised logistic regression over
 * the rules' reading of a comment, its words and shape, its language and the words it shares with its code), trained
 * on the labelled history and measured by leave-one-batch-out with every choice (λ, each level's threshold) made by
 * leave-one-batch-out inside the training batches. docs/comment-checker.md, "A learned scorer, tried", has the
 * figures and why it was not integrated.
 *
 * `bun test/comment/learned.ts cv [--no-rules] [--context]` prints per batch and pooled precision and recall of the
 * rules and of each way of using the scorer; `bun test/comment/learned.ts real [--context]` the corpus flag rates.
 */
export namespace CommentScore {
  export type Input = {
    text: string
    code: string[]
    trailing: boolean
    lines: number
    narration?: "plain" | "likely"
    duplicate: boolean
    heading: boolean
  }
  export type Model = { bias: number; weights: Record<string, number> }

  const bucket = (n: number, edges: number[]) => {
    let i = 0
    while (i < edges.length && n > edges[i]) i++
    return String(i)
  }

  /**
   * The comment's features as names (each present once, value 1).
   *
   * @example
   * CommentScore.features({ text: "Return x", code: ["return x"], trailing: false, lines: 1, duplicate: true, heading: false }, "a.ts").includes("dup") // true
   */
  export function features(input: Input, file: string): string[] {
    const out = new Set<string>()
    const text = input.text.trim()
    out.add(`n:${input.narration ?? "none"}`)
    if (input.duplicate) out.add("dup")
    if (input.heading) out.add("head")
    if (input.trailing) out.add("trail")
    out.add(`lines:${Math.min(input.lines, 3)}`)
    const ext = /\.([a-z0-9]+)$/i.exec(file)?.[1]?.toLowerCase() ?? "none"
    out.add(`ext:${ext}`)
    const words = text
      .toLowerCase()
      .split(/[^a-z0-9']+/)
      .map((w) => w.replace(/^'+|'+$/g, ""))
      .filter(Boolean)
    for (const w of words) out.add(`w:${w}`)
    for (let i = 0; i + 1 < words.length; i++) out.add(`b:${words[i]}_${words[i + 1]}`)
    if (words[0]) out.add(`f:${words[0]}`)
    if (words[1]) out.add(`f2:${words[0]}_${words[1]}`)
    if (words[0] && CommentHeuristics.NARRATION_VERBS.has(words[0])) out.add("verb")
    out.add(`len:${bucket(words.length, [1, 2, 3, 4, 6, 8, 12, 20])}`)
    if (/^[^a-z]*[A-Z]/.test(text)) out.add("cap")
    if (/\.$/.test(text)) out.add("period")
    if (/[()]/.test(text)) out.add("paren")
    if (/:/.test(text)) out.add("colon")
    if (/\d/.test(text)) out.add("digit")
    if (/[`'"]/.test(text)) out.add("quote")
    if (/[-–—;]/.test(text)) out.add("dash")
    const code = input.code.map((l) => CommentHeuristics.normalize(l).split(" ").slice(0, 12).join(" ")).filter(Boolean)
    if (!code.length) out.add("nocode")
    else {
      const first = code[0].split(" ")[0]
      out.add(`c:${first}`)
      const ov = CommentHeuristics.overlap(text, code)
      out.add(`sh:${Math.min(ov.shared, 4)}`)
      out.add(`ov:${ov.total ? bucket(ov.shared / ov.total, [0, 0.25, 0.5, 0.75, 0.99]) : "x"}`)
      if (ov.byFamily) out.add("family")
    }
    return [...out]
  }

  /**
   * The probability that the comment narrates, by `model`.
   *
   * @example
   * CommentScore.score(model, ["n:plain", "verb"]) // 0.8…
   */
  export function score(model: Model, names: string[]): number {
    let z = model.bias
    for (const n of names) z += model.weights[n] ?? 0
    return 1 / (1 + Math.exp(-z))
  }
}

export namespace CommentTrain {
  export type Level = CommentHeuristics.Level
  export const LEVELS = ["strict", "normal", "relaxed"] as const
  export type Item = { feats: string[]; y: number }
  export type Change = {
    batch: number
    /** Judged comments (documentation, directives and code left out, as the checker does). */
    items: Item[]
    /** Labelled N among all the change's comments, judged or not. */
    positives: number
    /** Per level, the judged comments the rules name. */
    rules: Record<Level, boolean[]>
  }

  const RULE = /^(n:|dup$|head$|r:|cp:)/
  /** Also the change's context and the levels at which the rules name the comment (`--context`). */
  export let EXTRA = process.argv.includes("--context")

  export function dataset(fixtures = CommentHistory.load(), withRules = true): Change[] {
    const out: Change[] = []
    for (const f of fixtures)
      for (const change of f.changes) {
        const { doc, at } = CommentHistory.document(change)
        const verdicts = Object.fromEntries(LEVELS.map((l) => [l, CommentCheck.judge([doc], l)!])) as Record<
          Level,
          CommentCheck.Verdict
        >
        const byLine = new Map(change.comments.map((c, i) => [at[i], c]))
        const judged = verdicts.strict.judged.filter((j) => j.line !== undefined && byLine.has(j.line))
        const items = itemFeatures(verdicts, judged, change.file).map((feats, k) => ({
          feats: withRules ? feats : feats.filter((x) => !RULE.test(x)),
          y: byLine.get(judged[k].line!)!.label === "N" ? 1 : 0,
        }))
        const rules = Object.fromEntries(
          LEVELS.map((l) => {
            const named = new Set(verdicts[l].named.map((n) => n.line))
            return [l, judged.map((j) => named.has(j.line))]
          }),
        ) as Record<Level, boolean[]>
        out.push({ batch: f.batch, items, positives: change.comments.filter((c) => c.label === "N").length, rules })
      }
    return out
  }

  /** Each judged comment's features: its own (`CommentScore.features`), its change's share of plain narrations and count of judged comments, and the levels at which the rules name it. */
  export function itemFeatures(
    verdicts: Record<Level, CommentCheck.Verdict>,
    judged: CommentCheck.Judged[],
    file: string,
  ) {
    const named = Object.fromEntries(LEVELS.map((l) => [l, new Set(verdicts[l].named.map((n) => n.line))]))
    const plain = judged.filter((j) => j.narration === "plain").length
    const context = EXTRA
      ? [`cp:${Math.min(4, Math.floor((plain / Math.max(1, judged.length)) * 5))}`, `cn:${Math.min(judged.length, 6)}`]
      : []
    return judged.map((j) => [
      ...CommentScore.features(j, file),
      ...context,
      ...(EXTRA ? LEVELS.filter((l) => named[l].has(j.line)).map((l) => `r:${l}`) : []),
    ])
  }

  /** L2-regularised logistic regression, full-batch gradient descent with AdaGrad steps; deterministic. */
  export function fit(items: Item[], lambda: number, iterations = 200, minCount = 2): CommentScore.Model {
    const counts = new Map<string, number>()
    for (const it of items) for (const f of it.feats) counts.set(f, (counts.get(f) ?? 0) + 1)
    const names = [...counts.keys()].filter((k) => counts.get(k)! >= minCount).sort()
    const index = new Map(names.map((n, i) => [n, i]))
    const X = items.map((it) => Int32Array.from(it.feats.map((f) => index.get(f) ?? -1).filter((i) => i >= 0)))
    const w = new Float64Array(names.length)
    const g2 = new Float64Array(names.length + 1)
    let b = 0
    const grad = new Float64Array(names.length)
    const rate = 0.5
    for (let t = 0; t < iterations; t++) {
      grad.fill(0)
      let gb = 0
      for (let i = 0; i < X.length; i++) {
        let z = b
        for (const j of X[i]) z += w[j]
        const e = 1 / (1 + Math.exp(-z)) - items[i].y
        gb += e
        for (const j of X[i]) grad[j] += e
      }
      for (let j = 0; j < w.length; j++) {
        const g = grad[j] + lambda * w[j]
        g2[j] += g * g
        w[j] -= (rate * g) / (Math.sqrt(g2[j]) + 1e-8)
      }
      g2[w.length] += gb * gb
      b -= (rate * gb) / (Math.sqrt(g2[w.length]) + 1e-8)
    }
    const weights: Record<string, number> = {}
    names.forEach((n, j) => {
      const v = Math.round(w[j] * 1e4) / 1e4
      if (v !== 0) weights[n] = v
    })
    return { bias: Math.round(b * 1e4) / 1e4, weights }
  }

  /**
   * The judged comments of a change named at a threshold: those scoring `t` or more, when they are at least the
   * level's count and share of the change's judged comments (the rules' gates for plain narration).
   */
  export function decide(scores: number[], t: number, level: Level): boolean[] {
    const limits = CommentHeuristics.THRESHOLDS[level]
    const hit = scores.map((s) => s >= t)
    const n = hit.filter(Boolean).length
    const ok = n >= limits.obvious && n / Math.max(1, scores.length) >= limits.share
    return ok ? hit : hit.map(() => false)
  }

  export type Counts = { hits: number; flagged: number; positives: number }
  export function count(changes: Change[], named: boolean[][]): Counts {
    const c = { hits: 0, flagged: 0, positives: 0 }
    changes.forEach((ch, i) => {
      c.positives += ch.positives
      ch.items.forEach((it, k) => {
        if (named[i][k]) {
          c.flagged++
          c.hits += it.y
        }
      })
    })
    return c
  }

  /** Precision a level aims at when its threshold is chosen (on training material only). */
  export const TARGET: Record<Level, number> = { strict: 0.8, normal: 0.9, relaxed: 0.95 }
  const GRID = Array.from({ length: 95 }, (_, i) => (i + 3) / 100)

  /** The threshold of a level on scored training changes: the most recall at the target precision, else best F0.5. */
  export type Mode = "learned" | "veto" | "union" | "matched" | "ungated"
  export const MODES: Mode[] = ["learned", "veto", "union", "matched", "ungated"]
  /**
   * The judged comments named in one mode: `learned` the scorer alone (gated as `decide`), `veto` the rules' named
   * comments that also score `t` or more, `union` the rules' named ones and the scorer's.
   */
  export function named(change: Change, scores: number[], t: number, level: Level, mode: Mode): boolean[] {
    if (mode === "matched") mode = "learned"
    if (mode === "veto") return scores.map((s, k) => change.rules[level][k] && s >= t)
    if (mode === "ungated") return scores.map((s) => s >= t)
    const learned = decide(scores, t, level)
    return mode === "union" ? learned.map((x, k) => x || change.rules[level][k]) : learned
  }

  export function threshold(changes: Change[], scores: number[][], level: Level, mode: Mode = "learned"): number {
    let best = { t: 0.5, recall: -1 }
    let fallback = { t: 0.5, f: -1 }
    if (mode === "matched") {
      // The most precise threshold whose recall on this material is at least the rules' own.
      const rules = count(
        changes,
        changes.map((c) => c.rules[level]),
      )
      let top = { t: 0.5, p: -1 }
      for (const t of GRID) {
        const c = count(
          changes,
          scores.map((s, i) => named(changes[i], s, t, level, "learned")),
        )
        const p = c.flagged ? c.hits / c.flagged : 0
        if (c.hits >= rules.hits && p > top.p) top = { t, p }
      }
      return top.t
    }
    for (const t of GRID) {
      const c = count(
        changes,
        scores.map((s, i) => named(changes[i], s, t, level, mode)),
      )
      const p = c.flagged ? c.hits / c.flagged : 0
      const r = c.hits / c.positives
      if (p >= TARGET[level] && r > best.recall) best = { t, recall: r }
      const f = p + r ? (1.25 * p * r) / (0.25 * p + r) : 0
      if (f > fallback.f) fallback = { t, f }
    }
    return best.recall >= 0 ? best.t : fallback.t
  }

  const scoreAll = (model: CommentScore.Model, changes: Change[]) =>
    changes.map((ch) => ch.items.map((it) => CommentScore.score(model, it.feats)))

  export const LAMBDAS = [3, 10, 30, 100]

  /** Out-of-fold scores of `changes` by leaving each of their batches out in turn. */
  function outOfFold(changes: Change[], lambda: number): number[][] {
    const scores: number[][] = changes.map(() => [])
    for (const b of new Set(changes.map((c) => c.batch))) {
      const model = fit(
        changes.filter((c) => c.batch !== b).flatMap((c) => c.items),
        lambda,
      )
      changes.forEach((c, i) => {
        if (c.batch === b) scores[i] = c.items.map((it) => CommentScore.score(model, it.feats))
      })
    }
    return scores
  }

  function logLoss(changes: Change[], scores: number[][]) {
    let l = 0
    changes.forEach((c, i) =>
      c.items.forEach((it, k) => {
        const p = Math.min(1 - 1e-9, Math.max(1e-9, scores[i][k]))
        l -= it.y ? Math.log(p) : Math.log(1 - p)
      }),
    )
    return l
  }

  /** Hyperparameters chosen on `changes` alone: λ by out-of-fold log loss, then each level's threshold. */
  export function select(changes: Change[]) {
    let best = { lambda: LAMBDAS[0], loss: Infinity, scores: [] as number[][] }
    for (const lambda of LAMBDAS) {
      const scores = outOfFold(changes, lambda)
      const loss = logLoss(changes, scores)
      if (loss < best.loss) best = { lambda, loss, scores }
    }
    const thresholds = Object.fromEntries(
      MODES.map((m) => [m, Object.fromEntries(LEVELS.map((l) => [l, threshold(changes, best.scores, l, m)]))]),
    ) as Record<Mode, Record<Level, number>>
    return { lambda: best.lambda, thresholds }
  }

  /** Leave-one-batch-out: per left-out batch, hyperparameters chosen inside the others, then measured on it. */
  export function crossValidate(
    changes: Change[],
    batches = [...new Set(changes.map((c) => c.batch))].sort((a, b) => a - b),
  ) {
    return batches.map((b) => {
      const train = changes.filter((c) => c.batch !== b)
      const test = changes.filter((c) => c.batch === b)
      const chosen = select(train)
      const model = fit(
        train.flatMap((c) => c.items),
        chosen.lambda,
      )
      const scores = scoreAll(model, test)
      const modes = Object.fromEntries(
        MODES.map((m) => [
          m,
          Object.fromEntries(
            LEVELS.map((l) => [
              l,
              count(
                test,
                scores.map((s, i) => named(test[i], s, chosen.thresholds[m][l], l, m)),
              ),
            ]),
          ),
        ]),
      ) as Record<Mode, Record<Level, Counts>>
      const rules = Object.fromEntries(
        LEVELS.map((l) => [
          l,
          count(
            test,
            test.map((c) => c.rules[l]),
          ),
        ]),
      ) as Record<Level, Counts>
      return { batch: b, chosen, rules, ...modes }
    })
  }
}

if (import.meta.main) {
  const arg = process.argv[2]
  const fmt = (c: CommentTrain.Counts) =>
    `${String(c.hits).padStart(3)}/${String(c.flagged).padEnd(3)} ${(c.flagged ? c.hits / c.flagged : NaN).toFixed(2)} ${(c.hits / c.positives).toFixed(2)}`
  if (arg === "real") {
    const { CommentCorpus } = await import("./corpus")
    const { AddedLines } = await import("../../packages/core/comment/added")
    const data = CommentTrain.dataset()
    const chosen = CommentTrain.select(data)
    const model = CommentTrain.fit(
      data.flatMap((c) => c.items),
      chosen.lambda,
    )
    console.log(JSON.stringify(chosen), Object.keys(model.weights).length)
    for (const [name, samples] of [
      ["slop", CommentCorpus.slop()],
      ["real", CommentCorpus.real()],
    ] as const)
      for (const l of CommentTrain.LEVELS) {
        const tally: Record<string, string[]> = { rules: [], learned: [], ungated: [] }
        for (const s of samples) {
          const docs = AddedLines.fromWrite(s.file, "", s.text)
          const verdicts = Object.fromEntries(
            CommentTrain.LEVELS.map((x) => [x, CommentCheck.judge(docs, x)]),
          ) as Record<CommentTrain.Level, CommentCheck.Verdict | undefined>
          if (!verdicts.strict) continue
          const judged = verdicts.strict.judged.filter((j) => j.line !== undefined)
          const feats = CommentTrain.itemFeatures(
            verdicts as Record<CommentTrain.Level, CommentCheck.Verdict>,
            judged,
            s.file,
          )
          const scores = feats.map((f) => CommentScore.score(model, f))
          const density = verdicts[l]!.reasons.some((r) => r.includes("added lines are comments"))
          if (verdicts[l]!.flagged) tally.rules.push(s.file)
          for (const m of ["learned", "ungated"] as const) {
            const fake = {
              batch: 0,
              items: [],
              positives: 0,
              rules: { strict: [], normal: [], relaxed: [] },
            } as CommentTrain.Change
            const n = CommentTrain.named(fake, scores, chosen.thresholds[m][l], l, m).filter(Boolean).length
            if (n > 0 || density) tally[m].push(s.file + (n ? "" : "(density)"))
          }
        }
        console.log(
          name,
          l,
          Object.entries(tally)
            .map(([k, v]) => `${k} ${v.length}/${samples.length}`)
            .join("  "),
        )
        if (name === "real" && l === "normal")
          for (const [k, v] of Object.entries(tally))
            console.log("  ", k, v.map((f) => f.split("/").slice(-2).join("/")).join(", "))
      }
  }
  if (arg === "cv") {
    const withRules = !process.argv.includes("--no-rules")
    const data = CommentTrain.dataset(undefined, withRules)
    const res = CommentTrain.crossValidate(data)
    type K = "rules" | CommentTrain.Mode
    const KS: K[] = ["rules", ...CommentTrain.MODES]
    const sum = (rows: typeof res, k: K, l: CommentTrain.Level) =>
      rows.reduce(
        (a, r) => ({
          hits: a.hits + r[k][l].hits,
          flagged: a.flagged + r[k][l].flagged,
          positives: a.positives + r[k][l].positives,
        }),
        { hits: 0, flagged: 0, positives: 0 },
      )
    console.log(
      `features: ${withRules ? "with the rules' signals" : "without the rules' signals"}; columns hits/named precision recall`,
    )
    for (const r of res)
      for (const l of CommentTrain.LEVELS)
        console.log(
          `batch ${String(r.batch).padStart(2)} ${l.padEnd(7)} ` +
            KS.map((k) => `${k} ${fmt(r[k][l])}`).join(" | ") +
            `  (λ ${r.chosen.lambda}, t ${CommentTrain.MODES.map((m) => r.chosen.thresholds[m][l]).join("/")})`,
        )
    for (const [name, rows] of [
      ["pooled 6-11", res.filter((r) => r.batch >= 6)],
      ["pooled 1-11", res],
    ] as const)
      for (const l of CommentTrain.LEVELS)
        console.log(`${name} ${l.padEnd(7)} ` + KS.map((k) => `${k} ${fmt(sum(rows, k, l))}`).join(" | "))
  }
}
