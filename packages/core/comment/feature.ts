import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import { CommentHooks } from "./hooks"

/**
 * The comment checker: appends an advisory note to the output of edit, write, multiedit and
 * apply_patch when the comments they added are excessive. Options (section `commentChecker`): `sensitivity`
 * ("strict" | "normal" | "relaxed" | false, default "normal"), `enabled` (default true).
 */
export const CommentCheckerFeature: BuiltinFeature = {
  id: "comment-checker",
  section: "commentChecker",
  async init({ options, log, host }) {
    const config = validSection(CommentHooks.Config, options, "commentChecker", log)
    return CommentHooks.create({ host, sensitivity: config.sensitivity ?? "normal" })
  },
}
