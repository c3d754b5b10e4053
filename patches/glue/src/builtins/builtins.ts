// OpenCode Built-ins: OpenCode's services adapted to core's Host, and the functions the seams call. Every rule lives in
// @opencode-builtins/core (BuiltinsSeams); this file only connects. Kept in the OpenCode Built-ins repository as
// patches/glue/src/builtins/builtins.ts, from which builtins-add-glue-service.patch is generated.
import type { Hooks, ToolDefinition } from "@opencode-ai/plugin"
import { LayerNode } from "@opencode-ai/core/effect/layer-node"
import type { EventV2 } from "@opencode-ai/core/event"
import { projectOptions, type Host, type Logger } from "@opencode-builtins/core"
import { AstLanguage } from "@opencode-builtins/core/ast/languages"
import { AstPool } from "@opencode-builtins/core/ast/pool"
import type { HostModel } from "@opencode-builtins/core/host"
import { LookModels } from "@opencode-builtins/core/look/models"
import type { HostSessions } from "@opencode-builtins/core/sessions"
import { BuiltIn, BuiltinsSeams } from "@opencode-builtins/core/builtins"
import { Cause, Context, Effect, Exit, Layer } from "effect"
import { Config } from "@/config/config"
import { EffectBridge } from "@/effect/bridge"
import { InstanceState } from "@/effect/instance-state"
import { attachWith } from "@/effect/run-service"
import { EventV2Bridge } from "@/event-v2-bridge"
import { TuiEvent } from "@/server/tui-event"
import type { InstanceContext } from "@/project/instance-context"
import { Session } from "@/session/session"
import { SessionID } from "@/session/schema"
import { Todo } from "@/session/todo"
import grammars from "./grammars.gen"

// The AST tools' parser libraries built into this binary (none when the build did not embed them).
AstLanguage.provide(grammars)
// In a compiled binary the search workers' code is the build's extra entry point (script/build.ts), which the binary
// names by its path from packages/opencode with .js for .ts, under its virtual root.
if (typeof AstPool.DEFAULT_ENTRY === "string")
  AstPool.setEntry(
    `${import.meta.path.startsWith("/$bunfs/") ? "/$bunfs/root/" : "B:/~BUN/root/"}../opencode-builtins-core/ast/worker.js`,
  )

/** `PluginInput.hasBuiltIn`: the features this build provides natively. */
export const has = (feature: string) => BuiltIn.has(feature)

export interface Interface {
  /** Core's tools in the plugin shape, registered as built-ins. */
  readonly tools: () => Effect.Effect<[string, ToolDefinition][]>
  /** `Plugin.trigger`: core's hooks for `name` around the plugins' `hooks`. */
  readonly trigger: (name: string, input: unknown, output: unknown, hooks: Hooks[]) => Effect.Effect<void>
  /**
   * Gives core OpenCode's configuration (its config hook: agents it adds, MCP servers, folders) before the plugins'
   * config hooks run and anything reads the configuration; once per instance.
   */
  readonly config: () => Effect.Effect<void>
  /** Whether a configured MCP server may be offered and used (by name). */
  readonly mcpAllowed: () => Effect.Effect<(server: string) => boolean>
}

export class Service extends Context.Service<Service, Interface>()("@opencode/Builtins") {}

