import z from "zod"

/**
 * Shapes shared by the resource loader: what a resource is, the loader's configuration, and the lifecycle of a
 * resource inside a session. Types are inferred from the schemas so both always agree.
 *
 * @example
 * const config = Resource.Config.parse({ maxResourcesPerSession: 5 }) // the other fields take their defaults
 */
export namespace Resource {
  export const TYPES = ["checklist", "knowledge-base", "schema", "task", "template"] as const
  export const Type = z.enum(TYPES)
  export type Type = z.infer<typeof Type>

  export const DOMAINS = ["opencode", "core", "docs", "dev", "common"] as const
  export const Domain = z.enum(DOMAINS)
  export type Domain = z.infer<typeof Domain>

  /** Everything the index knows about one resource file. Paths are absolute (`path`) and project-relative. */
  export const Metadata = z.object({
    id: z.string(),
    type: Type,
    path: z.string(),
    relativePath: z.string(),
    name: z.string(),
    domain: Domain,
    category: z.string().optional(),
    tags: z.array(z.string()),
    description: z.string().optional(),
    version: z.string().optional(),
    /** Ids this resource references (frontmatter `references`, else inline references in the body). */
    references: z.array(z.string()),
    /** Agent and command names that reference this resource (frontmatter `referencedBy` plus a project scan). */
    referencedBy: z.array(z.string()),
    size: z.number(),
    lastModified: z.number(),
    author: z.string().optional(),
    created: z.string().optional(),
    updated: z.string().optional(),
    difficulty: z.string().optional(),
    status: z.string().optional(),
  })
  export type Metadata = z.infer<typeof Metadata>

  /** A problem found while indexing: shown by `resource-query` and by `opencode-builtins resources lint`. */
  export const Warning = z.object({
    severity: z.enum(["error", "warning"]),
    code: z.enum([
      "malformed-frontmatter",
      "invalid-json",
      "empty-file",
      "binary-file",
      "not-utf8",
      "unreadable",
      "read-timeout",
      "oversize",
      "duplicate-id",
      "invalid-id",
      "outside-project",
      "symlink-loop",
      "dangling-reference",
      "self-reference",
      "policy-invalid",
    ]),
    path: z.string(),
    message: z.string(),
    id: z.string().optional(),
    /** Project-relative files quoted in `message`, shown relative to the client's directory as `path` is. */
    files: z.string().array().optional(),
  })
  export type Warning = z.infer<typeof Warning>

  export const MB = 1024 * 1024

  /** The loader's configuration; every field has the spec's default. */
  export const Config = z.object({
    /** Revalidate the index (by file mtimes) before every query and load, instead of only after changes are seen. */
    autoRebuildIndex: z.boolean().default(false),
    /**
     * Where the index cache lives; default: `$XDG_CACHE_HOME/opencode-builtins/resource-index/<project hash>.json`.
     * Under a security policy, one file per role and policy beside it (`LocalState.scoped`).
     */
    indexCachePath: z.string().optional(),
    persistCache: z.boolean().default(true),
    /** Default of `includeReferences` when a `resource-load` call does not say. */
    autoLoadReferences: z.boolean().default(false),
    maxReferencesDepth: z.number().int().min(0).max(10).default(2),
    autoFlagAfterMessage: z.boolean().default(true),
    maxResourcesPerSession: z.number().int().min(1).default(20),
    maxTotalSizePerSession: z
      .number()
      .int()
      .min(1)
      .default(10 * MB),
    indexBuildTimeout: z.number().int().min(1).default(30_000),
    fileReadTimeout: z.number().int().min(1).default(5_000),
    /** Files larger than this are listed but cannot be loaded. */
    maxFileSize: z.number().int().min(1).default(MB),
    /** Bytes of still-active resource content carried into a compaction summary. */
    compactionBudget: z
      .number()
      .int()
      .min(0)
      .default(32 * 1024),
  })
  export type Config = z.infer<typeof Config>
  export type ConfigInput = z.input<typeof Config>

  /** Lifecycle of a loaded resource: active → flagged → released → pruned (a new load re-activates). */
  export const Status = z.enum(["active", "flagged", "released", "pruned"])
  export type Status = z.infer<typeof Status>
}
