import { expect, test } from "bun:test"
import type { FeatureContext } from "../../builtins/feature"
import type { Host } from "../../host"
import { LookAtFeature } from "../../look/feature"
import { LookTool } from "../../look/tool"
import { Logger } from "../../util/log"

test("the hidden look-at agent joins the configuration only where the host's child call cannot deny tools", async () => {
  for (const childDeniesTools of [false, true]) {
    const host: Host = { directory: "/p", worktree: "/p", log: Logger.silent, child: async () => "", childDeniesTools }
    const context = { host, options: {}, all: {}, log: Logger.silent, native: () => false, expose: () => {} }
    const hooks = await LookAtFeature.init(context as unknown as FeatureContext)
    const cfg: { agent?: Record<string, unknown> } = {}
    await hooks.config?.(cfg as never)
    expect(Boolean(cfg.agent?.[LookTool.AGENT])).toBe(!childDeniesTools)
  }
})
