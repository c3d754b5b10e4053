import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import fs from "fs/promises"
import os from "os"
import path from "path"
import { realpathSync } from "fs"
import { DynamicDiscovery } from "@opencode-builtins/core/discovery/discover"
import { DiscoveryParse } from "@opencode-builtins/core/discovery/parse"
import { DiscoveryMatch } from "@opencode-builtins/core/discovery/match"
import { MemoryThink } from "@opencode-builtins/core/discovery/memory-think"
import { ResourceLoader } from "@opencode-builtins/core/resource/loader"
import { Logger } from "@opencode-builtins/core/util/log"
import { files, names } from "./catalogue"
import { LABELLED, type Labelled } from "./labelled"
import { SETS, chatter, layout, type RealSet } from "./real/sets"
import { REPLIES, SHORT_REQUESTS } from "./real/replies"

/**
 * Matching quality on labelled sets, each discovered from real files in a temporary home and project:
 *
 * - `synthetic`: the catalogue and prompts of catalogue.ts / labelled.ts (written for this project);
 * - `tuning`: real public collections (real/README.md), the set the matcher was designed on;
 * - `heldout`: other real public collections, prompts written before the matcher was first run on them;
 * - `heldout2`: four more collections, prompts and labels committed before the matcher was run on them;
 * - `heldout3`: five more collections, the same protocol; run once after a matcher change (the independent
 *   figure of that change);
 * - `heldout4`: three more collections, the same protocol; run in aggregate only, before and after the last round
 *   of field weights, its misses unread;
 * - `heldout5`: four more collections, the same protocol; run once, in aggregate, with no matcher work under way (the
 *   independent figure of the matcher as it stands; match.ts, lexicon.ts, keywords.ts and discover.ts unchanged since
 *   ba2d2e7);
 * - `heldout6`: three more collections, made blind by a helper (ba64fba); run once, in aggregate, the matcher still
 *   unchanged.
 *
 * The first four are tuning material now: held-out 1 was read while the body field was added, held-out 2 while the
 * vocabulary families, the chatter rule, the name fit and the looser type cut were chosen (each change was kept only
 * when it did not hurt the other sets). Held-out 3 gave the independent figure of that work: its first run is recorded
 * in its test. All five are tuning material now: the field weights of the last round (name weight and length
 * normalisation, related-word weight, coverage floor) were chosen on all four real sets and the replies.
 *
 * Measures, over the first 5 suggestions as the user gets them (all types ranked together by score):
 * - recall@5: over prompts that expect something, the share of expected entries shown, averaged per prompt;
 * - precision@5: over prompts that get at least one suggestion, the share of suggestions that are expected, averaged
 *   per prompt (a prompt expecting nothing counts 0 when it gets any);
 * - MRR: over prompts that expect something, 1 / rank of the first expected entry (0 when none is shown);
 * - quiet: the share of chatter prompts ("thanks, that's all") that get no suggestion.
 *
 * The engine is compared with plain BM25 over name and description (`plain`: top 5, no floor), prompt by prompt:
 * prompts with a better and a worse recall@5 (and precision@5), a two-sided sign test, and a bootstrap interval of the
 * mean difference (10,000 resamples of the prompts, fixed seed).
 */

type Ranked = (prompt: string) => string[]
type PerPrompt = { recall?: number; precision?: number; rr?: number }
type Metrics = {
  recall: number
  precision: number
  mrr: number
  quiet: number
  shown: number
  per: PerPrompt[]
  misses: string[]
}
type Env = { id: string; labelled: Labelled[]; cat: DynamicDiscovery.Catalogue; engine: DynamicDiscovery.Engine }

const roots: string[] = []
const loaders: ResourceLoader.Loader[] = []
const envs: Record<string, Env> = {}
// These figures measure matching, not scan speed: on a busy machine the tuning set's scan ran past the default
// 2 s budget (its folders reported degraded, recall floors missed), so the budget here is far beyond any machine.
const SCAN = { scanTimeoutMs: 60_000 }
// Under load even the 0.3 s cases took 10 s (every one reads catalogues of hundreds of files).
setDefaultTimeout(60_000)

