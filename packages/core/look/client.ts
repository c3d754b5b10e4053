import type { Host, HostChildCall, HostModel } from "../host"
import { LocalState } from "../learning/local"
import { LookModels } from "./models"
import { LookOrphans } from "./orphans"

/**
 * `Host.models` and `Host.child` over OpenCode's SDK client (the external plugin's `input.client`, wired in-process to
 * OpenCode's server), written against the v1 routes both OpenCode 1.2.15 and 1.18.x serve:
 *
 * - `models`: `GET /config/providers` — each model's `capabilities.input` (set by `modalities` in opencode.json).
 * - `child`: `POST /session` with `parentID`, `POST /session/{id}/message` with the model, the agent, a system
 *   addition, every tool denied (`tools: { "*": false }`) and the parts; the child session is aborted with the
 *   parent's call and deleted once answered. While the call runs, the child session is recorded in the project's
 *   local state (`LookOrphans`, when `project` is given): if OpenCode is killed mid-call (no `finally` runs), the
 *   child session, the file it carried included, stays in OpenCode's storage until `childOrphans` — which look_at
 *   runs before the first request of a later start — deletes it, once `GET /session/{id}` reports it a child of the
 *   recorded parent titled `look_at …` (a record naming any other session is dropped, nothing deleted).
 *
 * @example
 * const host: Host = { directory, worktree, log, ...LookClient.fromSdk(input.client) }
 */
export namespace LookClient {
  /** The part of the SDK client used here (structural: core imports no SDK). */
  export type Sdk = {
    config: { providers(options?: any): Promise<{ data?: any; error?: any }> }
    session: {
      get(options: any): Promise<{ data?: any; error?: any; response?: any }>
      create(options: any): Promise<{ data?: any; error?: any }>
      prompt(options: any): Promise<{ data?: any; error?: any }>
      abort(options: any): Promise<unknown>
      delete(options: any): Promise<unknown>
    }
  }

  export function fromSdk(
    client: Sdk,
    project?: { directory: string; worktree?: string },
  ): Pick<Host, "models" | "child" | "childOrphans"> {
    const root = project ? LocalState.root(project.directory, project.worktree) : undefined
    const notFound = (result: any) => {
      const error = result?.error
      const status = result?.response?.status
      return status === 404 || error?.name === "NotFoundError" || error?.data?.name === "NotFoundError"
    }
    /** Deletes a session: true once it is gone (deleted now, or not found). */
    const remove = async (id: string) => {
      const result: any = await client.session.delete({ path: { id } })
      return !result?.error || notFound(result)
    }
    /** A recorded session deleted only when OpenCode reports it as look_at's child of the recorded parent. */
    const removeOrphan = async (entry: LookOrphans.Record): Promise<boolean | "dropped"> => {
      const got: any = await client.session.get({ path: { id: entry.id } })
      if (got?.error || !got?.data) return notFound(got)
      if (!LookOrphans.ours(got.data, entry)) return "dropped"
      return remove(entry.id)
    }
    return {
      ...(root ? { childOrphans: () => LookOrphans.sweep(root, removeOrphan) } : {}),
      async models() {
        const result = await client.config.providers()
        if (result.error || !result.data) throw new Error(`provider list unavailable: ${describe(result.error)}`)
        const out: HostModel[] = []
        for (const provider of result.data.providers ?? []) {
          for (const [id, model] of Object.entries<any>(provider.models ?? {})) {
            const input = LookModels.inputOf(model)
            out.push({
              providerID: provider.id,
              modelID: model?.id ?? id,
              name: model?.name,
              input: input ?? { image: false, pdf: false },
            })
          }
        }
        return out
      },
      async child(call: HostChildCall) {
        const created = await client.session.create({ body: { parentID: call.sessionID, title: call.title } })
        const id = created.data?.id
        if (created.error || typeof id !== "string")
          throw new Error(`child session not created: ${describe(created.error)}`)
        if (root) {
          try {
            LookOrphans.record(root, id, call.sessionID)
          } catch {}
        }
        const abort = () => void client.session.abort({ path: { id } }).catch(() => {})
        call.signal?.addEventListener("abort", abort, { once: true })
        try {
          const result = await client.session.prompt({
            path: { id },
            body: {
              model: call.model,
              agent: call.agent,
              system: call.system,
              tools: { "*": false },
              parts: call.parts,
            },
          })
          if (call.signal?.aborted) throw new Error("look_at was aborted")
          if (result.error || !result.data) throw new Error(`model call failed: ${describe(result.error)}`)
          const info = result.data.info ?? {}
          if (info.error) throw new Error(`${LookModels.key(call.model)} failed: ${describe(info.error)}`)
          return (result.data.parts ?? [])
            .filter((p: any) => p?.type === "text" && !p.synthetic && typeof p.text === "string")
            .map((p: any) => p.text)
            .join("\n")
        } finally {
          call.signal?.removeEventListener("abort", abort)
          const gone = await remove(id).catch(() => false)
          if (gone && root) LookOrphans.forget(root, id)
        }
      },
    }
  }

  function describe(error: any): string {
    if (!error) return "no answer"
    if (typeof error === "string") return error
    return error.data?.message ?? error.message ?? error.name ?? JSON.stringify(error).slice(0, 300)
  }
}