const layer = Layer.effect(
  Service,
  Effect.gen(function* () {
    const config = yield* Config.Service
    const session = yield* Session.Service
    const todo = yield* Todo.Service
    const events = yield* EventV2Bridge.Service

    const state = yield* InstanceState.make<BuiltinsSeams.Seams>(
      Effect.fn("Builtins.state")(function* (ctx) {
        const bridge = yield* EffectBridge.make()
        const logger = (service: string): Logger => {
          const write = (level: typeof Effect.logInfo) => (message: string, extra?: Record<string, unknown>) =>
            void bridge.fork(level(message).pipe(Effect.annotateLogs({ service, ...extra })))
          return {
            debug: write(Effect.logDebug),
            info: write(Effect.logInfo),
            warn: write(Effect.logWarning),
            error: write(Effect.logError),
          }
        }
        const log = logger("opencode-builtins")
        const options = projectOptions({ directory: ctx.directory, worktree: ctx.worktree }, undefined, log)
        const host: Host = {
          directory: ctx.directory,
          worktree: ctx.worktree,
          log,
          messages: (sessionID) => bridge.promise(session.messages({ sessionID: SessionID.make(sessionID) })) as never,
          sessions: sessionsOf(bridge, session, todo, events, ctx),
          models: () => late(ctx, ({ Provider }) => Provider.Service.use((p) => p.list())).then(modelsOf),
          child: (call) => child(bridge, session, ctx, call),
          // The child call's tools: { "*": false } becomes the child session's permission (SessionPrompt.prompt).
          childDeniesTools: true,
        }
        const seams = yield* Effect.promise(() => BuiltinsSeams.create(host, { options, logger }))
        yield* Effect.addFinalizer(() => Effect.promise(() => seams.dispose()))
        const cfg = yield* config.get()
        yield* Effect.promise(() => seams.config(cfg))
        const unsubscribe = yield* events.listen((event) =>
          event.location?.directory !== ctx.directory
            ? Effect.void
            : Effect.sync(() => void seams.event({ id: event.id, type: event.type, properties: event.data })),
        )
        yield* Effect.addFinalizer(() => unsubscribe)
        log.info(`built in: ${seams.built.join(", ")}`)
        return seams
      }),
    )

    const tools: Interface["tools"] = Effect.fn("Builtins.tools")(function* () {
      return Object.entries((yield* InstanceState.get(state)).tools)
    })

    const trigger: Interface["trigger"] = Effect.fn("Builtins.trigger")(function* (name, input, output, hooks) {
      const seams = yield* InstanceState.get(state)
      yield* Effect.promise(() =>
        seams.trigger(name, input, output, async (out, inp = input) => {
          for (const hook of hooks) {
            const fn = (hook as Record<string, unknown>)[name]
            if (typeof fn === "function") await fn(inp, out)
          }
        }),
      )
    })

    const mcpAllowed: Interface["mcpAllowed"] = Effect.fn("Builtins.mcpAllowed")(function* () {
      return (yield* InstanceState.get(state)).mcpAllowed
    })

    const configure: Interface["config"] = Effect.fn("Builtins.config")(function* () {
      yield* InstanceState.get(state)
    })

    return Service.of({ tools, trigger, mcpAllowed, config: configure })
  }),
)

/**
 * Agent, Provider and SessionPrompt depend on this service (through Plugin and ToolRegistry), so they cannot be deps of
 * its layer: they are reached when called, through the application runtime with this instance attached. Its layers
 * share one memo map with the server's, so these are the services the sessions run on.
 */
async function late<A>(ctx: InstanceContext, use: (modules: Late) => Effect.Effect<A, unknown, any>): Promise<A> {
  const [{ AppRuntime }, { Agent }, { Provider }, { SessionPrompt }] = await Promise.all([
    import("@/effect/app-runtime"),
    import("@/agent/agent"),
    import("@/provider/provider"),
    import("@/session/prompt"),
  ])
  const exit = await AppRuntime.runPromiseExit(attachWith(use({ Agent, Provider, SessionPrompt }), { instance: ctx }))
  if (Exit.isSuccess(exit)) return exit.value as A
  throw new Error(Cause.pretty(exit.cause))
}
type Late = {
  Agent: typeof import("@/agent/agent").Agent
  Provider: typeof import("@/provider/provider").Provider
  SessionPrompt: typeof import("@/session/prompt").SessionPrompt
}
type Bridge = EffectBridge.Shape