async function realEnv(set: RealSet): Promise<Env> {
  const root = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), `ocb-discovery-${set.id}-`)))
  roots.push(root)
  const { home, project } = await layout(set, root)
  const engine = DynamicDiscovery.create({ directory: project, worktree: project, env: { HOME: home }, config: SCAN })
  return { id: set.id, labelled: set.labelled, cat: await engine.catalogue(), engine }
}

async function syntheticEnv(): Promise<Env> {
  const root = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), "ocb-discovery-eval-")))
  roots.push(root)
  for (const [rel, text] of Object.entries(files())) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await fs.writeFile(path.join(root, rel), text)
  }
  const project = path.join(root, "project")
  const loader = ResourceLoader.create(
    { directory: project, worktree: project, log: Logger.silent },
    { persistCache: false },
  )
  loaders.push(loader)
  const engine = DynamicDiscovery.create({
    directory: project,
    worktree: project,
    // A temporary home and no XDG_CONFIG_HOME: OpenCode's global folder is ~/.config/opencode.
    env: { HOME: path.join(root, "home") },
    resources: async () => (await loader.index()).resources.values(),
    config: SCAN,
  })
  return { id: "synthetic", labelled: LABELLED, cat: await engine.catalogue(), engine }
}

beforeAll(async () => {
  envs.synthetic = await syntheticEnv()
  envs.tuning = await realEnv(SETS.tuning)
  envs.heldout = await realEnv(SETS.heldout)
  envs.heldout2 = await realEnv(SETS.heldout2)
  envs.heldout3 = await realEnv(SETS.heldout3)
  envs.heldout4 = await realEnv(SETS.heldout4)
  envs.heldout5 = await realEnv(SETS.heldout5)
  envs.heldout6 = await realEnv(SETS.heldout6)
}, 120_000)

afterAll(async () => {
  for (const loader of loaders) await loader.dispose()
  for (const root of roots) await fs.rm(root, { recursive: true, force: true })
}, 30_000)

function key(cat: DynamicDiscovery.Catalogue, index: number) {
  if (index < cat.items.length) return `${cat.items[index].resourceType}:${cat.items[index].name}`
  return `resource:${cat.resources[index - cat.items.length].id}`
}

/** What the user is shown: the engine's per-type lists, ranked together by score. */
function engineRanking(env: Env): Ranked {
  return (prompt) => {
    const ctx = env.engine.match(env.cat, prompt)
    return [
      ...ctx.matchedAgents.map((m) => ({ k: `agent:${m.item.name}`, s: m.score })),
      ...ctx.matchedCommands.map((m) => ({ k: `command:${m.item.name}`, s: m.score })),
      ...ctx.matchedSkills.map((m) => ({ k: `skill:${m.item.name}`, s: m.score })),
      ...ctx.matchedOutputStyles.map((m) => ({ k: `outputStyle:${m.item.name}`, s: m.score })),
      ...ctx.matchedResources.map((m) => ({ k: `resource:${m.resource.id}`, s: m.score })),
    ]
      .sort((a, b) => b.s - a.s)
      .map((x) => x.k)
  }
}

function strategyRanking(env: Env, strategy: DiscoveryMatch.Strategy, fields?: DiscoveryMatch.FieldTuning): Ranked {
  const index = DiscoveryMatch.index(DynamicDiscovery.documents(env.cat), strategy, DiscoveryMatch.TUNING, fields)
  return (prompt) => {
    const detection = MemoryThink.detect(prompt)
    return index.search(detection ? detection.topic : prompt).map((h) => key(env.cat, h.index))
  }
}

