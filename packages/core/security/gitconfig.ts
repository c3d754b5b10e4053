/**
 * The settings of a git configuration file that make git run a program: what a repository created inside the sandbox
 * may not carry out of it. Git runs them outside any sandbox when the user next uses the repository (`core.fsmonitor`
 * at every `git status`, `core.pager` at every `git log`, a filter at every checkout, …).
 *
 * @example
 * SecurityGitConfig.risky("[core]\n\tfsmonitor = ./x.sh\n[user]\n\tname = me\n") // ["core.fsmonitor"]
 */
export namespace SecurityGitConfig {
  /** `section.key`, `section.*.key` (any subsection) or `section.*` (any key), lower case. */
  const RISKY = [
    "core.fsmonitor",
    "core.hookspath",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "pager.*",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "credential.helper",
    "credential.*.helper",
    "gpg.program",
    "gpg.*.program",
    "sequence.editor",
    "include.path",
    "includeif.*.path",
    "uploadpack.packobjectshook",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "protocol.*.allow",
    "web.browser",
    "browser.*.cmd",
    "browser.*.path",
    "init.templatedir",
  ]

  /**
   * The names of the settings in `text` (a git configuration file) that run a program, and every alias that runs a
   * shell command (`!…`), in order of appearance.
   *
   * @example
   * SecurityGitConfig.risky('[alias]\n\tup = !sh x.sh\n\tst = status\n') // ["alias.up"]
   */
  export function risky(text: string): string[] {
    const out: string[] = []
    let section = ""
    let subsection: string | undefined
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim()
      if (!line || line.startsWith("#") || line.startsWith(";")) continue
      if (line.startsWith("[")) {
        const close = line.indexOf("]")
        const head = (close < 0 ? line.slice(1) : line.slice(1, close)).trim()
        const quoted = /^([^\s"]+)\s+"(.*)"$/.exec(head)
        // `[section "sub"]`, or the older `[section.sub]`.
        if (quoted) [section, subsection] = [quoted[1].toLowerCase(), quoted[2]]
        else {
          const dot = head.indexOf(".")
          ;[section, subsection] =
            dot < 0 ? [head.toLowerCase(), undefined] : [head.slice(0, dot).toLowerCase(), head.slice(dot + 1)]
        }
        // A setting may follow the header on its line: `[core] fsmonitor = x`.
        const rest = close < 0 ? "" : line.slice(close + 1).trim()
        if (rest) check(rest)
        continue
      }
      check(line)
    }
    return out

    function check(line: string) {
      const eq = line.indexOf("=")
      const key = (eq < 0 ? line : line.slice(0, eq)).trim().toLowerCase()
      if (!/^[a-z][a-z0-9-]*$/.test(key)) return
      const value = eq < 0 ? "" : line.slice(eq + 1).trim()
      const name = subsection === undefined ? `${section}.${key}` : `${section}.${subsection}.${key}`
      const hit = RISKY.some((r) => matches(r, section, subsection, key)) || (section === "alias" && /^"?!/.test(value))
      if (hit) out.push(name)
    }
  }

  function matches(rule: string, section: string, subsection: string | undefined, key: string): boolean {
    const parts = rule.split(".")
    if (parts[0] !== section) return false
    if (parts.length === 2) return parts[1] === "*" || (subsection === undefined && parts[1] === key)
    return subsection !== undefined && parts[2] === key
  }
}
