import type { BuiltinFeature } from "../builtins/feature"
import { validSection } from "../options"
import { ReadmeHooks } from "./hooks"

/**
 * README injection (US-004): a `read` result carries the README.md of the folders it reads in, once while the model
 * still sees it. Options (section `readme`): `maxTokens` (default 2,000), `includeRoot` (default false), `names`,
 * `enabled` (default true).
 */
export const ReadmeFeature: BuiltinFeature = {
  id: "readme-injection",
  section: "readme",
  async init({ options, log, host }) {
    const config = validSection(ReadmeHooks.Config, options, "readme", log)
    return ReadmeHooks.create({ host, config })
  },
}
