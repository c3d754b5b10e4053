// OpenCode Built-ins: OpenCode's services adapted to core's Host, and the functions the seams call. Every rule lives in
// @opencode-builtins/core (BuiltinsSeams); this file only connects. Kept in the OpenCode Built-ins repository as
// patches/glue/src/builtins/builtins.ts, from which builtins-add-glue-service.patch is generated.
import type { Hooks, ToolDefinition } from "@opencode-ai/plugin"
import { LayerNode } from "@opencode-ai/core/effect/layer-node"
import { loadOptions, type Host, type Logger } from "@opencode-builtins/core"
import { AstLanguage } from "@opencode-builtins/core/ast/languages"
import { BuiltIn, BuiltinsSeams } from "@opencode-builtins/core/builtins"
import { Context, Effect, Layer } from "effect"
import { Config } from "@/config/config"
import { EffectBridge } from "@/effect/bridge"
import { InstanceState } from "@/effect/instance-state"
import { EventV2Bridge } from "@/event-v2-bridge"
import { Session } from "@/session/session"
import { SessionID } from "@/session/schema"
import grammars from "./grammars.gen"

// The AST tools' parser libraries built into this binary (none when the build did not embed them).
AstLanguage.provide(grammars)

/** `PluginInput.hasBuiltIn`: the features this build provides natively. */
export const has = (feature: string) => BuiltIn.has(feature)

export interface Interface {
  /** Core's tools in the plugin shape, registered as built-ins. */
  readonly tools: () => Effect.Effect<[string, ToolDefinition][]>
  /** `Plugin.trigger`: core's hooks for `name` around the plugins' `hooks`. */
  readonly trigger: (name: string, input: unknown, output: unknown, hooks: Hooks[]) => Effect.Effect<void>
  /** Whether a configured MCP server may be offered and used (by name). */
  readonly mcpAllowed: () => Effect.Effect<(server: string) => boolean>
}

export class Service extends Context.Service<Service, Interface>()("@opencode/Builtins") {}

const layer = Layer.effect(
  Service,
  Effect.gen(function* () {
    const config = yield* Config.Service
    const session = yield* Session.Service
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
        const { options, error } = loadOptions(ctx.directory, undefined)
        if (error) log.warn(error)
        const host: Host = {
          directory: ctx.directory,
          worktree: ctx.worktree,
          log,
          messages: (sessionID) => bridge.promise(session.messages({ sessionID: SessionID.make(sessionID) })) as never,
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

    return Service.of({ tools, trigger, mcpAllowed })
  }),
)

export const node = LayerNode.make({
  service: Service,
  layer,
  deps: [Config.node, Session.node, EventV2Bridge.node],
})

export * as Builtins from "./builtins"
