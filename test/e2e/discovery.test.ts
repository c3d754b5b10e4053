import { describe, expect, test } from "bun:test"
import fs from "fs/promises"
import path from "path"
import { Harness } from "./harness"
import { ModelServer } from "./model-server"
import { targets } from "./targets"

const TIMEOUT = { timeout: 180_000 }

/** A project with an OpenCode agent and a task resource; the home holds a Claude Code skill. */
const PROJECT = {
  ".opencode/agent/release-manager.md":
    "---\ndescription: Prepares and ships releases of the service\nmode: subagent\n---\nYou ship releases.\n",
  ".opencode/agent/frontend-dev.md":
    "---\ndescription: Builds React components and page layouts\n---\nYou build UIs.\n",
  ".opencode/task/ship-release.md":
    "---\ntitle: Ship a release\ndescription: Cut, tag and publish a release of the service\ntags: [release, tag]\n---\n1. Tag it.\n",
  ".opencode/checklist/accessibility.md":
    "---\ntitle: Accessibility checklist\ndescription: Keyboard and screen reader checks\n---\n- labels\n",
}
const HOME = {
  ".claude/skills/release-notes/SKILL.md":
    "---\nname: release-notes\ndescription: Draft release notes from merged pull requests\n---\nWrite the notes.\n",
  ".claude/output-styles/concise.md":
    "---\nname: concise\ndescription: Short answers without preamble\n---\nBe brief.\n",
}

for (const target of targets()) {
  describe(`dynamic discovery on stock opencode ${target.label}`, () => {
    test(
      "a prompt naming a task carries the suggestion of the matching agent, skill and resource to the model; an unrelated prompt carries none",
      async () => {
        const server = ModelServer.start([ModelServer.text("Noted."), ModelServer.text("It is noon.")])
        await using project = await Harness.project({ bin: target.bin, files: PROJECT })
        for (const [rel, text] of Object.entries(HOME)) {
          await fs.mkdir(path.dirname(path.join(project.home, rel)), { recursive: true })
          await fs.writeFile(path.join(project.home, rel), text)
        }
        try {
          const prompt = "Please tag and ship the release today, with its release notes"
          const result = await Harness.run(project, server, prompt)
          expect(result.exitCode).toBe(0)
          expect(result.text).toContain("Noted.")
          const [turn] = server.turns()
          const texts = ModelServer.userTexts(turn)
          expect(texts).toHaveLength(1)
          const user = texts[0]
          // The user's words first, then the one suggestion block with what matched and how to use it.
          expect(user.indexOf(prompt)).toBeGreaterThanOrEqual(0)
          const block = user.slice(user.indexOf("<dynamic-context>"))
          expect(user.indexOf("<dynamic-context>")).toBeGreaterThan(user.indexOf(prompt))
          expect(block.match(/<dynamic-context>/g)).toHaveLength(1)
          expect(block).toContain("- @release-manager: Prepares and ships releases of the service")
          expect(block).toContain(
            "Skills (load with the skill tool):\n- release-notes: Draft release notes from merged pull requests",
          )
          expect(block).toContain(
            "Project resources (load with the resource-load tool by id):\n- ship-release: Cut, tag and publish a release of the service",
          )
          // Only what matched: no unrelated agent, resource or style.
          for (const other of ["frontend-dev", "accessibility", "concise"]) expect(block).not.toContain(other)

          const second = await Harness.run(project, server, "What time is it?")
          expect(second.exitCode).toBe(0)
          const later = server.turns()[1]
          expect(ModelServer.userTexts(later).join("\n")).not.toContain("<dynamic-context>")
          expect(server.overruns).toBe(0)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
    test(
      "what OpenCode's configuration turns off or denies is not suggested: a disabled agent, a denied skill",
      async () => {
        const server = ModelServer.start([ModelServer.text("Noted.")])
        await using project = await Harness.project({
          bin: target.bin,
          files: PROJECT,
          config: {
            agent: { "release-manager": { disable: true } },
            permission: { skill: { "release-*": "deny" } },
          },
        })
        for (const [rel, text] of Object.entries(HOME)) {
          await fs.mkdir(path.dirname(path.join(project.home, rel)), { recursive: true })
          await fs.writeFile(path.join(project.home, rel), text)
        }
        try {
          const result = await Harness.run(
            project,
            server,
            "Please tag and ship the release today, with its release notes",
          )
          expect(result.exitCode).toBe(0)
          const user = ModelServer.userTexts(server.turns()[0]).join("\n")
          // The resource still matches (the control); the agent and the skill OpenCode would refuse are not offered.
          expect(user).toContain("- ship-release: Cut, tag and publish a release of the service")
          expect(user).not.toContain("release-manager")
          expect(user).not.toContain("release-notes")
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
    test(
      "X8: a Claude Code command, which OpenCode cannot run, is a prompt template to read; only OpenCode's commands are /name",
      async () => {
        const server = ModelServer.start([
          ModelServer.text("Noted."),
          ModelServer.text("Ran."),
          ModelServer.text("Ran?"),
        ])
        await using project = await Harness.project({
          bin: target.bin,
          files: {
            // The start of wshobson/commands' tools/k8s-manifest.md, installed under .claude/commands as its README says.
            ".claude/commands/tools/k8s-manifest.md":
              "---\nmodel: claude-sonnet-4-0\n---\n\n# Kubernetes Manifest Generation\n\nYou are a Kubernetes expert " +
              "specializing in creating production-ready manifests for deploying a service.\n\n## Requirements\n$ARGUMENTS\n",
            ".opencode/command/deploy.md":
              "---\ndescription: Deploy the service to the staging cluster\n---\nDeploy it.\n",
          },
        })
        try {
          const result = await Harness.run(project, server, "deploy the service to kubernetes")
          expect(result.exitCode).toBe(0)
          const user = ModelServer.userTexts(server.turns()[0]).join("\n")
          const block = user.slice(user.indexOf("<dynamic-context>"))
          expect(block).toContain(
            "Commands (the user runs /name):\n- /deploy: Deploy the service to the staging cluster",
          )
          expect(block).toMatch(
            /Claude Code commands \(prompt templates: read the file and follow it\):\n- tools\/k8s-manifest \(Claude Code command, [^)\n]*\.claude\/commands\/tools\/k8s-manifest\.md: read it and follow it\)/,
          )
          expect(block).not.toContain("/tools/k8s-manifest:")
          // Why: this OpenCode runs its own command by name, and has no command for the Claude Code one.
          const own = await Harness.run(project, server, "x", { args: ["--command", "deploy"] })
          expect(own.exitCode).toBe(0)
          expect(server.turns()).toHaveLength(2)
          const claude = await Harness.run(project, server, "x", { args: ["--command", "tools/k8s-manifest"] })
          expect(claude.exitCode === 0 && server.turns().length === 3).toBe(false)
        } finally {
          server.stop()
        }
      },
      TIMEOUT,
    )
  })
}
