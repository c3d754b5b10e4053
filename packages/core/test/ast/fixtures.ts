/**
 * One small program per language of the AST tools, a pattern that matches it, what it matches and a rewrite with
 * its expected result — exercised in-process and, as an oracle, with the ast-grep CLI.
 */
export const LANGUAGE_CASES = {
  bash: {
    file: "run.sh",
    source: 'echo hello\nls -la\necho "$HOME"\n',
    pattern: "echo $A",
    matches: ["echo hello", 'echo "$HOME"'],
    rewrite: "printf '%s\\n' $A",
  },
  c: {
    file: "main.c",
    source: 'int main() {\n  printf("%d", x);\n  return 0;\n}\n',
    pattern: "printf($$$A);",
    matches: ['printf("%d", x);'],
    rewrite: "log_int($$$A);",
  },
  cpp: {
    file: "main.cpp",
    source: "int main() {\n  foo(1, 2);\n  bar(3);\n}\n",
    pattern: "foo($A, $B)",
    matches: ["foo(1, 2)"],
    rewrite: "foo($B, $A)",
  },
  csharp: {
    file: "A.cs",
    source: "class A {\n  void M() {\n    Console.WriteLine(x);\n  }\n}\n",
    pattern: "Console.WriteLine($A)",
    matches: ["Console.WriteLine(x)"],
    rewrite: "Log.Info($A)",
  },
  css: {
    file: "a.css",
    source: "a { color: red; }\nb { margin: 0; }\n",
    pattern: "a { color: $C; }",
    matches: ["a { color: red; }"],
    rewrite: "a { color: $C; font-weight: bold; }",
  },
  elixir: {
    file: "a.ex",
    source: 'IO.puts("hi")\nIO.inspect(x)\n',
    pattern: "IO.puts($A)",
    matches: ['IO.puts("hi")'],
    rewrite: "Logger.info($A)",
  },
  go: {
    file: "main.go",
    source: "package main\n\nfunc f() error {\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n",
    pattern: "if err != nil { $$$B }",
    matches: ["if err != nil {\n\t\treturn err\n\t}"],
    rewrite: "if err != nil { log.Print(err); $$$B }",
  },
  haskell: {
    file: "Main.hs",
    source: 'main = putStrLn "hi"\n',
    pattern: "putStrLn $A",
    matches: ['putStrLn "hi"'],
    rewrite: "print $A",
  },
  html: {
    file: "a.html",
    source: "<div><p>hi</p><span>yo</span></div>\n",
    pattern: "<p>$A</p>",
    matches: ["<p>hi</p>"],
    rewrite: "<em>$A</em>",
  },
  java: {
    file: "A.java",
    source: "class A {\n  void m() {\n    System.out.println(x);\n  }\n}\n",
    pattern: "System.out.println($A)",
    matches: ["System.out.println(x)"],
    rewrite: "LOG.info($A)",
  },
  javascript: {
    file: "a.js",
    source: "console.log(1)\nfoo()\n",
    pattern: "console.log($$$A)",
    matches: ["console.log(1)"],
    rewrite: "logger.info($$$A)",
  },
  json: {
    file: "a.json",
    source: '{"name": "x", "version": "1.0.0"}\n',
    pattern: '"1.0.0"',
    matches: ['"1.0.0"'],
    rewrite: '"2.0.0"',
  },
  kotlin: {
    file: "a.kt",
    source: "fun main() {\n  println(x)\n}\n",
    pattern: "println($A)",
    matches: ["println(x)"],
    rewrite: "logger.info($A)",
  },
  lua: {
    file: "a.lua",
    source: 'print("hi")\nlocal x = 1\n',
    pattern: "print($A)",
    matches: ['print("hi")'],
    rewrite: "log($A)",
  },
  nix: {
    file: "default.nix",
    source: "{ a = import ./x.nix; b = 1; }\n",
    pattern: "import $P",
    matches: ["import ./x.nix"],
    rewrite: "callPackage $P { }",
  },
  php: {
    file: "a.php",
    source: "<?php\necho $x;\nfoo($a, $b);\n",
    pattern: "foo($$$A)",
    matches: ["foo($a, $b)"],
    rewrite: "bar($$$A)",
  },
  python: {
    file: "a.py",
    source: "def f(x):\n    return x + 1\n\nprint(f(1))\n",
    pattern: "print($A)",
    matches: ["print(f(1))"],
    rewrite: "logging.info($A)",
  },
  ruby: {
    file: "a.rb",
    source: 'puts "hi"\nputs x\n',
    pattern: "puts $A",
    matches: ['puts "hi"', "puts x"],
    rewrite: "logger.info $A",
  },
  rust: {
    file: "main.rs",
    source: 'fn main() {\n    println!("{}", x);\n}\n',
    pattern: "println!($$$A)",
    matches: ['println!("{}", x)'],
    rewrite: "info!($$$A)",
  },
  scala: {
    file: "A.scala",
    source: "object A {\n  println(x)\n}\n",
    pattern: "println($A)",
    matches: ["println(x)"],
    rewrite: "log.info($A)",
  },
  solidity: {
    file: "A.sol",
    source: "contract A {\n  function f() public {\n    x = 1;\n  }\n}\n",
    pattern: "function $F() public { $$$B }",
    matches: ["function f() public {\n    x = 1;\n  }"],
    rewrite: "function $F() external { $$$B }",
  },
  swift: {
    file: "a.swift",
    source: "print(x)\nlet y = 1\n",
    pattern: "print($A)",
    matches: ["print(x)"],
    rewrite: "debugPrint($A)",
  },
  typescript: {
    file: "a.ts",
    source: "const x: number = 1\nlet y = 2\n",
    pattern: "const $X: number = $V",
    matches: ["const x: number = 1"],
    rewrite: "const $X: bigint = $Vn",
  },
  tsx: {
    file: "a.tsx",
    source: 'const a = <div className="x">hi</div>\n',
    pattern: "<div $$$ATTRS>$$$B</div>",
    matches: ['<div className="x">hi</div>'],
    rewrite: "<section $$$ATTRS>$$$B</section>",
  },
  yaml: { file: "a.yaml", source: "a: 1\nb: 2\n", pattern: "a: $V", matches: ["a: 1"], rewrite: "a: [$V]" },
} as const

