import type { DiscoveryLocate } from "../discovery/locate"
import type { Logger } from "../util/log"
import type { SecurityGuard } from "./guard"
import { SecurityTemplates } from "./templates"

/**
 * The shell lines of command templates (`` !`cmd` ``) run inside the shell sandbox (red team AS4).
 *
 * When the user runs a command, OpenCode replaces each shell line of its template with the line's output, run with
 * the user's shell (1.18: `$SHELL -c`; 1.2.15: Bun's shell) in OpenCode's own process, in the project folder, with
 * OpenCode's environment, and with no hook before it (not `shell.env`, not `command.execute.before`, which comes after
 * with the output already in the parts). A line of the user's own template that names a project file (`sh
 * scripts/check.sh`, `npm test`, `make lint`) runs whatever the agent left in that file, on the host, and its output
 * goes into the prompt. OpenCode reads a command's template from its live configuration when the command runs, and
 * a configured command of a name wins over a skill of that name; so the configuration hook (on the plugin route, and
 * in the fork through its glue's `seams.config`) hands every line of every configured command, and of every skill
 * whose text has one, to the sandbox's launcher (`SecurityGuard.containTemplate`). A line holding an argument
 * placeholder is held back from OpenCode instead (its arguments would be host shell code) and run by the
 * `command.execute.before` hook (`SecurityGuard.runHeldLines`).
 *
 * @example
 * await SecurityTemplateShell.contain(cfg, { guard, skills: () => locate.all("skill"), log })
 * // cfg.command.check.template: "Check output:\n!`'/usr/bin/bash' '/tmp/…/template.bash' 'sh scripts/check.sh'`"
 */
export namespace SecurityTemplateShell {
  export type Input = {
    guard: Pick<SecurityGuard.Guard, "containTemplate" | "active" | "audit">
    /**
     * The skills OpenCode could run as commands (a skill with a protected file keeps its text out of the
     * configuration: left to the layer's refusals, or turned off by `PROTECTED_SKILL_NOTE` when its folder is the risk).
     */
    skills?: () => Promise<DiscoveryLocate.Resolution[]>
    /** Whether the skill's files are protected (its reason), so its text stays out of the configuration. */
    protectedSkill?: (name: string) => Promise<string | undefined>
    /** OpenCode's worktree, as it puts it into its built-in `init` command's text. */
    worktree?: string
    log: Logger
  }

  /** The lines OpenCode 1.18 appends to a skill's text when it runs the skill as a command (`SecurityTemplates.skill`). */
  export function skillTemplate(body: string, folder: string) {
    return SecurityTemplates.skill(body, folder)
  }

  /**
   * Whether OpenCode would find a shell line, or a join of the user's arguments into one, in the text it runs the skill
   * as a command with: its body and the line naming its folder, as found or as its real path (red team EE2: a folder
   * named `` fixer!`./check.sh` ``, or a project folder holding one, makes the folder line a shell line).
   */
  export function risky(body: string, folder: string) {
    return SecurityTemplates.folderSpellings(folder).some((spelling) => {
      const text = skillTemplate(body, spelling)
      return SecurityTemplates.expansions(text).length > 0 || SecurityTemplates.splices(text).length > 0
    })
  }

  /**
   * Whether OpenCode's built-in `init` would have a shell line, or a join of the user's arguments into one, once it
   * puts the worktree's path into its text: 1.18 writes it in backquotes (`` at `${path}`, improve it ``), so a path
   * holding `` !` `` or ending in `!` is one; 1.2.15 writes it bare. As found and as its real path.
   *
   * @example
   * SecurityTemplateShell.builtinRisky("/home/me/wow!") // true
   */
  export function builtinRisky(worktree: string) {
    return SecurityTemplates.folderSpellings(worktree).some((spelling) => {
      const text = `AGENTS.md at \`${spelling}\`, improve it`
      return SecurityTemplates.expansions(text).length > 0 || SecurityTemplates.splices(text).length > 0
    })
  }

  /**
   * What the built-in `init` becomes in a worktree `builtinRisky` holds: a note with no `!` (OpenCode appends the
   * user's arguments to it) and no path.
   */
  export const BUILTIN_NOTE =
    "The security layer turned off the built-in init command in this project: OpenCode puts the project's path into its text, and that path holds an exclamation mark before a backquote (or ends with one), which OpenCode would run as a shell command outside the sandbox. Tell the user to move the project to a folder whose path has no exclamation mark, or to write the AGENTS.md without the init command."

