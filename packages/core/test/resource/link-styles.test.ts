import { describe, expect, test } from "bun:test"
import { ResourceLint } from "../../resource/lint"
import { ResourceLoader } from "../../resource/loader"
import { ResourceParse } from "../../resource/parse"
import { Logger } from "../../util/log"
import { tmpdir } from "../fixture"

/**
 * How the link styles of documentation tools and notes apps resolve (real-world tester AJ: Dendron, Foam, mdBook,
 * radiantearth/stac-spec, Docusaurus). Small files written for these tests, each naming the shape it reproduces; the
 * bar is no false error, and a real broken link is still one.
 */
const KB = ".opencode/knowledge-base"

async function indexOf(directory: string) {
  const loader = ResourceLoader.create({ directory, worktree: directory, log: Logger.silent }, { persistCache: false })
  try {
    return await loader.index()
  } finally {
    await loader.dispose()
  }
}

const errors = (report: ResourceLint.Report) =>
  report.problems.filter((p) => p.severity === "error").map((p) => `${p.code} ${p.path} ${p.message}`)

const refsOf = (index: Awaited<ReturnType<typeof indexOf>>, id: string) => index.resources.get(id)?.references ?? []

describe("wiki links written label first (Dendron) or note first (Obsidian, Foam)", () => {
  // dendronhq/dendron-site `vault/`: `[[docs|dendron.ref.commands]]`, `[[Dendron Discord|dendron://dendron.dendron-site/
  // community.discord]]`; lint reported 453 dangling references on 1,012 notes, 360 of them false in full.
  test("AJ-1 [[label|note]] and dendron://vault/note resolve to the note that exists; neither side naming one is an error", async () => {
    await using dir = await tmpdir({
      [`${KB}/dendron.ref.commands.md`]:
        "---\nid: 4f1c2d3e-aaaa-bbbb\ntitle: Commands\ndesc: ''\n---\n\nAll commands.\n",
      [`${KB}/community.discord.md`]: "---\nid: Xy12abCDef34\ntitle: Discord\ndesc: ''\n---\n\nJoin us.\n",
      [`${KB}/changelog.md`]:
        "---\nid: 9bc92432-0000\ntitle: Changelog\ndesc: ''\n---\n\n" +
        "- new lookup flags, see [[docs|dendron.ref.commands]]\n" +
        "- come and chat in the [[Dendron Discord|dendron://dendron.dendron-site/community.discord]]\n" +
        "- details [[here|dendron://dendron.dendron-site/dendron.ref.commands#lookup]]\n" +
        // Obsidian and Foam: the note first; escaped pipe inside a table; a page's own section with a label.
        "- [[community.discord|the Discord]], | [[dendron.ref.commands\\|cmds]] |, [[#Setup|setup below]]\n",
      [`${KB}/broken.md`]: "# Broken\n\nSee [[Guide|no.such.note]] and [[No Such Note|a label]].\n",
    })
    const report = await ResourceLint.run(dir.path)
    // Of two sides naming nothing, the link is reported as written between the brackets.
    expect(errors(report)).toEqual([
      `dangling-reference ${KB}/broken.md 'broken' references 'Guide|no.such.note', 'No Such Note|a label', which match no resource`,
    ])
    const index = await indexOf(dir.path)
    expect(refsOf(index, "9bc92432-0000")).toEqual(["4f1c2d3e-aaaa-bbbb", "Xy12abCDef34"])
  })

  test("AJ-1 of two sides that both name a note, the first is taken (Obsidian's order); a dendron:// side is always the note", async () => {
    await using dir = await tmpdir({
      [`${KB}/alpha.md`]: "# Alpha\n",
      [`${KB}/beta.md`]: "# Beta\n",
      [`${KB}/page.md`]: "# Page\n\n[[alpha|beta]] and [[beta|dendron://site/alpha]]\n",
    })
    expect(errors(await ResourceLint.run(dir.path))).toEqual([])
    const index = await indexOf(dir.path)
    // `[[beta|dendron://site/alpha]]` names alpha (Dendron's label is beta): beta is never linked.
    expect(refsOf(index, "page")).toEqual(["alpha"])
  })

  test("AJ-1 dendron://vault/note: within the vault when a folder has its name (a missing note there is an error); a vault not here is no error, but listed as not loaded", async () => {
    await using dir = await tmpdir({
      [`${KB}/notes/tools.git.md`]: "# Git\n",
      [`${KB}/other/tools.git.md`]: "---\nid: other-git\n---\n# Git elsewhere\n",
      [`${KB}/page.md`]:
        "# Page\n\n[[git|dendron://other/tools.git]], [[dendron://other/tools.gone]], " +
        "[[kept elsewhere|dendron://private.vault/people.alice]]\n",
    })
    const report = await ResourceLint.run(dir.path)
    expect(errors(report)).toEqual([
      `dangling-reference ${KB}/page.md 'page' references 'dendron://other/tools.gone', which matches no resource`,
    ])
    const index = await indexOf(dir.path)
    expect(refsOf(index, "page")).toEqual(["other-git", "dendron://other/tools.gone"])
    expect(index.notIndexed.get("page")).toEqual([
      {
        ref: "dendron://private.vault/people.alice",
        reason: "a note of the Dendron vault 'private.vault', which is not in the project (no folder of that name)",
      },
    ])
  })

  test("AJ-1 parse keeps both sides of [[a|b]]; a shell test, a label that is no target and a page's own section stay out", () => {
    expect(
      ResourceParse.inlineReferences(
        '[[a|b]] [[x|dendron://v/n#h]] [[it\'s here|note]] [[ "$a" = b || c ]] [[#Top|top]] [[n\\|shown]]',
        "k/p.md",
      ),
    ).toEqual([
      { kind: "id", value: "a", or: { value: "b" } },
      { kind: "id", value: "n", section: true, vault: "v" },
      { kind: "id", value: "note" },
      { kind: "id", value: "n", or: { value: "shown" } },
    ])
  })
})

