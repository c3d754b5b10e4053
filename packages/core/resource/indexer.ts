import path from "path"
import { ResourceParse } from "./parse"
import { ResourceProject } from "./project"
import { Resource } from "./schema"
import { Lazy } from "../util/lazy"

/**
 * The in-memory index: resources by id, secondary indexes (type, domain, tag, referencing agent/command), the
 * reference graph and the warnings met while building it. `assemble` is pure and deterministic: the same parsed
 * files always give the same index, whatever order they were read in.
 *
 * Duplicate ids: the file in the nearest `.opencode` folder wins, then the smallest project-relative path; every
 * loser is reported. Agent and command files reference a resource by `[[id]]`, a link to its file, or by naming an
 * id that is distinctive (contains `-`, `_` or `.`, or is at least 8 characters long) as a word of their text.
 *
 * @example
 * const index = ResourceIndex.assemble(project, parsedFiles, referenceFiles, scanWarnings)
 * index.byTag.get("git") // Set { "git-operations", "pre-commit" }
 * index.graph.backward.get("pre-commit") // Set { "git-operations" }
 */
export namespace ResourceIndex {
  export const VERSION = "7"
  /** File names a wiki link may embed or link that are not resources: images, documents, media, notes apps' files. */
  const ATTACHMENT =
    /\.(png|jpe?g|gif|bmp|svg|webp|avif|ico|pdf|mp3|wav|m4a|ogg|flac|webm|mp4|mov|mkv|canvas|base|excalidraw)$/i

  const TOC = /^_?toc_?$/i
  const YAML = /\.ya?ml$/i

  export type ParsedFile = {
    relativePath: string
    path: string
    result: ResourceParse.Result
  }

  export type ReferenceFile = {
    kind: "agent" | "command"
    name: string
    relativePath: string
    /** Distinct words of the file that could be ids. */
    words: string[]
    /** Explicit `[[id]]` and file links found in the file. */
    explicit: ResourceParse.RawRef[]
  }

  /**
   * A resource file the security policy keeps from the model: never read, so only what its path tells is known (the
   * id it has when it declares none, `ResourceParse.defaultId`), to refuse a load of that id with the reason.
   */
  export type Withheld = { path: string; relativePath: string; id: string; reason: string }

  export type Index = {
    version: string
    generatedAt: number
    projectRoot: string
    resources: Map<string, Resource.Metadata>
    byType: Map<Resource.Type, Set<string>>
    byDomain: Map<Resource.Domain, Set<string>>
    /** Lower-cased tag → ids. */
    byTag: Map<string, Set<string>>
    /** Agent or command name → ids it references. */
    byReference: Map<string, Set<string>>
    graph: {
      forward: Map<string, Set<string>>
      backward: Map<string, Set<string>>
      agents: Map<string, Set<string>>
      commands: Map<string, Set<string>>
    }
    /** References that name no resource, per resource id (listed by `resource-load`, reported by lint). */
    dangling: Map<string, string[]>
    /** Protected resource files by the id their path gives them (ids of indexed resources excluded). */
    withheld: Map<string, Withheld>
    /** References to protected resource files, per resource id: the reference as written and the denial reason. */
    withheldRefs: Map<string, { ref: string; reason: string }[]>
    /**
     * References that name no indexed resource and are no lint error, per resource id, with the reason: a schema
     * published elsewhere (an absolute `$ref` no project schema declares), a file left out as a duplicate (the
     * duplicate is the error reported). `resource-load` lists them as not loaded instead of leaving them out silently.
     */
    notIndexed: Map<string, { ref: string; reason: string }[]>
    warnings: Resource.Warning[]
    /** Lower-cased text searched by queries, per id. */
    haystack: Map<string, Haystack>
    /**
     * Every haystack's `all` text joined (NUL-separated) as UTF-8 bytes, so that a query word is located with a few
     * native `Buffer.indexOf` scans instead of one test per resource (about twice as fast as `String.indexOf` on the
     * same text). `starts[i]` is the byte offset where the text of `metas[i]` begins.
     */
    text: { bytes: Buffer; starts: number[]; metas: Resource.Metadata[]; hays: Haystack[] }
  }

  export type Haystack = { id: string; name: string; tags: string; description: string; rest: string; all: string }

