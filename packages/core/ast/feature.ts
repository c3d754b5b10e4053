import { AstTools } from "@opencode-builtins/core/ast/tools"
import type { Feature } from "../feature"
import { validSection } from "../options"
import z from "zod"

/**
 * `ast_grep_search` and `ast_grep_replace` on stock OpenCode, over core's in-process ast-grep. Options (section
 * `ast`): `enabled` (default true). The tools read `host.access` at call time, so the security feature's checks
 * apply whatever the feature order.
 */
export const AstFeature: Feature = {
  id: "ast-grep",
  section: "ast",
  async init({ options, log, host }) {
    validSection(z.object({}), options, "ast", log)
    return { tool: AstTools.create(host) }
  },
}