describe("Dendron's other link shapes (dendron-site, lint after the fix above)", () => {
  test("AJ-1 ranges after #, a label with #section, a URL, a wildcard note reference and dotted note names", async () => {
    await using dir = await tmpdir({
      [`${KB}/dendron.faq.md`]: "# FAQ\n\n## Why hierarchies?\n",
      [`${KB}/dendron.testimonials.alice.md`]: "# Alice\n",
      [`${KB}/dendron.testimonials.bob.md`]: "# Bob\n",
      [`${KB}/dendron.concepts.markdown.md`]: "# Markdown\n",
      [`${KB}/dendron.concepts.md`]:
        "# Concepts\n\n![[Why hierarchies?|dendron.faq#why-hierarchies,1:#*]]\n" +
        "- see [[remote vaults|#remote]] below, [[Awesome Dendron|https://github.com/dendronhq/awesome-dendron]]\n" +
        "![[dendron.testimonials.*]] ![[dendron://dendron.dendron-site/dendron.concepts.markdown]]\n" +
        "![[nothing.here.*]] [[a*b*c]]\n",
    })
    const report = await ResourceLint.run(dir.path)
    // A pattern matching no note is dangling as any name is; one with two `*` is read as a plain name.
    expect(errors(report)).toEqual([
      `dangling-reference ${KB}/dendron.concepts.md 'dendron.concepts' references 'nothing.here.*', 'a*b*c', which match no resource`,
    ])
    expect(report.problems.filter((p) => p.code === "self-reference")).toEqual([])
    expect(refsOf(await indexOf(dir.path), "dendron.concepts")).toEqual([
      "dendron.faq",
      "dendron.testimonials.alice",
      "dendron.testimonials.bob",
      "dendron.concepts.markdown",
      "nothing.here.*",
      "a*b*c",
    ])
  })
})