  /** Extracts the candidate words of an agent or command file (see `assemble` for what counts as a reference). */
  export function words(text: string): string[] {
    const out = new Set<string>()
    for (const m of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}._-]*/gu)) out.add(trimPunctuation(m[0]))
    return [...out]
  }

  /**
   * The word without its trailing `.`, `_` and `-`, cut by a loop: `/[._-]+$/` is retried from every character of a
   * long run inside the word (`a` `---…` `b`), 16 s for 100 KB.
   */
  function trimPunctuation(word: string): string {
    let end = word.length
    while (end > 0) {
      const c = word.charCodeAt(end - 1)
      if (c !== 0x2e && c !== 0x5f && c !== 0x2d) break
      end--
    }
    return end === word.length ? word : word.slice(0, end)
  }

  function add<K, V>(map: Map<K, Set<V>>, key: K, value: V) {
    let set = map.get(key)
    if (!set) map.set(key, (set = new Set()))
    set.add(value)
  }

  /** The most notes one wildcard link (`![[*]]`, `![[dendron.*]]`) is followed to; more are left out, with a note. */
  export const WILDCARD_LIMIT = 200

  function distinctive(id: string) {
    return /[-_.]/.test(id) || id.length >= 8
  }

  export function assemble(
    project: ResourceProject.Info,
    files: ParsedFile[],
    references: ReferenceFile[],
    scanWarnings: Resource.Warning[],
    withheld: readonly Withheld[] = [],
    /**
     * Whether a project file that is no resource exists (a YAML document a schema references, a Markdown file a link
     * names outside the resource folders), by relative path.
     */
    exists: (relativePath: string) => boolean = () => false,
  ): Index {
    const warnings: Resource.Warning[] = [...scanWarnings]
    const prefixes = project.opencodeDirs.map((dir) => dir + path.sep)
    const ordered = files
      .map((file) => {
        const i = prefixes.findIndex((prefix) => file.path.startsWith(prefix))
        return { file, rank: i < 0 ? prefixes.length : i }
      })
      .sort(
        (a, b) =>
          a.rank - b.rank ||
          (a.file.relativePath < b.file.relativePath ? -1 : a.file.relativePath > b.file.relativePath ? 1 : 0),
      )
      .map((r) => r.file)

    const index = empty(project)
    index.warnings = warnings
    const byPath = new Map<string, string>()
    const byUri = new Map<string, string>()
    const urisOf = new Map<string, readonly string[]>()
    const refs = new Map<string, ResourceParse.RawRef[]>()
    /**
     * Files left out as duplicates, and the id they lost to: a link to one is no lint error (the duplicate is the error
     * reported), but a load following references lists it as not loaded.
     */
    const shadowed = new Map<string, string>()
    /** Ids files have before any is moved: a schema moved off a taken id never takes one of these. */
    let natural: Set<string> | undefined
    /**
     * The ids files have by their own name or declaration, by folder (`folder/\0id`): a folder's README (index,
     * _index, SKILL) that would inherit the folder's name yields it to a file of that folder named so
     * (`item-spec/item-spec.md`), and is known as `<folder>-<its name>` (`item-spec-readme`) instead.
     */
    let own: Set<string> | undefined
    for (const file of ordered) {
      warnings.push(...file.result.warnings)
      let meta = file.result.metadata
      if (file.result.inherited) {
        own ??= new Set(
          ordered.filter((f) => !f.result.inherited).map((f) => `${folderOf(f.relativePath)}\0${f.result.metadata.id}`),
        )
        if (own.has(`${folderOf(file.relativePath)}\0${meta.id}`)) {
          const joined = `${meta.id}-${ResourceParse.stem(file.relativePath).toLowerCase()}`
          meta = { ...meta, id: invalid(joined) ? ResourceParse.slug(joined) : joined }
        }
      }
      const uris = file.result.uris ?? []
      let kept = index.resources.get(meta.id)
      // A schema is named by its `$id`, else by where it lies (its retrieval URI): one that does not declare the `$id`
      // of the schema already indexed under the same id is another document, never a duplicate (`https://a/v1/schema`
      // and `https://b/schema#`; `…/v1/item.json` and `…/v2/item.json`; `draft4/name.json` and `draft6/name.json`
      // without `$id`). It takes the id its file name gives it, or, when that is taken too, the shortest free one its
      // path gives it (`v2-item`).
      if (kept && meta.type === "schema" && !uris.some((u) => urisOf.get(kept!.id)?.includes(u))) {
        natural ??= new Set(ordered.map((f) => f.result.metadata.id))
        meta = { ...meta, id: freeId(file, natural, index.resources) }
        kept = undefined
      }
      if (kept) {
        const same = uris.some((u) => urisOf.get(kept!.id)?.includes(u))
        shadowed.set(file.relativePath, kept.id)
        natural ??= new Set(ordered.map((f) => f.result.metadata.id))
        const free = same ? "" : freeId(file, natural, index.resources)
        warnings.push({
          severity: "error",
          code: "duplicate-id",
          path: file.relativePath,
          id: meta.id,
          // The fix is named: a schema is named by its `$id`, any other file by `id:` in its frontmatter (a free id its
          // path gives it is suggested, as a schema moved off a taken id gets).
          message: same
            ? `duplicate id '${meta.id}': declares the same $id as ${kept.relativePath} (used), ` +
              `${file.relativePath} is ignored; a schema is named by its $id: give one of them its own`
            : `duplicate id '${meta.id}': ${kept.relativePath} is used, ${file.relativePath} is ignored; to index ` +
              `both, give it an id of its own in its frontmatter (id: ${free})`,
        })
        continue
      }
      // Fresh copies: the parsed result may be shared with a cache and reused by later builds.
      // Tags are never changed, so they are shared.
      index.resources.set(meta.id, { ...meta, referencedBy: [...meta.referencedBy] })
      byPath.set(file.relativePath, meta.id)
      urisOf.set(meta.id, uris)
      for (const uri of uris) if (!byUri.has(uri)) byUri.set(uri, meta.id)
      refs.set(meta.id, file.result.refs)
    }

    const withheldByPath = new Map<string, Withheld>()
    for (const w of [...withheld].sort((a, b) => (a.relativePath < b.relativePath ? -1 : 1))) {
      withheldByPath.set(w.relativePath, w)
      if (!index.resources.has(w.id) && !index.withheld.has(w.id)) index.withheld.set(w.id, w)
    }
    /** The protected file a reference that names no indexed resource points at, if any. */
    const protectedTarget = (ref: ResourceParse.RawRef): Withheld | undefined =>
      ref.kind === "id"
        ? index.withheld.get(ref.value)
        : ref.kind === "path"
          ? withheldByPath.get(ref.value)
          : ref.path === undefined
            ? undefined
            : withheldByPath.get(ref.path)

    /**
     * An id reference resolves to that id, else the way a notes app resolves a wiki link (`[[Create a base]]`,
     * `[[Bases/Views]]`): the resource whose file name, without extension and case, is the target (the shortest path
     * when several are; with folders, the one whose path ends with them), else the id the target's name would get.
     */
    let byName: Map<string, string[]> | undefined
    /**
     * The file a wiki-style target names (indexed or left out as a duplicate), by name and trailing folders; of several,
     * the one in the linking file's folder, else the shortest path.
     */
    const noteFile = (value: string, from?: string): string | undefined => {
      if (!byName) {
        byName = new Map()
        const files = [...byPath.keys(), ...shadowed.keys()]
        for (const file of files.sort((a, b) => a.length - b.length || (a < b ? -1 : 1))) {
          const key = ResourceParse.stem(file).toLowerCase()
          const list = byName.get(key)
          if (list) list.push(file)
          else byName.set(key, [file])
        }
      }
      const lower = value.toLowerCase()
      const slash = lower.lastIndexOf("/")
      const files = byName.get(slash < 0 ? lower : lower.slice(slash + 1))
      if (slash < 0) {
        const folder = from === undefined ? undefined : from.slice(0, from.lastIndexOf("/") + 1)
        return (
          (folder !== undefined && files?.find((f) => f.startsWith(folder) && !f.includes("/", folder.length))) ||
          files?.[0]
        )
      }
      return files?.find((file) => {
        const bare = file.slice(0, file.length - path.extname(file).length).toLowerCase()
        return bare === lower || bare.endsWith("/" + lower)
      })
    }
    const byNote = (value: string, from?: string): string | undefined => {
      const file = noteFile(value, from)
      if (file) return byPath.get(file)
      const slugged = ResourceParse.slug(value)
      return slugged && index.resources.has(slugged) ? slugged : undefined
    }
    const byId = (value: string, from?: string) => (index.resources.has(value) ? value : byNote(value, from))
    /** Lower-cased names of the folders below the type folders: the Dendron vaults a `dendron://` link can name here. */
    let folders: Set<string> | undefined
    const knownVault = (vault: string): boolean => {
      if (!folders) {
        folders = new Set()
        for (const file of [...byPath.keys(), ...shadowed.keys()]) {
          const parts = file.toLowerCase().split("/")
          for (let i = parts.lastIndexOf(".opencode") + 2; i < parts.length - 1; i++) folders.add(parts[i])
        }
      }
      return folders.has(vault.toLowerCase())
    }
    /** The file of a note inside a vault folder (`dendron://vault/note`): a note of that name under a folder so named. */
    const vaultFile = (value: string, vault: string): string | undefined => {
      noteFile(value)
      const lower = value.toLowerCase()
      const inside = `/${vault.toLowerCase()}/`
      return byName!.get(lower.slice(lower.lastIndexOf("/") + 1))?.find((f) => f.toLowerCase().includes(inside))
    }
    /**
     * The reference as it is resolved: of `[[a|b]]`, the side naming a note (`a` first, then `b`; of two that name
     * none, one naming a file left out as a duplicate), and of a bare relative link that misses next to its file, the
     * same path from the type folder when a file is there (Docusaurus); else the reference unchanged.
     */
    const effective = (ref: ResourceParse.RawRef, from?: string): ResourceParse.RawRef => {
      if (ref.kind === "id" && ref.or && ref.vault === undefined) {
        const or: ResourceParse.RawRef = { kind: "id", ...ref.or }
        if (byId(ref.value, from)) return ref
        if (byId(ref.or.value, from)) return or
        if (noteFile(ref.value, from)) return ref
        if (noteFile(ref.or.value, from)) return or
        return ref
      }
      if (ref.kind === "path" && ref.fallback !== undefined) {
        const there = (p: string) => byPath.has(p) || shadowed.has(p) || withheldByPath.has(p) || exists(p)
        if (!there(ref.value) && there(ref.fallback))
          return ref.section
            ? { kind: "path", value: ref.fallback, section: true }
            : { kind: "path", value: ref.fallback }
      }
      return ref
    }
    /** A schema `$ref` resolves by the URI it names (a schema's `$id`), else by the file it names as a path. */
    const resolve = (ref: ResourceParse.RawRef, from?: string): string | undefined =>
      ref.kind === "id"
        ? ref.vault !== undefined && knownVault(ref.vault)
          ? byPath.get(vaultFile(ref.value, ref.vault) ?? "")
          : byId(ref.value, from)
        : ref.kind === "path"
          ? byPath.get(ref.value)
          : ((ref.uri === undefined ? undefined : byUri.get(ref.uri)) ??
            (ref.path === undefined ? undefined : byPath.get(ref.path)))
    /**
     * The indexed notes whose file name (without extension, any case) a pattern with one `*` matches (Dendron's
     * `dendron.testimonials.*`), by path; none for a pattern with more (no pattern is run as an expression).
     */
    let stems: [string, string][] | undefined
    /**
     * Matches per pattern, made once: N notes each holding `![[*]]` scan the notes once, not N times. At most
     * `WILDCARD_LIMIT + 1` are kept (the one past the limit says that it was reached).
     */
    const wildcards = new Map<string, string[]>()
    const wildcard = (pattern: string): string[] => {
      const key = pattern.toLowerCase()
      const known = wildcards.get(key)
      if (known) return known
      const parts = key.split("*")
      const out: string[] = []
      wildcards.set(key, out)
      if (parts.length !== 2) return out
      const [head, tail] = parts
      stems ??= [...byPath]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([file, target]) => [ResourceParse.stem(file).toLowerCase(), target])
      for (const [stem, target] of stems) {
        if (stem.length >= head.length + tail.length && stem.startsWith(head) && stem.endsWith(tail)) out.push(target)
        if (out.length > WILDCARD_LIMIT + 1) break
      }
      return out
    }
    /** A reference as lint and `resource-load` name it. */
    const shown = (ref: ResourceParse.RawRef): string =>
      ref.kind !== "id"
        ? ref.value
        : ref.vault !== undefined
          ? `dendron://${ref.vault}/${ref.value}`
          : ref.or
            ? `${ref.value}|${ref.or.value}`
            : ref.value

    for (const [id, raw] of refs) {
      const meta = index.resources.get(id)!
      if (raw.length === 0) {
        meta.references = []
        continue
      }
      // Sets, in insertion order: a link naming thousands of notes must not cost a scan of the list per note.
      const resolved = new Set<string>()
      const dangling = new Set<string>()
      const danglingFiles = new Set<string>()
      for (const written of raw) {
        // A Dendron wildcard note reference (`![[dendron.testimonials.*]]`) names every note its pattern matches, up
        // to `WILDCARD_LIMIT` (the others are left out, and `resource-load` says so).
        if (written.kind === "id" && written.value.includes("*")) {
          const others = wildcard(written.value).filter((target) => target !== id)
          const matches = others.slice(0, WILDCARD_LIMIT)
          for (const target of matches) resolved.add(target)
          if (others.length > WILDCARD_LIMIT) {
            const list = index.notIndexed.get(id) ?? []
            const display = written.value
            if (!list.some((r) => r.ref === display))
              list.push({
                ref: display,
                reason: `the wildcard matches more than ${WILDCARD_LIMIT} notes; only the first ${WILDCARD_LIMIT} (by path) are followed`,
              })
            index.notIndexed.set(id, list)
          }
          if (matches.length) continue
        }
        const ref = effective(written, meta.relativePath)
        const target = resolve(ref, meta.relativePath)
        if (target === id) {
          // A schema naming itself is recursion, which JSON Schema allows; a page links its own sections.
          if (ref.kind === "schema" || ref.section) continue
          warnings.push({
            severity: "warning",
            code: "self-reference",
            path: meta.relativePath,
            id,
            message: `'${id}' references itself; ignored`,
          })
          continue
        }
        if (target) {
          resolved.add(target)
          continue
        }
        const display = shown(ref)
        const note = (reason: string) => {
          const list = index.notIndexed.get(id) ?? []
          if (!list.some((r) => r.ref === display)) list.push({ ref: display, reason })
          index.notIndexed.set(id, list)
        }
        // A document published elsewhere (a meta-schema, a schema on the web): no error, but never left out unsaid.
        if (ref.kind === "schema" && ref.external) {
          note("no schema of the project declares this $id (a document published elsewhere)")
          continue
        }
        // A wiki link to an attachment (`![[diagram.png]]`, `[[report.pdf]]`) names no resource, and none is missing;
        // `[[toc]]` (VitePress) and `[[_TOC_]]` (GitLab) that name no note are table-of-contents directives.
        if (ref.kind === "id" && (ATTACHMENT.test(ref.value) || TOC.test(ref.value))) continue
        if (ref.kind === "id" && ref.or && ATTACHMENT.test(ref.or.value)) continue
        // A Dendron link to a note of another vault (`dendron://<vault>/<note>`, the vault no folder here and no note
        // of that name in the project): a note kept elsewhere, as a URL is, so no error.
        if (ref.kind === "id" && ref.vault !== undefined && !knownVault(ref.vault)) {
          note(`a note of the Dendron vault '${ref.vault}', which is not in the project (no folder of that name)`)
          continue
        }
        // A `$ref` to a YAML document (OpenAPI, AsyncAPI): only `.json` schemas are indexed; a missing one is dangling.
        if (ref.kind === "schema" && ref.path !== undefined && YAML.test(ref.path) && exists(ref.path)) {
          note("a YAML document, not indexed (only .json schemas are)")
          continue
        }
        const named =
          ref.kind === "id"
            ? ref.vault !== undefined
              ? vaultFile(ref.value, ref.vault)
              : noteFile(ref.value, meta.relativePath)
            : ref.kind === "path"
              ? ref.value
              : ref.path
        const winner = named === undefined ? undefined : shadowed.get(named)
        if (winner !== undefined) {
          const file = named === ref.value ? "the file" : named
          note(`${file} is left out of the index as a duplicate of '${winner}' (see resources lint)`)
          continue
        }
        const hidden = protectedTarget(ref)
        const existing = ref.kind === "path" ? ref.value : ref.kind === "schema" ? ref.path : undefined
        if (hidden) {
          const list = index.withheldRefs.get(id) ?? []
          if (!list.some((r) => r.ref === ref.value)) list.push({ ref: ref.value, reason: hidden.reason })
          index.withheldRefs.set(id, list)
        } else if (existing !== undefined && exists(existing)) {
          // A link to a file of the repository that is no resource (CONTRIBUTING.md, a package's README, a JSON file
          // outside the schema folders): it names a file that is there, so nothing is missing.
          note("a file of the project, not a resource; read it with the read tool")
        } else {
          dangling.add(display)
          if (ref.kind === "path") danglingFiles.add(display)
        }
      }
      meta.references = [...resolved, ...dangling]
      if (dangling.size) {
        index.dangling.set(id, [...dangling])
        warnings.push({
          severity: "error",
          code: "dangling-reference",
          path: meta.relativePath,
          id,
          message: `'${id}' references ${[...dangling].map((d) => `'${d}'`).join(", ")}, which ${dangling.size === 1 ? "matches" : "match"} no resource`,
          ...(danglingFiles.size ? { files: [...danglingFiles] } : {}),
        })
      }
    }

    for (const ref of [...references].sort((a, b) => (a.relativePath < b.relativePath ? -1 : 1))) {
      const found = new Set<string>()
      for (const r of ref.explicit) {
        const target = resolve(effective(r))
        if (target) found.add(target)
      }
      for (const word of ref.words) if (distinctive(word) && index.resources.has(word)) found.add(word)
      const graph = ref.kind === "agent" ? index.graph.agents : index.graph.commands
      for (const id of found) {
        add(graph, ref.name, id)
        const meta = index.resources.get(id)!
        if (!meta.referencedBy.includes(ref.name)) meta.referencedBy.push(ref.name)
      }
    }

    for (const meta of index.resources.values()) meta.referencedBy.sort()
    return finish(index)
  }

  /**
   * The id of a schema whose `$id` ends as an indexed schema's does: the id its file name gives it when free, else
   * the shortest run of its path's last folders joined to that name (`v2-item` for `schema/v2/item.json`,
   * `2.6.0-info` for `definitions/2.6.0/info.json`), else that with a number. Never an id another file has before any
   * is moved (`natural`), nor one already taken, so two documents never meet on one id.
   */
  function freeId(file: ParsedFile, natural: Set<string>, taken: Map<string, unknown>): string {
    const free = (id: string) => !!id && !invalid(id) && !natural.has(id) && !taken.has(id)
    const name = ResourceParse.defaultId(file.relativePath)
    if (file.result.fallbackId !== undefined && !taken.has(name)) return name
    const dirs = file.relativePath.split("/").slice(0, -1)
    const from = Math.max(0, dirs.lastIndexOf(".opencode") + 1)
    let candidate = name
    for (let i = dirs.length - 1; i >= from; i--) {
      const joined = `${dirs[i]}-${candidate}`
      candidate = invalid(joined) ? ResourceParse.slug(joined) : joined
      if (free(candidate)) return candidate
    }
    const stem = candidate.slice(0, ResourceParse.MAX_ID_LENGTH - 12)
    for (let n = 2; ; n++) if (free(`${stem}-${n}`)) return `${stem}-${n}`
  }

  function folderOf(relativePath: string) {
    return relativePath.slice(0, relativePath.lastIndexOf("/") + 1)
  }

  function invalid(id: string) {
    return ResourceParse.invalidIdReason(id) !== undefined
  }

  /** The lower-cased text queries search for one resource (`Index.haystack`). */
  function haystackOf(id: string, meta: Resource.Metadata): Haystack {
    const hay = {
      id: id.toLowerCase(),
      name: meta.name.toLowerCase(),
      tags: meta.tags.join(" ").toLowerCase(),
      description: (meta.description ?? "").toLowerCase(),
      // Types and domains are lower-case names already.
      rest: `${meta.type} ${meta.domain} ${meta.category ? meta.category.toLowerCase() : ""}`,
      all: "",
    }
    hay.all = `${hay.id}\n${hay.name}\n${hay.tags}\n${hay.description}\n${hay.rest}`
    return hay
  }

  /**
   * The parts of an index that follow from its resources alone: secondary indexes, the reference graph's forward and
   * backward maps (from each resource's resolved references), the search text. Shared by `assemble` and `hydrate`;
   * `text` is the search text a snapshot kept (`hydrate`), whose per-resource haystacks are then made at first use.
   */
  function finish(index: Index, text?: { joined: () => string; starts: number[] }): Index {
    // `references` lists the resolved ids first, then the dangling references (`assemble`). The graph serves only
    // loads that follow references: built at the first one.
    const edges = (reverse: boolean) => {
      const map: Map<string, Set<string>> = new Map()
      for (const [id, meta] of index.resources) {
        const resolved = meta.references.length - (index.dangling.get(id)?.length ?? 0)
        for (let i = 0; i < resolved; i++)
          if (reverse) add(map, meta.references[i], id)
          else add(map, id, meta.references[i])
      }
      return map
    }
    Lazy.define(index.graph, "forward", () => edges(false))
    Lazy.define(index.graph, "backward", () => edges(true))
    // Tag and referencing-agent lookups serve only queries that filter by them: built at the first such query.
    Lazy.define(index, "byTag", () => {
      const map: Index["byTag"] = new Map()
      for (const [id, meta] of index.resources) for (const tag of meta.tags) add(map, tag.toLowerCase(), id)
      return map
    })
    Lazy.define(index, "byReference", () => {
      const map: Index["byReference"] = new Map()
      for (const [id, meta] of index.resources) for (const name of meta.referencedBy) add(map, name, id)
      return map
    })
    // Type and domain lookups serve only queries that filter by them (and lint's counts).
    Lazy.define(index, "byType", () => {
      const map: Index["byType"] = new Map()
      for (const [id, meta] of index.resources) add(map, meta.type, id)
      return map
    })
    Lazy.define(index, "byDomain", () => {
      const map: Index["byDomain"] = new Map()
      for (const [id, meta] of index.resources) add(map, meta.domain, id)
      return map
    })
    if (text) {
      // Restored: the joined text comes from the snapshot, made at the first query that searches it; each resource's
      // metadata (`Stored`) and haystack at the first query that reads it (a query scoring candidates, or a
      // filtered one), not at the start.
      const ids = [...index.resources.keys()]
      const hays: Haystack[] = new Array(ids.length)
      const meta = (i: number) => index.resources.get(ids[i])!
      const hay = (i: number) => (hays[i] ??= haystackOf(ids[i], meta(i)))
      positions.set(index, { meta, hay })
      Lazy.define(index.text, "bytes", () => Buffer.from(text.joined()))
      index.text.starts = text.starts
      Lazy.define(index.text, "metas", () => [...index.resources.values()])
      Lazy.define(index.text, "hays", () => ids.map((_, i) => hay(i)))
      Lazy.define(index, "haystack", () => {
        const map: Index["haystack"] = new Map()
        ids.forEach((id, i) => map.set(id, hay(i)))
        return map
      })
      return index
    }
    const parts: string[] = []
    for (const [id, meta] of index.resources) {
      const hay = haystackOf(id, meta)
      index.haystack.set(id, hay)
      index.text.metas.push(meta)
      index.text.hays.push(hay)
      parts.push(hay.all)
    }
    const joined = parts.join("\u0000")
    index.text.bytes = Buffer.from(joined)
    // Byte offsets: for ASCII text (the common case) they are the character offsets.
    const ascii = index.text.bytes.length === joined.length
    let offset = 0
    for (const part of parts) {
      index.text.starts.push(offset)
      offset += (ascii ? part.length : Buffer.byteLength(part)) + 1
    }
    return index
  }

  /**
   * What an index holds that its parsed files do not say, in JSON, to persist beside them: every resource's metadata
   * as assembled (ids moved off duplicates, resolved and dangling references, who references it), in index order; the
   * agent and command graph; every warning; the search text (`Index.text`). `hydrate` makes the same index from it
   * without reading a parsed file or resolving anything again, and builds each resource's haystack only when a query
   * first needs it. Only for an index built without a security check (no withheld files).
   *
   * @example
   * const again = ResourceIndex.hydrate(project, JSON.parse(JSON.stringify(ResourceIndex.snapshot(index))))
   */
  export type Snapshot = {
    resources: Resource.Metadata[]
    agents: [string, string[]][]
    commands: [string, string[]][]
    dangling: [string, string[]][]
    notIndexed: [string, { ref: string; reason: string }[]][]
    warnings: Resource.Warning[]
    /** `Index.text`: the haystacks joined by NUL, and the byte offset where each resource's begins. */
    text: string
    starts: number[]
  }

  export function snapshot(index: Index): Snapshot {
    const list = (map: Map<string, Set<string>>) => [...map].map(([k, v]) => [k, [...v]] as [string, string[]])
    return {
      resources: index.text.metas,
      agents: list(index.graph.agents),
      commands: list(index.graph.commands),
      dangling: [...index.dangling],
      notIndexed: [...index.notIndexed],
      warnings: index.warnings,
      text: index.text.bytes.toString("utf8"),
      starts: index.text.starts,
    }
  }

  /**
   * The index `snapshot` was taken of; undefined when `snap` does not have a snapshot's shape. The snapshot's objects
   * become the index's (a snapshot just parsed from the cache file has no other user).
   */
  export function hydrate(project: ResourceProject.Info, snap: Snapshot | undefined): Index | undefined {
    if (!snap) return undefined
    const { resources, text, ...rest } = snap
    if (!Array.isArray(resources) || !resources.every(fits) || typeof text !== "string") return undefined
    const index = hydrateStored(project, {
      ...rest,
      ids: resources.map((meta) => meta.id),
      entry: (i) => resources[i],
      entries: () => resources,
      text: () => text,
    })
    // Every entry checked above: none can fail at its first read.
    if (index) index.resources.forEach(() => {})
    return index
  }

  /**
   * A snapshot as the cache file holds it (`ResourceCache`), read by parts: the ids and the small parts at once, each
   * resource's metadata at its first read (`entry`, or `entries` for all of them in one parse), the search text at the
   * first query that searches it. Whatever these give is checked when first read.
   */
  export type Stored = Omit<Snapshot, "resources" | "text"> & {
    ids: string[]
    entry: (i: number) => unknown
    entries: () => unknown
    text: () => unknown
  }

  /** The restored index's per-position lookups (`metaAt`, `hayAt`): made at first use, not at the start. */
  const positions = new WeakMap<Index, { meta: (i: number) => Resource.Metadata; hay: (i: number) => Haystack }>()

  /** The metadata of the resource at position `i` of `index.text`. */
  export function metaAt(index: Index, i: number): Resource.Metadata {
    return positions.get(index)?.meta(i) ?? index.text.metas[i]
  }

  /** The haystack of the resource at position `i` of `index.text`. */
  export function hayAt(index: Index, i: number): Haystack {
    return positions.get(index)?.hay(i) ?? index.text.hays[i]
  }

  /** Thrown at the first read of a restored entry that does not fit (`damaged` is then true). */
  export class DamagedError extends Error {}

  const damagedIndexes = new WeakSet<Index>()

  /**
   * True once a restored index met an entry of its cache that does not fit: it gave no answer from it (the read threw
   * `DamagedError`) and must be rebuilt. The file's hash makes this a safeguard (a file re-signed by hand, a bug).
   */
  export function damaged(index: Index): boolean {
    return damagedIndexes.has(index)
  }

  function fits(meta: unknown): meta is Resource.Metadata {
    const m = meta as Resource.Metadata | null
    return (
      typeof m?.id === "string" &&
      typeof m.name === "string" &&
      Array.isArray(m.tags) &&
      Array.isArray(m.references) &&
      Array.isArray(m.referencedBy)
    )
  }

  /**
   * `Index.resources` of a restored index: every id from the start, each metadata parsed at its first read (`get`),
   * or all at once by the first walk over them (`values`, `entries`, iteration, `forEach`). Until then the map holds
   * the entry's position in place of its metadata, which no caller sees.
   */
  class StoredResources extends Map<string, Resource.Metadata> {
    #stored: Stored
    #damage: () => never
    #complete = false
    /** Entries read one by one so far. */
    #read = 0

    constructor(stored: Stored, damage: () => never) {
      super()
      this.#stored = stored
      this.#damage = damage
      const set = Map.prototype.set
      for (let i = 0; i < stored.ids.length; i++) set.call(this, stored.ids[i], i as unknown as Resource.Metadata)
    }

    override get(id: string): Resource.Metadata | undefined {
      const value = super.get(id) as Resource.Metadata | number | undefined
      if (typeof value !== "number") return value
      let meta: unknown
      try {
        meta = this.#stored.entry(value)
      } catch {
        this.#damage()
      }
      if (!fits(meta) || meta.id !== id) this.#damage()
      super.set(id, meta)
      this.#read++
      return meta
    }

    #all() {
      if (this.#complete) return
      const ids = this.#stored.ids
      let list: unknown
      try {
        list = this.#stored.entries()
      } catch {
        this.#damage()
      }
      if (!Array.isArray(list) || list.length !== ids.length) this.#damage()
      for (let i = 0; i < ids.length; i++) {
        // Entries read one by one before keep their object: the same metadata whichever way it was reached.
        if (this.#read && typeof super.get(ids[i]) !== "number") continue
        const meta = list[i]
        if (!fits(meta) || meta.id !== ids[i]) this.#damage()
        super.set(ids[i], meta)
      }
      this.#complete = true
    }

    override values() {
      this.#all()
      return super.values()
    }

    override entries() {
      this.#all()
      return super.entries()
    }

    override [Symbol.iterator]() {
      this.#all()
      return super[Symbol.iterator]()
    }

    override forEach(
      fn: (value: Resource.Metadata, key: string, map: Map<string, Resource.Metadata>) => void,
      self?: unknown,
    ) {
      this.#all()
      super.forEach(fn, self)
    }
  }

  /** The index `stored` was written from (`snapshot`); undefined when its parts do not have a snapshot's shape. */
  export function hydrateStored(project: ResourceProject.Info, stored: Stored): Index | undefined {
    const { ids, starts } = stored
    if (!Array.isArray(ids) || !Array.isArray(starts) || starts.length !== ids.length) return undefined
    if (![stored.agents, stored.commands, stored.dangling, stored.notIndexed, stored.warnings].every(Array.isArray))
      return undefined
    if (!ids.every((id) => typeof id === "string")) return undefined
    const index = empty(project)
    const damage = (): never => {
      damagedIndexes.add(index)
      throw new DamagedError("the resource index cache holds an entry that does not fit; the index is rebuilt")
    }
    index.resources = new StoredResources(stored, damage)
    if (index.resources.size !== ids.length) return undefined
    index.warnings = stored.warnings
    for (const [k, v] of stored.dangling) index.dangling.set(k, v)
    for (const [k, v] of stored.notIndexed) index.notIndexed.set(k, v)
    for (const [k, v] of stored.agents) index.graph.agents.set(k, new Set(v))
    for (const [k, v] of stored.commands) index.graph.commands.set(k, new Set(v))
    const joined = () => {
      let text: unknown
      try {
        text = stored.text()
      } catch {
        damage()
      }
      return typeof text === "string" ? text : damage()
    }
    return finish(index, { joined, starts })
  }

  function empty(project: ResourceProject.Info): Index {
    return {
      version: VERSION,
      generatedAt: Date.now(),
      projectRoot: project.root,
      resources: new Map(),
      byType: new Map(),
      byDomain: new Map(),
      byTag: new Map(),
      byReference: new Map(),
      graph: { forward: new Map(), backward: new Map(), agents: new Map(), commands: new Map() },
      dangling: new Map(),
      withheld: new Map(),
      withheldRefs: new Map(),
      notIndexed: new Map(),
      warnings: [],
      haystack: new Map(),
      text: { bytes: Buffer.alloc(0), starts: [], metas: [], hays: [] },
    }
  }
}