function evaluate(labelled: Labelled[], rank: Ranked): Metrics {
  let recall = 0
  let positives = 0
  let precision = 0
  let answered = 0
  let rr = 0
  let quiet = 0
  let chats = 0
  let shown = 0
  const per: PerPrompt[] = []
  const misses: string[] = []
  for (const l of labelled) {
    const top = rank(l.prompt).slice(0, 5)
    shown += top.length
    const hits = top.filter((k) => l.relevant.includes(k)).length
    const p: PerPrompt = {}
    if (l.relevant.length) {
      positives++
      p.recall = hits / l.relevant.length
      const first = top.findIndex((k) => l.relevant.includes(k))
      p.rr = first < 0 ? 0 : 1 / (first + 1)
      recall += p.recall
      rr += p.rr
      const missing = l.relevant.filter((r) => !top.includes(r))
      if (missing.length)
        misses.push(`${JSON.stringify(l.prompt)} missed ${missing.join(", ")} (got ${top.join(", ") || "nothing"})`)
    } else {
      if (chatter(l)) {
        chats++
        if (top.length === 0) quiet++
      }
      if (top.length) misses.push(`${JSON.stringify(l.prompt)} expected nothing, got ${top.join(", ")}`)
    }
    if (top.length) {
      answered++
      p.precision = hits / top.length
      precision += p.precision
    }
    per.push(p)
  }
  return {
    recall: recall / positives,
    precision: answered ? precision / answered : 0,
    mrr: rr / positives,
    quiet: chats ? quiet / chats : 1,
    shown: shown / labelled.length,
    per,
    misses,
  }
}

/** Two-sided sign test: the probability of a split at least this uneven among `better + worse` fair coin flips. */
function signTest(better: number, worse: number): number {
  const n = better + worse
  if (n === 0) return 1
  const k = Math.min(better, worse)
  let tail = 0
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2)
  return Math.min(1, 2 * tail)
}

function logChoose(n: number, k: number) {
  let s = 0
  for (let i = 1; i <= k; i++) s += Math.log((n - k + i) / i)
  return s
}

/** Mean of `diffs` and its 95 % bootstrap interval (percentiles of 10,000 resamples; fixed seed). */
function bootstrap(diffs: number[]): { mean: number; low: number; high: number } {
  let seed = 12345
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1)
  const means: number[] = []
  for (let r = 0; r < 10_000; r++) {
    let s = 0
    for (let i = 0; i < diffs.length; i++) s += diffs[Math.floor(random() * diffs.length)]
    means.push(s / diffs.length)
  }
  means.sort((a, b) => a - b)
  return {
    mean: mean(diffs),
    low: means[Math.floor(0.025 * means.length)],
    high: means[Math.floor(0.975 * means.length)],
  }
}

type Paired = { better: number; worse: number; same: number; p: number; mean: number; low: number; high: number }

/** Prompt-by-prompt comparison of `a` with `b` on one per-prompt measure (prompts where both have it). */
function paired(a: Metrics, b: Metrics, measure: keyof PerPrompt): Paired {
  const diffs: number[] = []
  let better = 0
  let worse = 0
  a.per.forEach((x, i) => {
    const y = b.per[i]
    // A prompt that gets no suggestion has precision 0 when it expected something (it showed nothing useful).
    const ax = x[measure] ?? (measure === "precision" && x.recall !== undefined ? 0 : undefined)
    const bx = y[measure] ?? (measure === "precision" && y.recall !== undefined ? 0 : undefined)
    if (ax === undefined || bx === undefined) return
    diffs.push(ax - bx)
    if (ax > bx) better++
    else if (ax < bx) worse++
  })
  return { better, worse, same: diffs.length - better - worse, p: signTest(better, worse), ...bootstrap(diffs) }
}

const fmt = (x: number) => x.toFixed(3)
const row = (name: string, m: Metrics) =>
  `${name.padEnd(16)} ${fmt(m.recall)}    ${fmt(m.precision)}       ${fmt(m.mrr)}  ${fmt(m.quiet)}  ${m.shown.toFixed(2)}`
const pairLine = (what: string, r: Paired) =>
  `  ${what}: ${r.better} prompts better, ${r.worse} worse, ${r.same} same; sign test p = ${r.p.toFixed(4)}; ` +
  `mean difference ${r.mean >= 0 ? "+" : ""}${fmt(r.mean)} (95 % bootstrap ${fmt(r.low)} … ${fmt(r.high)})`

/**
 * Every strategy, the engine, and the paired comparison with plain BM25, printed; returned for the assertions. The
 * engine's misses are printed unless `misses` is false (a set kept unread for later independent figures).
 */
