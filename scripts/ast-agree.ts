// `bun scripts/ast-agree.ts <root>`: the AST search against the ast-grep CLI (dev dependency @ast-grep/cli, the same
// release as napi) on whole checkouts of real repositories in other languages than TypeScript. <root> holds one folder
// per repository below (e.g. `git archive HEAD | tar -x -C <root>/psf+requests`); a missing folder is skipped. Prints,
// per pattern, both match counts and the positions only one of them found (docs/ast.md, "Agreement with the CLI").
import fs from "fs"
import path from "path"
import { AstSearch } from "../packages/core/ast/search"
import { CliOracle } from "../packages/core/test/ast/cli-oracle"

const CASES: { repo: string; lang: string; patterns: string[] }[] = [
  {
    repo: "psf+requests",
    lang: "python",
    patterns: [
      "def $F($$$A): $$$B",
      "$X.get($$$)",
      "raise $E($$$)",
      "with $A as $B: $$$",
      "if $C: $$$",
      "lambda $$$A: $B",
      'f"$$$"',
      "@$D\ndef $F($$$): $$$",
      "try: $$$\nexcept $E: $$$",
      "[$X for $Y in $Z]",
    ],
  },
  {
    repo: "junegunn+fzf",
    lang: "go",
    patterns: [
      "func $F($$$P) $$$R { $$$B }",
      "if err != nil { $$$ }",
      "$A := $B",
      "go $F($$$)",
      "defer $X",
      "for $$$ { $$$ }",
      "fmt.Sprintf($$$)",
      "switch $X { $$$ }",
      "return $$$A",
      "$A.$B($$$C)",
    ],
  },
  {
    repo: "BurntSushi+ripgrep",
    lang: "rust",
    patterns: [
      "fn $F($$$P) -> $R { $$$B }",
      "$X.unwrap()",
      "impl $T for $U { $$$ }",
      "match $X { $$$ }",
      "let $P = $V;",
      "$M!($$$)",
      "#[derive($$$)]",
      "Some($X)",
      "if let $P = $V { $$$ }",
      "$X?",
    ],
  },
  {
    repo: "sinatra+sinatra",
    lang: "ruby",
    patterns: [
      "def $F($$$) $$$ end",
      "$X.each do |$Y| $$$ end",
      "raise $E",
      "require $X",
      "attr_reader $$$",
      "if $C $$$ end",
      "$A ||= $B",
      "class $C < $P $$$ end",
    ],
  },
  {
    repo: "jqlang+jq",
    lang: "c",
    patterns: [
      "if ($C) { $$$ }",
      "$F($$$A);",
      "return $X;",
      "for ($$$) { $$$ }",
      "static $T $F($$$P) { $$$B }",
      "switch ($X) { $$$ }",
      "#include $X",
      "$A->$B",
      "sizeof($X)",
      "while ($C) $S",
    ],
  },
]

const root = process.argv[2]
if (!root) {
  console.error("usage: bun scripts/ast-agree.ts <folder holding the repositories' checkouts>")
  process.exit(2)
}
let ours = 0
let theirs = 0
for (const c of CASES) {
  const dir = path.resolve(root, c.repo)
  if (!fs.existsSync(dir)) {
    console.log(`${c.repo}: not in ${root}, skipped`)
    continue
  }
  for (const pattern of c.patterns) {
    const result = await AstSearch.run({ directory: dir, lang: c.lang, pattern })
    const mine = result.matches.map((m) => `${path.resolve(dir, m.file)}:${m.start.line + 1}:${m.start.column + 1}`)
    const cli = CliOracle.search(dir, pattern, c.lang).map((m) => `${m.file}:${m.line}:${m.column}`)
    const a = new Set(mine)
    const b = new Set(cli)
    const onlyMine = mine.filter((x) => !b.has(x))
    const onlyCli = cli.filter((x) => !a.has(x))
    ours += mine.length
    theirs += cli.length
    console.log(`${c.repo} ${c.lang} ${JSON.stringify(pattern)}: tool ${mine.length}, CLI ${cli.length}`)
    for (const x of onlyMine) console.log(`  only the tool: ${x}`)
    for (const x of onlyCli) console.log(`  only the CLI: ${x}`)
  }
}
console.log(`total: tool ${ours}, CLI ${theirs}`)
