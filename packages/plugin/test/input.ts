/**
 * The parts of `PluginInput` the plugin uses, with a client that records what the plugin logs: for tests that call
 * the plugin function directly (the end-to-end tests run it inside the real OpenCode).
 *
 * @example
 * const { input, logs } = pluginInput("/repo", (id) => id === "resource-loader")
 * await OpencodeBuiltins(input)
 */
export function pluginInput(directory: string, hasBuiltIn?: (feature: string) => boolean) {
  const logs: { level: string; message: string }[] = []
  const client = {
    app: { log: async ({ body }: any) => void logs.push({ level: body.level, message: body.message }) },
    session: { messages: async () => ({ data: [] }) },
  }
  return {
    logs,
    input: {
      client,
      directory,
      worktree: directory,
      project: {},
      serverUrl: new URL("http://x"),
      $: {},
      hasBuiltIn,
    } as any,
  }
}