function report(env: Env, misses = true) {
  const strategies = Object.fromEntries(
    DiscoveryMatch.STRATEGIES.map((s) => [s, evaluate(env.labelled, strategyRanking(env, s))]),
  ) as Record<DiscoveryMatch.Strategy, Metrics>
  const engine = evaluate(env.labelled, engineRanking(env))
  const plain = strategies.plain
  // What the start of the body adds: the same matcher without it (descriptive).
  const bodyless = evaluate(
    env.labelled,
    strategyRanking(env, "bm25f", {
      ...DiscoveryMatch.FIELD_TUNING,
      fields: { ...DiscoveryMatch.FIELD_TUNING.fields, body: { weight: 0, b: 0.75 } },
    }),
  )
  const recall = paired(engine, plain, "recall")
  const precision = paired(engine, plain, "precision")
  const positives = env.labelled.filter((l) => l.relevant.length).length
  console.log(
    [
      `discovery evaluation, ${env.id} set: ${env.labelled.length} prompts (${positives} expecting suggestions, ` +
        `${env.labelled.filter(chatter).length} chatter), ${env.cat.items.length} items + ${env.cat.resources.length} ` +
        `resources, ${env.cat.problems.filter((p) => p.severity !== "warning").length} files skipped, ` +
        `${env.cat.problems.filter((p) => p.severity === "warning").length} read leniently`,
      `strategy         recall@5  precision@5  MRR    quiet  avg shown`,
      ...Object.entries(strategies).map(([s, m]) => row(s, m)),
      row(`engine (${DiscoveryMatch.STRATEGY})`, engine),
      row("bm25f, no body", bodyless),
      `engine vs plain BM25, prompt by prompt:`,
      pairLine("recall@5", recall),
      pairLine("precision@5", precision),
      ...(misses ? [`misses of the engine:`, ...engine.misses.map((m) => `  ${m}`)] : []),
    ].join("\n"),
  )
  return { strategies, engine, plain, recall, precision }
}

