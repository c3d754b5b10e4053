import z from "zod"
import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import { AstTools } from "./tools"

/**
 * `ast_grep_search` and `ast_grep_replace` over the in-process ast-grep. Options (section
 * `ast`): `enabled` (default true). The tools read `host.access` at call time, so the security feature's checks
 * apply whatever the feature order.
 */
export const AstFeature: BuiltinFeature = {
  id: "ast-grep",
  section: "ast",
  async init({ options, log, host }) {
    validSection(z.object({}), options, "ast", log)
    return { tool: AstTools.create(host) }
  },
}