describe("link reference definitions (CommonMark)", () => {
  // foambubble/foam `docs/user/index.md`: `See [[publishing]] …` with `[publishing]: publishing/publish-to-github-pages.md
  // 'Publishing'` at the end of the page: Foam resolves the wiki link to the definition's target.
  test("AJ-2 a wiki link with a link reference definition resolves to the definition's target", async () => {
    await using dir = await tmpdir({
      [`${KB}/user/publishing/publish-to-github-pages.md`]: "# Publish to GitHub Pages\n\nSteps.\n",
      [`${KB}/user/index.md`]:
        "# Foam\n\nSee [[publishing]] for more details.\n\n" +
        "[publishing]: publishing/publish-to-github-pages.md 'Publishing'\n",
    })
    expect(errors(await ResourceLint.run(dir.path))).toEqual([])
    expect(refsOf(await indexOf(dir.path), "user")).toEqual(["publish-to-github-pages"])
  })

  // rust-lang/rustc-dev-guide `src/memory.md`: `` [`GenericArgs`]: ./generic_arguments.md#GenericArgs `` (no such file)
  // went unreported, and `src/type-inference.md`'s `[trait chapter]: traits/resolution.md` was no edge of the graph.
  test("AJ-3 reference-style links are references: [text][label], [label][], [label]; a missing target is a dangling-reference error", async () => {
    await using dir = await tmpdir({
      [`${KB}/traits/resolution.md`]: "# Trait resolution\n",
      [`${KB}/traits/coherence.md`]: "# Coherence\n",
      [`${KB}/traits/lowering.md`]: "# Lowering\n",
      [`${KB}/type-inference.md`]:
        "# Type inference\n\nSee the [Trait Chapter], [coherence][] and [how it is lowered][low].\n\n" +
        "[trait   chapter]: traits/resolution.md\n" +
        '[Coherence]: <traits/coherence.md> "Coherence"\n' +
        "[low]:\n  traits/lowering.md\n",
      [`${KB}/memory.md`]:
        "# Memory management\n\nInterned [`GenericArgs`] live in the arena.\n\n" +
        "[`GenericArgs`]: ./generic_arguments.md#GenericArgs\n",
    })
    const report = await ResourceLint.run(dir.path)
    expect(errors(report)).toEqual([
      `dangling-reference ${KB}/memory.md 'memory' references '${KB}/generic_arguments.md', which matches no resource`,
    ])
    expect(refsOf(await indexOf(dir.path), "type-inference")).toEqual(["resolution", "coherence", "lowering"])
  })

  test("AJ-3 a definition no text uses, one in code, a footnote and a URL are no references", async () => {
    await using dir = await tmpdir({
      [`${KB}/page.md`]:
        "# Page\n\nUses `[in code]` and [site] and a note[^1].\n\n" +
        "[unused]: gone.md\n" +
        "[in code]: also-gone.md\n" +
        "[site]: https://example.com/page.md\n" +
        "[^1]: missing.md is a word here\n\n" +
        "```md\n[fenced]\n[fenced]: gone-too.md\n```\n",
    })
    expect(errors(await ResourceLint.run(dir.path))).toEqual([])
  })
})

describe("a page linking its own sections", () => {
  // rustc-dev-guide `src/hir.md`: `[hir-bodies]: ./hir.md#hir-bodies`; `src/traits/hrtb.md`: `[hrsubtype]: ./hrtb.md`.
  test("a link to a section of its own page is no self-reference; a link to the page itself still is", async () => {
    await using dir = await tmpdir({
      [`${KB}/hir.md`]: "# HIR\n\nSee [bodies](hir.md#bodies) and [HIR bodies].\n\n[hir bodies]: ./hir.md#hir-bodies\n",
      [`${KB}/hrtb.md`]: "# HRTB\n\nSee [subtyping][hrsubtype].\n\n[hrsubtype]: ./hrtb.md\n",
    })
    const report = await ResourceLint.run(dir.path)
    expect(report.problems.map((p) => `${p.code} ${p.path}`)).toEqual([`self-reference ${KB}/hrtb.md`])
  })
})