describe("discovery matching quality", () => {
  test("the catalogues are discovered completely from real files, and every label names an entry", () => {
    const synthetic = envs.synthetic
    const discovered = (env: Env) =>
      new Set([
        ...env.cat.items.map((i) => `${i.resourceType}:${i.name}`),
        ...env.cat.resources.map((r) => `resource:${r.id}`),
      ])
    expect([...names()].filter((n) => !discovered(synthetic).has(n))).toEqual([])
    expect(synthetic.cat.problems).toEqual([])
    // The project's code-reviewer overrides the global one of the same name.
    expect(synthetic.cat.items.find((i) => i.name === "code-reviewer")!.source).toBe("local")
    for (const env of Object.values(envs)) {
      expect(env.cat.degraded).toEqual([])
      expect(env.labelled.flatMap((l) => l.relevant).filter((r) => !discovered(env).has(r))).toEqual([])
    }
    // The 8 VoltAgent agents with an unquoted ": " in their description are read leniently, as Claude Code reads
    // them; the 5 Command Suite templates whose name is "{{SKILL_NAME}}" (a YAML mapping) are still refused.
    const lenient = envs.tuning.cat.problems.filter((p) => p.severity === "warning")
    expect(lenient).toHaveLength(8)
    expect(envs.tuning.cat.problems).toHaveLength(8)
    expect(envs.tuning.cat.items).toHaveLength(232)
    // Three files of `.claude/agents` give no name and no description: Command Suite's WORKFLOW_EXAMPLES.md and
    // ATTRIBUTION.md (documents) and 0xfurai's sqs-expert.md (its `name:` line outside any frontmatter). Claude Code
    // loads none of them as an agent; they are skipped with the reason (`parse.test.ts` › "a Claude Code agent…").
    const refused = envs.heldout.cat.problems.filter((p) => p.severity !== "warning")
    expect(refused.map((p) => path.basename(p.path)).sort()).toEqual([
      "ATTRIBUTION.md",
      "WORKFLOW_EXAMPLES.md",
      "enhanced-multi-file-skill-template.md",
      "enhanced-simple-skill-template.md",
      "multi-file-skill-template.md",
      "simple-skill-template.md",
      "sqs-expert.md",
      "tool-restricted-skill-template.md",
    ])
    expect(
      refused.every(
        (p) =>
          p.error === "frontmatter `name` must be text" ||
          (p.path.includes("/.claude/agents/") && p.error === DiscoveryParse.NOT_AN_AGENT),
      ),
    ).toBe(true)
    // heldout2: one awesome-claude-agents file has a description breaking YAML in a way no retry repairs; Claude Code
    // loads it without frontmatter, and discovery lists it with its own lines read as text and a warning. The
    // project's copies of three agents shadow everything-claude-code's.
    expect(envs.heldout2.cat.items).toHaveLength(510)
    expect(envs.heldout2.cat.problems.map((p) => [path.basename(p.path), p.severity])).toEqual([
      ["rails-backend-expert.md", "warning"],
    ])
  })

  test("synthetic set: the engine keeps recall@5 ≥ 0.8 with precision@5 ≥ 0.7", () => {
    const { engine } = report(envs.synthetic)
    expect(engine.recall).toBeGreaterThanOrEqual(0.8)
    expect(engine.precision).toBeGreaterThanOrEqual(0.7)
  })

  test("tuning set (real collections the matcher was designed on): measured floors and plain BM25", () => {
    const { engine, plain, recall, precision } = report(envs.tuning)
    // Measured (docs/discovery.md, "Matching"): recall@5 0.837, precision@5 0.641 (0.829 / 0.654 before the field
    // weights of the last round); plain BM25 0.755 / 0.250.
    expect(engine.recall).toBeGreaterThanOrEqual(0.83)
    expect(engine.precision).toBeGreaterThanOrEqual(0.64)
    expect(engine.recall).toBeGreaterThan(plain.recall)
    expect(engine.precision).toBeGreaterThan(plain.precision + 0.3)
    expect(precision.p).toBeLessThan(0.01)
    expect(recall.mean).toBeGreaterThan(0)
    expect(engine.quiet).toBe(1)
  }, 60_000)

  test("first held-out set (read while tuning, so tuning material now): measured floors", () => {
    const { engine, plain, precision } = report(envs.heldout)
    expect(engine.quiet).toBeGreaterThanOrEqual(0.95)
    // Measured: recall@5 0.851, precision@5 0.558 (0.827 / 0.547 before the last round); plain BM25 0.803 / 0.261.
    expect(engine.recall).toBeGreaterThanOrEqual(0.85)
    expect(engine.precision).toBeGreaterThanOrEqual(0.55)
    expect(engine.recall).toBeGreaterThan(plain.recall)
    expect(engine.precision).toBeGreaterThan(plain.precision)
    expect(precision.p).toBeLessThan(0.01)
  }, 60_000)

  test("second held-out set (read while tuning the last changes, so tuning material now): measured floors", () => {
    const { engine, plain, recall, precision } = report(envs.heldout2)
    // Goals (recall@5 ≥ 0.85, precision@5 ≥ 0.70) not met here. Measured: recall@5 0.621, precision@5 0.402, quiet
    // 1.0 (0.609 / 0.384 before the last round, 0.473 / 0.390 / quiet 0.75 before the one before); plain BM25 0.494 /
    // 0.210. Recall above plain BM25's by +0.127 on average (21 prompts better, 7 worse, sign test p = 0.013;
    // bootstrap interval above 0).
    expect(engine.recall).toBeGreaterThanOrEqual(0.62)
    expect(engine.precision).toBeGreaterThanOrEqual(0.4)
    expect(engine.quiet).toBeGreaterThanOrEqual(0.95)
    expect(engine.precision).toBeGreaterThan(plain.precision)
    expect(precision.p).toBeLessThan(0.01)
    expect(recall.p).toBeLessThan(0.05)
    expect(recall.low).toBeGreaterThan(0)
  }, 60_000)

  test("third held-out set (prompts and labels committed before the matcher ran on it): the independent figures", () => {
    const { engine, plain, precision } = report(envs.heldout3)
    // Its first run, before anything was chosen on it (docs/discovery.md): recall@5 0.505, precision@5 0.340, MRR
    // 0.651, quiet 0.500; plain BM25 0.449 / 0.200 / 0.513 / 0.875. Recall above plain BM25's is not significant (13
    // prompts better, 7 worse, p = 0.26); precision is (31 / 7, p = 0.0001). Goals not met. Its 4 loud chatter
    // prompts were then read and the reply rules widened (Keywords.chatter, DiscoveryMatch.UNTOPICAL_WORDS): quiet
    // 1.0, precision@5 0.359, recall unchanged; its chatter figure is no longer independent. It was then tuning
    // material for the field weights of the last round: recall@5 0.512, precision@5 0.394 (recall above plain BM25's:
    // 15 prompts better, 8 worse, p = 0.21, not significant).
    expect(engine.recall).toBeGreaterThanOrEqual(0.51)
    expect(engine.precision).toBeGreaterThanOrEqual(0.39)
    expect(engine.recall).toBeGreaterThan(plain.recall)
    expect(engine.precision).toBeGreaterThan(plain.precision)
    expect(precision.p).toBeLessThan(0.01)
    expect(engine.quiet).toBe(1)
  }, 60_000)

  test("fourth held-out set (prompts and labels committed before the matcher ran on it): the independent figures", () => {
    const { engine, plain, precision } = report(envs.heldout4, false)
    // Run in aggregate only, its misses unread (docs/discovery.md, "Held-out 4"): with the matcher before the last
    // round's field weights (9bfa89d) recall@5 0.636, precision@5 0.517, MRR 0.745; after them 0.622, 0.512, 0.749;
    // plain BM25 0.615 / 0.279 / 0.697. Recall is no better than plain BM25's (13 prompts better, 13 worse); precision
    // is (47 / 7, p < 0.0001). Goals not met; measured floors.
    expect(engine.recall).toBeGreaterThanOrEqual(0.62)
    expect(engine.precision).toBeGreaterThanOrEqual(0.51)
    expect(engine.precision).toBeGreaterThan(plain.precision)
    expect(precision.p).toBeLessThan(0.01)
    expect(engine.quiet).toBe(1)
  }, 60_000)

  test("fifth held-out set (prompts and labels committed before the matcher ran on it): the independent figures", () => {
    const { engine, plain, recall, precision } = report(envs.heldout5, false)
    // Its one run, in aggregate, misses unread (docs/discovery.md, "Held-out 5"), with the matcher unchanged since ba2d2e7: recall@5
    // 0.748, precision@5 0.503, MRR 0.829, quiet 1.0, 2.80 shown; plain BM25 0.760 / 0.235 / 0.779 / 0.875. Recall is
    // no better than plain BM25's (7 prompts better, 9 worse, p = 0.80); precision is (50 / 4, p < 0.0001, +0.266).
    // Goals not met; measured floors.
    expect(engine.recall).toBeGreaterThanOrEqual(0.74)
    expect(engine.precision).toBeGreaterThanOrEqual(0.5)
    expect(engine.precision).toBeGreaterThan(plain.precision)
    expect(precision.p).toBeLessThan(0.01)
    expect(recall.p).toBeGreaterThan(0.05)
    expect(engine.quiet).toBe(1)
  }, 60_000)

  test("sixth held-out set (made blind, committed before the matcher ran on it): the independent figures", () => {
    const { engine, plain, recall, precision } = report(envs.heldout6, false)
    // Its one run, in aggregate, misses unread (docs/discovery.md, "Held-out 6"), the matcher unchanged since ba2d2e7:
    // recall@5 0.797, precision@5 0.533, MRR 0.807, quiet 1.0, 2.94 shown; plain BM25 0.803 / 0.268 / 0.784 / 0.75.
    // Recall no better than plain BM25's (6 prompts better, 4 worse, p = 0.75); precision is (33 / 3, p < 0.0001,
    // +0.257). Goals not met; measured floors.
    expect(engine.recall).toBeGreaterThanOrEqual(0.79)
    expect(engine.precision).toBeGreaterThanOrEqual(0.53)
    expect(engine.precision).toBeGreaterThan(plain.precision)
    expect(precision.p).toBeLessThan(0.01)
    expect(recall.p).toBeGreaterThan(0.05)
    expect(engine.quiet).toBe(1)
  }, 60_000)

  test("replies and short requests written blind: replies get nothing, short requests still get suggestions", () => {
    // real/replies.ts was written by someone who had seen neither the rules nor the sets. Its first run, after the
    // reply rule of Keywords.chatter was widened on held-out 3's chatter: quiet on 66-68 of 80 replies per real
    // catalogue (76 synthetic), exactly as before that change, and 60/60 short requests answered. Read after that run,
    // it led to DiscoveryMatch.UNTOPICAL_WORDS (so it is tuning material now): quiet 74-75/80 (77 synthetic), 57-59/60
    // short requests answered (docs/discovery.md). The field weights of the last round (all sets tuning material):
    // 74-75/80 quiet, 56-59/60 answered (in the tuning catalogue "rename userId to accountId everywhere" now falls
    // under the raised coverage floor).
    const rows = Object.values(envs).map((env) => {
      const shown = (p: string) => engineRanking(env)(p).slice(0, 5)
      const loud = REPLIES.filter((p) => shown(p).length > 0)
      const answered = SHORT_REQUESTS.filter((p) => shown(p).length > 0).length
      return { id: env.id, loud, answered }
    })
    console.log(
      [
        `replies (${REPLIES.length}) quiet and short requests (${SHORT_REQUESTS.length}) answered, per catalogue:`,
        ...rows.map(
          (r) =>
            `  ${r.id.padEnd(10)} quiet ${REPLIES.length - r.loud.length}/${REPLIES.length}   answered ${r.answered}/${SHORT_REQUESTS.length}` +
            (r.loud.length ? `   loud: ${r.loud.map((p) => JSON.stringify(p)).join(", ")}` : ""),
        ),
      ].join("\n"),
    )
    for (const r of rows) {
      expect(REPLIES.length - r.loud.length).toBeGreaterThanOrEqual(74)
      // Held-out 6's catalogue, new to this test, answers 54 (measured once; the others 56-59).
      expect(r.answered).toBeGreaterThanOrEqual(r.id === "heldout6" ? 54 : 56)
    }
  })

  test("the type cut of bm25f trades recall for precision on every set (figures for docs/discovery.md)", () => {
    const sets = [envs.tuning, envs.heldout, envs.heldout2]
    // "none" (-1): no cut relative to other hits at all, the first 5 hits as ranked.
    const rows = [-1, 0, 0.4, 0.5, 0.6, 0.7, 0.8].map((cut) => {
      const fields = {
        ...DiscoveryMatch.FIELD_TUNING,
        groupCut: Math.max(cut, 0),
        ...(cut < 0 ? { relativeCut: 0 } : {}),
      }
      const per = sets.map((env) => {
        const index = DiscoveryMatch.index(DynamicDiscovery.documents(env.cat), "bm25f", DiscoveryMatch.TUNING, fields)
        return evaluate(env.labelled, (p) => index.search(p).map((h) => key(env.cat, h.index)))
      })
      const mean = (f: (m: Metrics) => number) => per.reduce((a, m) => a + f(m), 0) / per.length
      return {
        cut,
        per,
        recall: mean((m) => m.recall),
        precision: mean((m) => m.precision),
        shown: mean((m) => m.shown),
      }
    })
    console.log(
      [
        `type cut (global ${DiscoveryMatch.FIELD_TUNING.relativeCut}), recall@5 / precision@5 of tuning, held-out 1, held-out 2; mean; avg shown`,
        ...rows.map(
          (r) =>
            `${(r.cut < 0 ? "none" : r.cut.toFixed(2)).padEnd(6)} ${r.per.map((m) => `${fmt(m.recall)} / ${fmt(m.precision)}`).join("   ")}   ` +
            `mean ${fmt(r.recall)} / ${fmt(r.precision)}   ${r.shown.toFixed(2)}`,
        ),
      ].join("\n"),
    )
    for (let i = 1; i < rows.length; i++) expect(rows[i].shown).toBeLessThanOrEqual(rows[i - 1].shown)
  }, 60_000)
})
