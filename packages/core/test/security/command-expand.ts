// What OpenCode makes of a command's template and the user's arguments before it runs the template's shell lines,
// shared by the unit and red-team tests of `SecurityTemplates` (the same code in 1.2.15, 1.18.3 and 1.18.33,
// `SessionPrompt.command`).

/**
 * The template with the arguments substituted: numbered placeholders first (the last one taking the rest), then
 * `$ARGUMENTS` (a JavaScript `replaceAll` with a string, as OpenCode's: the replacement patterns `` $` ``, `$'`, `$&`
 * and `$$` in the arguments are live there, and only there — a numbered one is replaced through a function), then the
 * arguments appended when the template has no placeholder. Checked against the three binaries' code (`withArgs` …
 * `.replaceAll("$ARGUMENTS", input.arguments)`); OpenCode trims the result only after running its shell lines.
 */
export function substitute(template: string, args: string) {
  const words = (args.match(/(?:\[Image\s+\d+\]|"[^"]*"|'[^']*'|[^\s"']+)/gi) ?? []).map((w) =>
    w.replace(/^["']|["']$/g, ""),
  )
  const numbered = template.match(/\$(\d+)/g) ?? []
  const last = Math.max(0, ...numbered.map((p) => Number(p.slice(1))))
  const withArgs = template.replaceAll(/\$(\d+)/g, (_, index: string) => {
    const position = Number(index)
    if (position - 1 >= words.length) return ""
    return position === last ? words.slice(position - 1).join(" ") : words[position - 1]!
  })
  const uses = template.includes("$ARGUMENTS")
  let out = withArgs.replaceAll("$ARGUMENTS", args)
  if (numbered.length === 0 && !uses && args.trim()) out += "\n\n" + args
  return out
}

/** The shell lines OpenCode then runs on the host, in order. */
export function shellLines(text: string): string[] {
  return [...text.matchAll(/!`([^`]+)`/g)].map((m) => m[1]!)
}