describe("a folder's README next to a file named after the folder", () => {
  // radiantearth/stac-spec: `item-spec/README.md` (an overview) next to `item-spec/item-spec.md` (the specification);
  // the README took the folder's name, a duplicate-id error, and the specification was left out.
  test("AJ-4 the file named like its folder keeps the id; the README is <folder>-readme; both indexed, links resolve", async () => {
    await using dir = await tmpdir({
      [`${KB}/item-spec/README.md`]: "# STAC Item Specification\n\nOverview; see [the spec](item-spec.md).\n",
      [`${KB}/item-spec/item-spec.md`]: "# STAC Item Spec\n\nThe full specification.\n",
      [`${KB}/catalog/index.md`]: "# Catalogs\n\nSee [[item-spec]] and [[item-spec-readme]].\n",
      // A README whose folder has no such file keeps the folder's name, as before.
      [`${KB}/collection-spec/README.md`]: "# Collections\n",
    })
    const report = await ResourceLint.run(dir.path)
    expect(errors(report)).toEqual([])
    expect(report.resources).toBe(4)
    const index = await indexOf(dir.path)
    expect(index.resources.get("item-spec")?.relativePath).toBe(`${KB}/item-spec/item-spec.md`)
    expect(index.resources.get("item-spec-readme")?.relativePath).toBe(`${KB}/item-spec/README.md`)
    expect(index.resources.get("collection-spec")?.relativePath).toBe(`${KB}/collection-spec/README.md`)
    expect(refsOf(index, "item-spec-readme")).toEqual(["item-spec"])
    expect(refsOf(index, "catalog")).toEqual(["item-spec", "item-spec-readme"])
  })

  test("AJ-4 a README that declares the folder's name as its id is still a duplicate of the file so named", async () => {
    await using dir = await tmpdir({
      [`${KB}/item-spec/README.md`]: "---\nid: item-spec\n---\n# Overview\n",
      [`${KB}/item-spec/item-spec.md`]: "# Spec\n",
    })
    expect(errors(await ResourceLint.run(dir.path))).toEqual([
      `duplicate-id ${KB}/item-spec/item-spec.md duplicate id 'item-spec': ${KB}/item-spec/README.md is used, ${KB}/item-spec/item-spec.md is ignored; ` +
        "to index both, give it an id of its own in its frontmatter (id: item-spec-item-spec)",
    ])
  })
})

describe("bare relative links from the docs folder (Docusaurus)", () => {
  // reduxjs/redux `docs/usage/Troubleshooting.md` links `api/Store.md#subscribelistener`, meaning `docs/api/Store.md`:
  // Docusaurus tries a link without `./` or `../` next to the file, then from the docs folder.
  test("AJ-5 a bare relative link that misses next to the file resolves from the type folder when the file is there", async () => {
    await using dir = await tmpdir({
      [`${KB}/api/Store.md`]: "---\nid: Store\ntitle: Store\n---\n\n# Store\n",
      [`${KB}/usage/Troubleshooting.md`]:
        "---\nid: troubleshooting\n---\n\nCall [`getState()`](api/Store.md#getState) to read the state.\n",
    })
    expect(errors(await ResourceLint.run(dir.path))).toEqual([])
    expect(refsOf(await indexOf(dir.path), "troubleshooting")).toEqual(["Store"])
  })

  test("AJ-5 no fallback for ./ and ../, nor when the file is missing from the type folder too; next to the file wins", async () => {
    await using dir = await tmpdir({
      [`${KB}/api/Store.md`]: "---\nid: Store\n---\n# Store\n",
      [`${KB}/usage/api/Store.md`]: "---\nid: usage-store\n---\n# Usage store\n",
      [`${KB}/usage/page.md`]:
        "---\nid: page\n---\n[near](api/Store.md) [dot](./api/createStore.md) [missing](api/compose.md)\n",
    })
    const report = await ResourceLint.run(dir.path)
    expect(errors(report)).toEqual([
      `dangling-reference ${KB}/usage/page.md 'page' references '${KB}/usage/api/createStore.md', '${KB}/usage/api/compose.md', which match no resource`,
    ])
    expect(refsOf(await indexOf(dir.path), "page")).toEqual([
      "usage-store",
      `${KB}/usage/api/createStore.md`,
      `${KB}/usage/api/compose.md`,
    ])
  })
})
