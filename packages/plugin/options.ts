// The options live in core so that the fork reads the same file the plugin does.
export { loadOptions, validSection, OPTIONS_FILE, type Options } from "@opencode-builtins/core/options"
