import fs from "fs"
import path from "path"

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
    "core.alternaterefscommand",
    "trailer.*.command",
    "trailer.*.cmd",
    "difftool.*.cmd",
    "difftool.*.path",
    "mergetool.*.cmd",
    "mergetool.*.path",
    "man.*.cmd",
    "man.*.path",
    "guitool.*.cmd",
    "instaweb.httpd",
    "gpg.ssh.defaultkeycommand",
    "sendemail.sendmailcmd",
    "sendemail.*.sendmailcmd",
    "sendemail.smtpserver",
    "sendemail.*.smtpserver",
    "sendemail.tocmd",
    "sendemail.*.tocmd",
    "sendemail.cccmd",
    "sendemail.*.cccmd",
    "sendemail.headercmd",
    "sendemail.*.headercmd",
  ]

  /** Settings that run a program only when their value starts with `!` (as a shell alias does). */
  const RISKY_BANG = ["alias.*", "submodule.*.update"]

  /**
   * The names of the settings in `text` (a git configuration file) that run a program, and every alias that runs a
   * shell command (`!…`), in order of appearance.
   *
   * @example
   * SecurityGitConfig.risky('[alias]\n\tup = !sh x.sh\n\tst = status\n') // ["alias.up"]
   */
  export function risky(text: string): string[] {
    const out: string[] = []
    for (const { section, subsection, key, value } of entries(text)) {
      const name = subsection === undefined ? `${section}.${key}` : `${section}.${subsection}.${key}`
      const hit =
        RISKY.some((r) => matches(r, section, subsection, key)) ||
        (RISKY_BANG.some((r) => matches(r, section, subsection, key)) && /^"?!/.test(value))
      if (hit) out.push(name)
    }
    return out
  }

  export type Entry = { section: string; subsection: string | undefined; key: string; value: string }

  /**
   * The settings of a git configuration file in order: section and key in lower case, the subsection as written.
   *
   * @example
   * SecurityGitConfig.entries('[include]\n\tpath = ~/.gitconfig.local\n') // [{ section: "include", key: "path", … }]
   */
  export function entries(text: string): Entry[] {
    const out: Entry[] = []
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
        if (rest) add(rest)
        continue
      }
      add(line)
    }
    return out

    function add(line: string) {
      const eq = line.indexOf("=")
      const key = (eq < 0 ? line : line.slice(0, eq)).trim().toLowerCase()
      if (!/^[a-z][a-z0-9-]*$/.test(key)) return
      out.push({ section, subsection, key, value: eq < 0 ? "" : line.slice(eq + 1).trim() })
    }
  }

  /**
   * What the user's own git configuration files send git to, followed through their includes (`include.path`,
   * `includeIf.*.path`, every condition taken as met; relative to the including file, `~/` to the home): the included
   * files, whether they exist or not, the global hooks folder (`core.hooksPath`; a relative one is the repository's,
   * here `root`'s) and attributes file (`core.attributesFile`, which picks filters and diff drivers for every
   * repository). Each of them runs programs on the host as much as `~/.gitconfig` does.
   *
   * @example
   * SecurityGitConfig.referenced(["/home/me/.gitconfig"], { home: "/home/me", root: "/repo" })
   * // ["/home/me/.gitconfig.local", "/home/me/.githooks/"] for `[include] path = ~/.gitconfig.local` and a hooksPath
   */
  export function referenced(files: readonly string[], input: { home: string; root: string }): string[] {
    const out = new Set<string>()
    const seen = new Set<string>()
    const expand = (value: string, base: string) => {
      const v = value.replace(/^"(.*)"$/, "$1")
      if (v === "~" || v.startsWith("~/")) return path.join(input.home, v.slice(1))
      return path.resolve(base, v)
    }
    const visit = (file: string, depth: number) => {
      if (seen.has(file) || depth > MAX_INCLUDE_DEPTH) return
      seen.add(file)
      let text: string
      try {
        text = fs.readFileSync(file, "utf8")
      } catch {
        return
      }
      for (const e of entries(text)) {
        if (!e.value) continue
        if ((e.section === "include" || e.section === "includeif") && e.key === "path") {
          const target = expand(e.value, path.dirname(file))
          out.add(target)
          visit(target, depth + 1)
        } else if (e.section === "core" && e.key === "hookspath") out.add(expand(e.value, input.root) + path.sep)
        else if (e.section === "core" && e.key === "attributesfile") out.add(expand(e.value, path.dirname(file)))
      }
    }
    for (const file of files) visit(file, 0)
    return [...out]
  }

  /** Git itself stops following includes 10 levels down. */
  const MAX_INCLUDE_DEPTH = 10

  function matches(rule: string, section: string, subsection: string | undefined, key: string): boolean {
    const parts = rule.split(".")
    if (parts[0] !== section) return false
    if (parts.length === 2) return parts[1] === "*" || (subsection === undefined && parts[1] === key)
    return subsection !== undefined && parts[2] === key
  }
}
