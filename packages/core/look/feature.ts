import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import type { SessionView } from "../resource/session"
import { errorMessage } from "../util/error"
import { LookModels } from "./models"
import { LookTool } from "./tool"

/**
 * look_at (US-003): images, SVG and PDF analysed by a model in a child session, the conversation keeping text only.
 * Options (section `lookAt`): `model` ("provider/model" used when the current model cannot take the file),
 * `maxBytes`, `maxSvgBytes`, `maxAnswerTokens`, `enabled` (default true). Needs a host that can make a child model
 * call (`Host.child`); without one the tool is not offered.
 */
export const LookAtFeature: BuiltinFeature = {
  id: "look-at",
  section: "lookAt",
  async init({ options, log, host }) {
    const config = validSection(LookTool.Config, options, "lookAt", log)
    if (!host.child) {
      log.info("look_at is not offered: this host gives no child model call (Host.child)")
      return {}
    }
    const models = LookModels.create(host)
    let agent: string | undefined
    let swept = false
    // The hidden agent only where the child call cannot deny tools by itself (see Host.childDeniesTools): the host's
    // configuration stays as the user wrote it otherwise.
    const register = async (cfg: unknown) => {
      const c = cfg as { agent?: Record<string, unknown> }
      c.agent ??= {}
      c.agent[LookTool.AGENT] ??= structuredClone(LookTool.AGENT_CONFIG)
      agent = LookTool.AGENT
    }
    return {
      tool: LookTool.create({ host, config, models, agent: () => agent }),
      ...(host.childDeniesTools ? {} : { config: register }),
      async "chat.params"(input) {
        models.observe(input as never)
      },
      // The base64 a model wrote into a past look_at call is not re-sent with every later request.
      async "experimental.chat.messages.transform"(_input, output) {
        // Once, before the first request of this start: child sessions a killed OpenCode left (see LookOrphans).
        if (!swept && host.childOrphans) {
          swept = true
          const sweep = host
            .childOrphans()
            .then((n) => n && log.info(`look_at: deleted ${n} child session(s) a killed OpenCode left behind`))
            .catch((error) =>
              log.warn("look_at: left-behind child sessions not deleted", { error: errorMessage(error) }),
            )
          await Promise.race([sweep, new Promise((resolve) => setTimeout(resolve, 2000))])
        }
        try {
          LookTool.forget((output as { messages: SessionView.Message[] }).messages ?? [])
        } catch (error) {
          log.error("look_at: messages.transform failed", { error: errorMessage(error) })
        }
      },
    }
  },
}