/** `Host.sessions` over Session, Todo, Agent, SessionPrompt and the TUI's toast event. */
function sessionsOf(
  bridge: Bridge,
  session: Session.Interface,
  todo: Todo.Interface,
  events: EventV2.Interface,
  ctx: InstanceContext,
) {
  const id = (sessionID: string) => SessionID.make(sessionID)
  const prompt = (sessionID: string, input: HostSessions.Append, noReply: boolean) =>
    late(ctx, ({ SessionPrompt }) =>
      SessionPrompt.Service.use((p) => p.prompt({ sessionID: id(sessionID), noReply, ...(input as any) })),
    )
  const sessions: HostSessions = {
    get: (sessionID) =>
      bridge.promise(session.get(id(sessionID)).pipe(Effect.catch(() => Effect.succeed(undefined)))) as never,
    todos: (sessionID) => bridge.promise(todo.get(id(sessionID))) as never,
    setTodos: (sessionID, todos) => bridge.promise(todo.update({ sessionID: id(sessionID), todos: todos as never })),
    agents: () => late(ctx, ({ Agent }) => Agent.Service.use((a) => a.list())) as never,
    append: async (sessionID, input) => (await prompt(sessionID, input, true)).info.id,
    updatePart: (part) => bridge.promise(session.updatePart(part as never)).then(() => undefined),
    archive: (sessionID) => bridge.promise(session.setArchived({ sessionID: id(sessionID), time: Date.now() })),
    // As the prompt_async route: the turn runs on; its failure is logged, never thrown at the caller.
    promptAsync: async (sessionID, input) =>
      void prompt(sessionID, input, false).catch((error) =>
        bridge.fork(Effect.logError("builtins: prompt failed", { sessionID, error: String(error) })),
      ),
    // As the TUI's show-toast route: a toast where a TUI listens, nothing elsewhere.
    notify: (message, variant) =>
      bridge
        .promise(events.publish(TuiEvent.ToastShow, { title: "opencode-builtins", message, variant, duration: 10_000 }))
        .then(() => undefined),
  }
  return sessions
}

/** `Host.models`: every configured model with the input it accepts. */
function modelsOf(providers: Record<string, { id: string; models: Record<string, any> }>): HostModel[] {
  return Object.values(providers).flatMap((provider) =>
    Object.entries(provider.models).map(([key, model]) => ({
      providerID: provider.id,
      modelID: model?.id ?? key,
      name: model?.name,
      input: LookModels.inputOf(model) ?? { image: false, pdf: false },
    })),
  )
}

/** `Host.child`: one call in a child session with every tool off, cancelled with the caller, removed afterwards. */
async function child(
  bridge: Bridge,
  session: Session.Interface,
  ctx: InstanceContext,
  call: Parameters<NonNullable<Host["child"]>>[0],
) {
  const created = await bridge.promise(session.create({ parentID: SessionID.make(call.sessionID), title: call.title }))
  const cancel = () =>
    void late(ctx, ({ SessionPrompt }) => SessionPrompt.Service.use((p) => p.cancel(created.id))).catch(() => {})
  call.signal?.addEventListener("abort", cancel, { once: true })
  try {
    const result = await late(ctx, ({ SessionPrompt }) =>
      SessionPrompt.Service.use((p) =>
        p.prompt({
          sessionID: created.id,
          model: call.model as never,
          agent: call.agent,
          system: call.system,
          tools: { "*": false },
          parts: call.parts as never,
        }),
      ),
    )
    if (call.signal?.aborted) throw new Error("the call was aborted")
    const error = (result.info as { error?: { data?: { message?: string }; name?: string } }).error
    if (error)
      throw new Error(`${call.model.providerID}/${call.model.modelID} failed: ${error.data?.message ?? error.name}`)
    return result.parts
      .filter((p) => p.type === "text" && !p.synthetic)
      .map((p) => (p as { text: string }).text)
      .join("\n")
  } finally {
    call.signal?.removeEventListener("abort", cancel)
    await bridge.promise(session.remove(created.id).pipe(Effect.ignore))
  }
}

export const node = LayerNode.make({
  service: Service,
  layer,
  deps: [Config.node, Session.node, Todo.node, EventV2Bridge.node],
})

export * as Builtins from "./builtins"