/**
 * One small program per language holding its literal keywords (`true`, `false`, `null`/`nil`/`None`/`NULL`/
 * `nullptr`, `this`/`self`/`super`/`base`/`parent`, `undefined`, `iota`) in expression positions: `$X` must match
 * each where the CLI's grammar has a named node for it (real-world tester AT-1: Kotlin `null`, Swift `nil`).
 */
export const KEYWORD_CASES: Record<string, { file: string; source: string }> = {
  bash: { file: "a.sh", source: "f() { x=true; y=false; return 0; }\n" },
  c: { file: "a.c", source: "int f(void) { int *p = NULL; bool a = true; bool b = false; return p == NULL; }\n" },
  cpp: {
    file: "a.cpp",
    source: "class A { int f() { auto p = nullptr; auto q = this; bool a = true; return a != false; } };\n",
  },
  csharp: {
    file: "a.cs",
    source:
      "class A : B { object F() { var p = null; var q = this; var r = base.X; var a = true; return a != false; } }\n",
  },
  css: { file: "a.css", source: "a { color: red !important; }\n" },
  elixir: { file: "a.ex", source: "def f do\n  x = nil\n  y = true\n  z = false\n  x != nil\nend\n" },
  go: {
    file: "a.go",
    source: "package main\nfunc f() bool { var p *int = nil; a := true; _ = iota; return p != nil && a != false }\n",
  },
  haskell: { file: "a.hs", source: "f = let a = True\n        b = False\n    in a\n" },
  html: { file: "a.html", source: "<p hidden>x</p>\n" },
  java: {
    file: "a.java",
    source:
      "class A extends B { Object f() { Object p = null; Object q = this; Object r = super.x; boolean a = true; return p != null; } }\n",
  },
  javascript: {
    file: "a.js",
    source:
      "class A extends B { f() { const p = null; const q = this; const r = super.x; const u = undefined; const a = true; return p !== null } }\n",
  },
  json: { file: "a.json", source: '{"a": null, "b": true, "c": false}\n' },
  kotlin: {
    file: "a.kt",
    source:
      "class A : B() {\n  fun f(): Any? {\n    val p = null\n    val q = this\n    val r = super.x\n    val a = true\n    return p != null\n  }\n}\n",
  },
  lua: { file: "a.lua", source: "local p = nil\nlocal a = true\nlocal b = false\nlocal s = self\nreturn p ~= nil\n" },
  nix: { file: "a.nix", source: "{ a = true; b = false; c = null; }\n" },
  php: {
    file: "a.php",
    source:
      "<?php\nclass A extends B { function f() { $p = null; $q = $this; $a = true; $c = parent::x(); $d = self::X; return $p !== null; } }\n",
  },
  python: {
    file: "a.py",
    source:
      "class A(B):\n    def f(self):\n        p = None\n        a = True\n        b = False\n        s = super().x\n        return p is not None\n",
  },
  ruby: {
    file: "a.rb",
    source: "class A < B\n  def f\n    p = nil\n    q = self\n    a = true\n    r = super\n    p != nil\n  end\nend\n",
  },
  rust: {
    file: "a.rs",
    source:
      "impl A { fn f(&self) -> bool { let p = None; let q = self; let a = true; let s = Self::X; p != None && a != false } }\n",
  },
  scala: {
    file: "a.scala",
    source:
      "class A extends B {\n  def f(): Any = {\n    val p = null\n    val q = this\n    val r = super.x\n    val a = true\n    p != null\n  }\n}\n",
  },
  solidity: {
    file: "a.sol",
    source:
      "contract A { function f() public returns (bool) { bool a = true; bool b = false; address q = this; return a != false; } }\n",
  },
  swift: {
    file: "a.swift",
    source:
      "class A: B {\n  func f() -> Bool {\n    let p: Int? = nil\n    let q = self\n    let r = super.x\n    let a = true\n    return p != nil\n  }\n}\n",
  },
  typescript: {
    file: "a.ts",
    source:
      "class A extends B { f() { const p = null; const q = this; const r = super.x; const u = undefined; const a = true; return p !== null } }\n",
  },
  tsx: {
    file: "a.tsx",
    source:
      "class A extends B { f() { const p = null; const q = this; const a = true; return <a x={null} y={false} /> } }\n",
  },
  yaml: { file: "a.yaml", source: "a: null\nb: true\nc: false\nd: ~\n" },
}
