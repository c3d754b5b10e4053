import { Logger } from "../util/log"
import type { ResourceAccess } from "./access"
import { ResourceLoader } from "./loader"
import { ResourceProject } from "./project"
import type { Resource } from "./schema"

/**
 * Checks a project's resources the way the index sees them: malformed frontmatter or JSON, duplicate and invalid ids,
 * dangling references, oversize, binary, non-UTF-8, unreadable and out-of-project files, symlink loops. Errors make
 * the lint fail; warnings (an empty file, a self-reference) do not. Never touches the index cache. With an access
 * check (`security`), files the policy protects are neither read nor reported. As OpenCode does, a directory inside
 * `worktree` reads every `.opencode` up to it; problem paths are relative to `directory`, as every answer of the
 * resource tools gives them (`../../.opencode/…` from a package of a repository).
 *
 * @example
 * const report = await ResourceLint.run("/repo")
 * report.ok // false when any problem has severity "error"
 */
export namespace ResourceLint {
  export type Report = {
    projectRoot: string
    resources: number
    byType: Record<string, number>
    errors: number
    warnings: number
    problems: Resource.Warning[]
    ok: boolean
  }

  export async function run(
    directory: string,
    worktree?: string,
    security?: ResourceAccess.Source,
    config: Resource.ConfigInput = {},
  ): Promise<Report> {
    const loader = ResourceLoader.create(
      { directory, worktree: worktree ?? directory, log: Logger.silent, ...security },
      { ...config, persistCache: false },
    )
    try {
      const index = await loader.index()
      const project = ResourceProject.resolve(directory, worktree)
      const problems = index.warnings
        .map((p) => ({
          ...p,
          path: ResourceProject.shown(project, p.path),
          message: ResourceProject.message(project, p),
          ...(p.files ? { files: p.files.map((f) => ResourceProject.shown(project, f)) } : {}),
        }))
        .sort(
          (a, b) =>
            (a.severity === b.severity ? 0 : a.severity === "error" ? -1 : 1) ||
            (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
            (a.code < b.code ? -1 : 1),
        )
      const errors = problems.filter((p) => p.severity === "error").length
      const byType: Record<string, number> = {}
      for (const [type, ids] of index.byType) byType[type] = ids.size
      return {
        projectRoot: index.projectRoot,
        resources: index.resources.size,
        byType,
        errors,
        warnings: problems.length - errors,
        problems,
        ok: errors === 0,
      }
    } finally {
      await loader.dispose()
    }
  }
}
