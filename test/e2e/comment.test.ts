// The comment checker through the real `edit` tool of OpenCode, replaying a real commit (modelcontextprotocol/
// python-sdk 89e9c43acf "Get baseline 100% clean coverage": `# pragma: no branch` appended to a commented line).
import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const BEFORE = [
  "def find_session_id(sent_messages):",
  "    # Extract session ID from response headers",
  "    session_id = None",
  "    for msg in sent_messages:",
  '        if msg["type"] == "http.response.start":',
  '            for header_name, header_value in msg.get("headers", []):',
  '                if header_name.decode().lower() == "mcp-session-id":',
  "                    session_id = header_value.decode()",
  "                    break",
  "            if session_id:  # Break outer loop if session_id is found",
  "                break",
  "    return session_id",
  "",
].join("\n")

for (const target of targets()) {
  describe(`comment checker on opencode ${target.label}`, () => {
    test(
      "appending `# pragma: no branch` to a line that already has a comment gets no note; a narrating edit does (tester's X1)",
      async () => {
        await using project = await Harness.project({ bin: target.bin, files: { "tests/test_mgr.py": BEFORE } })
        const file = path.join(project.dir, "tests/test_mgr.py")
        const server = ModelServer.start([
          ModelServer.call("read", { filePath: file }),
          ModelServer.call("edit", {
            filePath: file,
            oldString: "            if session_id:  # Break outer loop if session_id is found",
            newString: "            if session_id:  # Break outer loop if session_id is found  # pragma: no branch",
          }),
          // A control: a narrating comment in the same session gets the note, so the checker is running.
          ModelServer.call("edit", {
            filePath: file,
            oldString: "    return session_id",
            newString: "    # Return the session ID\n    return session_id",
          }),
          ModelServer.text("done"),
        ])
        try {
          const result = await Harness.run(project, server, "Mark the unreachable branch for coverage")
          expect(result.exitCode).toBe(0)
          const [edit, control] = result.tools.filter((t) => t.tool === "edit")
          expect(edit.status).toBe("completed")
          expect(control.output).toContain("excessive comments")
          expect(await fs.readFile(file, "utf8")).toContain("# pragma: no branch")
          // Before: "1 comment repeating the next line of code: \"Break outer loop if session_id is found # pragma: no branch\"".
          expect(edit.output).not.toContain("excessive comments")
        } finally {
          server.stop()
        }
      },
      { timeout: 180_000 },
    )
  })
}
