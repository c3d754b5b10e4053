import fs from "fs"
import path from "path"

// A third-party plugin written as docs/builtin.md says ("On stock OpenCode with opencode-builtins"): the helper asks
// `input.hasBuiltIn` first and opencode-builtins' published answer second.
const KEY = Symbol.for("opencode-builtins.provided")
function builtIn(input, id) {
  if (input.hasBuiltIn?.(id) === true) return true
  return globalThis[KEY]?.has?.(input.directory, id) === true
}

export const OtherPlugin = async (input) => {
  const record = (name, value) => fs.appendFileSync(path.join(input.directory, ".other.log"), `${name}=${value}\n`)
  record("start-ast-grep", builtIn(input, "ast-grep"))
  const hooks = {
    // The lazy check: every plugin has started before the first tool call.
    async "tool.execute.before"(i) {
      if (i.tool === "ast_grep_search") record("call-ast-grep", builtIn(input, "ast-grep"))
    },
  }
  if (!builtIn(input, "ast-grep"))
    hooks.tool = {
      ast_grep_search: {
        description: "OTHER: the other plugin's structural search",
        args: {},
        async execute() {
          return "OTHER-RESULT"
        },
      },
    }
  return hooks
}
