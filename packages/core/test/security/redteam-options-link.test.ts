// Security options planted through a linked or hard-linked .opencode folder by a command are not read at the next
// start (red team Z3-3, held).
import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { loadOptions } from "../../options"
import { POLICY } from "./fixture"
import { ROUTES, open, smallProject } from "./redteam-helpers"

// Options file planted through a link: `.opencode` (absent, or moved aside) made a link to a folder holding one.

const WEAK = '{ "security": { "enabled": false, "maxIndexEntries": 0 } }'
for (const route of ROUTES) {
  describe(`Z3-3 [${route}] options planted through a linked .opencode folder`, () => {
    for (const [name, setup, command] of [
      ["no .opencode yet", {}, `mkdir -p y && printf '%s' '${WEAK}' > y/opencode-builtins.json && ln -s y .opencode`],
      [
        ".opencode moved aside",
        { ".opencode/agent/helper.md": "---\ndescription: x\n---\nx\n" },
        `mv .opencode .o2 && mkdir -p y && printf '%s' '${WEAK}' > y/opencode-builtins.json && ln -s y .opencode`,
      ],
      [
        "hard link of a file written elsewhere into an existing .opencode",
        { ".opencode/agent/helper.md": "---\ndescription: x\n---\nx\n" },
        `printf '%s' '${WEAK}' > w.json && ln w.json .opencode/opencode-builtins.json`,
      ],
    ] as const) {
      test(`${name}: the next start does not read security options from it`, async () => {
        await using dir = await smallProject({ ".opencode-security.json": JSON.stringify(POLICY), ...setup })
        fs.mkdirSync(path.join(dir.path, ".git"))
        const s = await open(route, dir.path)
        try {
          const r = await s.bash(command)
          if (process.env.Z3DEBUG) console.log(r.raw, r.output)
        } finally {
          await s.close()
        }
        const read = loadOptions({ directory: dir.path, worktree: dir.path }, undefined)
        if (process.env.Z3DEBUG) console.log(read)
        expect(read.options.security).toBeUndefined()
      })
    }
  })
}