  /**
   * What a skill whose files the policy protects becomes when its folder line, in a spelling OpenCode may load it by
   * (a link the agent made to it included), is a shell line or a join (red team FF1): a note with no `!`, no name and
   * no path, as its text must stay out of the configuration.
   */
  export const PROTECTED_SKILL_NOTE =
    "The security layer turned off this skill as a command: its files are protected, and OpenCode would load it from a folder whose name holds an exclamation mark before a backquote (or a dollar sign), which OpenCode would run as a shell command outside the sandbox. Tell the user to remove that folder or link from the skill folders (or rename it without the exclamation mark), then start OpenCode again."

  /**
   * Changes `cfg.command` in place: each template's shell lines handed to the sandbox (or replaced by a note when the
   * sandbox is required and cannot start); a skill with shell lines becomes a configured command of its name with
   * its text so contained. Returns the names changed.
   */
  export async function contain(cfg: Record<string, unknown>, input: Input): Promise<string[]> {
    if (!input.guard.active()) return []
    const changed: string[] = []
    const record = (name: string, note: string | undefined) => {
      changed.push(name)
      if (note) input.log.warn(`[security] the shell lines of the command "${name}" will not run: ${note}`)
      input.guard.audit?.logSecurityEvent({
        action: "config-changed",
        source: "policy",
        tool: `command:${name}`,
        reason: note ? `its shell lines will not run: ${note}` : "its shell lines run inside the shell sandbox",
      })
    }
    let table = cfg.command as Record<string, unknown> | undefined
    if (table && typeof table === "object") {
      for (const [name, entry] of Object.entries(table)) {
        if (!entry || typeof entry !== "object") continue
        const command = entry as Record<string, unknown>
        if (typeof command.template !== "string") continue
        const contained = await input.guard.containTemplate(command.template)
        if (contained.template === command.template) continue
        try {
          command.template = contained.template
        } catch {
          input.log.warn(
            `[security] the command "${name}" could not be changed: its shell lines run outside the sandbox`,
          )
          continue
        }
        record(name, contained.note)
      }
    }
    // The built-in `init` names the worktree in its text (red team EE2): in a worktree whose path makes that a shell
    // line it is replaced by a note (the layer does not know the built-in's text to contain it). A configured `init`
    // was handled above.
    if (input.worktree && builtinRisky(input.worktree) && !(table && typeof table === "object" && "init" in table)) {
      const note = BUILTIN_NOTE
      try {
        if (!table || typeof table !== "object") cfg.command = table = {}
        table.init = { description: "guided AGENTS.md setup (turned off by the security layer)", template: note }
        record("init", note)
      } catch {
        input.log.warn(`[security] the built-in /init could not be turned off: its text runs outside the sandbox`)
      }
    }
    for (const skill of (await input.skills?.().catch(() => [])) ?? []) {
      if (table && typeof table === "object" && skill.name in table) continue
      if (!skill.candidates.some((c) => risky(c.body, c.folder))) continue
      // A protected skill's text stays out of the configuration; its own lines are the user's (left to the layer's
      // refusals), but a folder line the agent can make by linking the skill's folder under a new name is not (FF1).
      if (await input.protectedSkill?.(skill.name)) {
        if (!skill.candidates.some((c) => SecurityTemplates.folderRisks(c.body, c.folder).length > 0)) continue
        const note = PROTECTED_SKILL_NOTE
        try {
          if (!table || typeof table !== "object") cfg.command = table = {}
          table[skill.name] = { description: "turned off by the security layer", template: note }
        } catch {
          input.log.warn(
            `[security] the protected skill "${skill.name}" could not be turned off: its folder line runs outside the sandbox`,
          )
          continue
        }
        record(skill.name, note)
        continue
      }
      // The file the newest version modelled loads under the name (else the last found), as OpenCode would run it.
      const likely = [...Object.values(skill.byVersion)].reverse().find((v) => v?.likely)?.likely
      const chosen = skill.candidates.find((c) => c.file === likely) ?? skill.candidates[skill.candidates.length - 1]!
      const contained = await input.guard.containTemplate(skillTemplate(chosen.body, chosen.folder))
      try {
        if (!table || typeof table !== "object") cfg.command = table = {}
        table[skill.name] = {
          ...(chosen.description !== undefined ? { description: chosen.description } : {}),
          template: contained.template,
        }
      } catch {
        input.log.warn(
          `[security] the skill "${skill.name}" could not be changed: its shell lines run outside the sandbox`,
        )
        continue
      }
      record(skill.name, contained.note)
    }
    return changed
  }
}
