/**
 * What a resolved name means: the audit's rule table, shared by the analysis of one file (analyze.ts) and the step
 * that resolves names imported from other modules once every file is analysed (link.ts).
 *
 * A value is described by a path from a root: `[]` is the global object, `["fetch"]` the global `fetch` (so
 * `globalThis.fetch` and `fetch` are the same path), `["fs", "readFileSync"]` a member of the `fs` module,
 * `["process", "env", "HOME"]` an environment variable. A segment is `null` when the key is not statically known, a
 * `Ref` when it is a value exported by another module of the audit (resolved later), and `CALL` for the result of
 * calling what precedes it. Literal bases are `"function"` (a function literal), `"[]"`, `"{}"` and `'""'`.
 *
 * @example
 * AuditRules.classify(["child_process", "execSync"], { kind: "call", callee: "cp.execSync" })
 * // { severity: "medium", rule: "child_process", message: "child_process.execSync(…): runs a program" }
 */
export namespace AuditRules {
  export type Severity = "critical" | "high" | "medium" | "low"
  export const SEVERITIES: Severity[] = ["critical", "high", "medium", "low"]

  /**
   * A value exported as `name` by the module `ref` (an absolute path; `"*"` is the module namespace); with `key`, the
   * string that export holds, used as a member name (`globalThis[IMPORTED]`).
   */
  export type Ref = { ref: string; name: string; key?: true }
  export const CALL = Object.freeze({ call: true as const })
  export type Call = typeof CALL
  /**
   * The value is held by an object or array literal under `into` (null: a key not known statically): `{ f: Function }`
   * is `["Function", { into: "f" }]`, and reading `.f` of it gives `["Function"]` back (see `member`). Every value the
   * audit follows is followed this way (`{ get: fetch }`, `[process.env]`, `{ run: cp.exec }`).
   */
  export type Into = { into: string | null }
  export type Seg = string | null | Ref | Call | Into
  export type Path = Seg[]

  /** How a value is used where it was found. */
  export type Site = {
    kind: "call" | "new" | "read"
    /** The callee's or the expression's source text (for messages). */
    callee: string
    /** The first argument, when it is string-like syntax (a literal, template or concatenation). */
    firstStringLike?: boolean
    /** The constant value of the last argument, when known (`Function('return this')`). */
    lastArgument?: string
    /** Why a read matters: its value is bound to a name, passed on, returned… (`typeof eval` is none of these). */
    flows?: boolean
    /** The call passes at least one argument (for `.apply` and `Reflect.apply`: a list that may hold one). */
    hasArguments?: boolean
    /** The second argument is an object literal whose `eval` is not `false` (`new Worker(code, { eval: true })`). */
    evalOption?: boolean
  }

  export type Verdict = { severity: Severity; rule: string; message: string }

  export const GLOBAL_OBJECTS = new Set(["globalThis", "global", "window", "self"])
  /** Network modules; `undici` and `ws` are Bun's built-ins (and npm packages under Node). */
  export const NET_MODULES = new Set(["net", "http", "https", "http2", "tls", "dgram", "dns", "undici", "ws"])
  /**
   * The root of what OpenCode passes to a plugin's entry function (`{ $, client, directory, … }`): the first parameter
   * of every function the module exports. Not an identifier, so no global can be mistaken for it.
   */
  export const PLUGIN_INPUT = "plugin input"
  /** `process` members that reach native code: internal bindings and native addons. */
  const PROCESS_NATIVE: Record<string, string> = {
    binding: "reaches Node's internal native bindings (spawning, files) past every module",
    _linkedBinding: "reaches a linked native binding past every module",
    dlopen: "loads a native library into the process",
  }
  const BUN_APIS: Record<string, string> = {
    file: "reads or writes files",
    write: "writes files",
    serve: "starts a network server",
    listen: "opens a network socket",
    connect: "opens a network connection",
    spawn: "runs a program",
    spawnSync: "runs a program",
    $: "runs shell commands",
  }
  /**
   * Bun's other network and file APIs, under the rule of their node or global equivalent: `Bun.udpSocket` is `dgram`,
   * `Bun.dns` is `dns`, `Bun.fetch` is `fetch`; the S3, SQL and Redis clients open connections and send data;
   * `Bun.mmap` reads a file. Members of `dns`, `s3`, `sql` and `redis` (`Bun.dns.lookup(…)`) count when called.
   */
  const BUN_LIKE: Record<string, Verdict> = {
    udpSocket: { severity: "medium", rule: "network", message: "opens a UDP socket (as dgram)" },
    dns: { severity: "medium", rule: "network", message: "DNS queries (as dns)" },
    S3Client: { severity: "medium", rule: "network", message: "an S3 client: sends and fetches data over the network" },
    s3: { severity: "medium", rule: "network", message: "the S3 client: sends and fetches data over the network" },
    sql: { severity: "medium", rule: "network", message: "SQL client: connects to a database server" },
    SQL: { severity: "medium", rule: "network", message: "SQL client: connects to a database server" },
    redis: { severity: "medium", rule: "network", message: "the Redis client: connects to a Redis server" },
    RedisClient: { severity: "medium", rule: "network", message: "a Redis client: connects to a Redis server" },
    fetch: { severity: "low", rule: "network-client", message: "outbound network request (as fetch)" },
    mmap: { severity: "medium", rule: "fs-read", message: "maps a file's content into memory: direct file access" },
  }
  /**
   * Members of network modules that do no I/O: they check or build strings, settings and certificates
   * (`net.isIP(host)`, `tls.checkServerIdentity(host, cert)`, `http.validateHeaderName(name)`). Calling them is not
   * network access; importing their module still is a finding. (`url` and `querystring` parse strings and are no
   * network modules: nothing of them is a finding.)
   */
  const NET_PURE: Record<string, Set<string>> = {
    net: new Set(["isIP", "isIPv4", "isIPv6", "BlockList", "SocketAddress"]),
    http: new Set(["validateHeaderName", "validateHeaderValue"]),
    https: new Set(["validateHeaderName", "validateHeaderValue"]),
    http2: new Set(["getDefaultSettings", "getPackedSettings", "getUnpackedSettings"]),
    tls: new Set(["checkServerIdentity", "getCiphers", "createSecureContext"]),
    // The resolver's configuration, read without a query.
    dns: new Set(["getServers", "getDefaultResultOrder"]),
  }
  const isNetPure = (mod: string, member: Seg) =>
    typeof member === "string" && Object.hasOwn(NET_PURE, mod) && NET_PURE[mod].has(member)

  /** `new Bun.Glob(p).scan…(dir)` lists files (`fs.globSync`); `match` only compares strings. */
  const GLOB_SCAN = /^(scan|scanSync)$/
  const FS_READ =
    /^(readFile|readFileSync|createReadStream|readdir|readdirSync|opendir|opendirSync|read|readSync|readv|readvSync|glob|globSync)$/
  const FS_WRITE =
    /^(writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|open|openSync|rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync|rename|renameSync|copyFile|copyFileSync|cp|cpSync|mkdir|mkdirSync|mkdtemp|mkdtempSync|truncate|truncateSync|ftruncate|ftruncateSync|chmod|chmodSync|lchmod|lchmodSync|fchmod|fchmodSync|chown|chownSync|lchown|lchownSync|fchown|fchownSync|utimes|utimesSync|lutimes|lutimesSync|futimes|futimesSync|symlink|symlinkSync|link|linkSync|write|writeSync|writev|writevSync)$/
  const FS_META =
    /^(exists|existsSync|stat|statSync|lstat|lstatSync|fstat|fstatSync|statfs|statfsSync|access|accessSync|readlink|readlinkSync|realpath|realpathSync|watch|watchFile|unwatchFile)$/
  const CHILD = /^(exec|execSync|execFile|execFileSync|spawn|spawnSync|fork)$/
  const TIMERS = new Set(["setTimeout", "setInterval", "setImmediate"])

  const LEAVES = new Set([
    "fetch",
    "eval",
    "setTimeout",
    "setInterval",
    "setImmediate",
    "WebSocket",
    "EventSource",
    "XMLHttpRequest",
    "Worker",
    "require",
  ])
  /**
   * Functions of `util` that return a function doing what their first argument does: `util.promisify(cp.exec)` runs
   * programs as `cp.exec` does, `util.callbackify(fsp.readFile)` reads files, `util.deprecate(fn, msg)` calls fn. A call
   * of what they return is reported as a call of what they wrapped.
   */
  const WRAPPERS = new Set(["promisify", "callbackify", "deprecate"])

  /**
   * True for a function that wraps its first argument (`util.promisify`).
   *
   * @example
   * AuditRules.wraps(["util", "promisify"]) // true
   */
  export function wraps(path: Path): boolean {
    return path.length === 2 && path[0] === "util" && typeof path[1] === "string" && WRAPPERS.has(path[1])
  }

  const MODULE_DEPTH: Record<string, number> = {
    fs: 3,
    child_process: 2,
    vm: 2,
    os: 2,
    module: 3,
    exports: 2,
    Bun: 3,
    Function: 3,
    net: 2,
    http: 2,
    https: 2,
    http2: 2,
    tls: 2,
    dgram: 2,
    dns: 2,
    worker_threads: 2,
    navigator: 2,
    [PLUGIN_INPUT]: 2,
  }

  /**
   * True when a value may still lead to a finding and is worth following further: capabilities (`fetch`, `fs`,
   * `process.env`, the global object…) and their members up to where the rule table looks; not the data they yield
   * (`process.env.HOME`, `fs.constants`, `os.platform`). Paths through another module's export are always followed.
   *
   * @example
   * AuditRules.useful(["process", "env"]) // true
   * AuditRules.useful(["process", "env", "HOME"]) // false
   */
  export function useful(path: Path): boolean {
    // What an object or array literal holds is followed as the value itself (`{ get: fetch }`, `[process.env]`).
    const held = heldIn(path)
    if (held !== undefined) return held !== null && useful(held)
    const n = path.length
    if (n === 0) return true
    const first = path[0]
    if (typeof first === "object" && first !== null) return true
    const last = path[n - 1]
    if (last === "constructor" || (n >= 2 && path[n - 2] === "constructor" && last === "constructor")) return true
    if (typeof first !== "string") return false
    if (first === "process")
      return (
        n === 1 ||
        (n === 2 && (path[1] === "env" || Object.hasOwn(PROCESS_NATIVE, path[1] as string))) ||
        (n <= 4 && path[1] === "mainModule") ||
        isLoader(path)
      )
    // `require.main` is `process.mainModule`, `module.parent` another module: both have a `require` of their own.
    if (first === "require" && path[1] === "main") return n <= 4 || isLoader(path)
    if (LEAVES.has(first)) return n === 1
    // `util` matters only for its wrappers (`util.promisify`), not for `util.inspect` or `util.format`.
    if (first === "util") return n === 1 || wraps(path)
    // An instance (`new Module()`, `new Bun.Glob()`) is followed as its class's `prototype`.
    if ((first === "module" || first === "Bun") && n === 4 && path[2] === "prototype") return true
    const depth = MODULE_DEPTH[first]
    return depth !== undefined && Object.hasOwn(MODULE_DEPTH, first) && n <= depth
  }

  export const isInto = (s: unknown): s is Into => typeof s === "object" && s !== null && "into" in s

  /**
   * Literals held in literals are followed this deep (`{ api: { get: [fetch] } }`); deeper is a value built by
   * recursion (a function of a cycle of modules returning a literal that holds its own result), never read back.
   */
  export const MAX_HELD_DEPTH = 3

  /**
   * For a path with `Into` segments: the path of the value held (the segments stripped from the end), or null when
   * one is not at the end (a member the literal does not have: nothing to follow) or they are more than
   * MAX_HELD_DEPTH. Undefined for other paths.
   *
   * @example
   * AuditRules.heldIn(["Function", { into: "f" }]) // ["Function"]
   */
  export function heldIn(path: Path): Path | null | undefined {
    let end = path.length
    while (end > 0 && isInto(path[end - 1])) end--
    const rest = path.slice(0, end)
    if (rest.some(isInto) || path.length - end > MAX_HELD_DEPTH) return null
    return end === path.length ? undefined : rest
  }

  /**
   * `path` followed by a member `key`: a member of what an object or array literal holds is what it holds under that
   * key (or under a key not known statically); another member, or one whose key is not known (`table[name]`, a lookup
   * rather than a use: see analyze.ts for a call of it), is a path `useful` rejects.
   *
   * @example
   * AuditRules.member(["eval", { into: "0" }], "0") // ["eval"]
   */
  export function member(path: Path, key: Seg): Path {
    const last = path[path.length - 1]
    if (isInto(last) && (last.into === null || last.into === key)) return path.slice(0, -1)
    return [...path, key]
  }

  /**
   * A path whose mention is a `sensitive-path` finding: files that hold secrets or credentials. `pattern` is tested on a
   * string's text (escapes decoded) and on paths joined from constant segments (an unknown segment is `_`); `words` is
   * a regular expression every text the pattern accepts contains as written in one segment (the audit selects the
   * string nodes worth testing by these words, in Rust); `examples` are texts it accepts (tested); `severity` when the
   * entry is not high.
   */
  export type SensitivePath = {
    pattern: RegExp
    label: string
    words: string
    examples: string[]
    /** High unless said: a secret or credential. */
    severity?: "high" | "medium"
  }

  /**
   * Under /etc, on Linux and macOS (`/private/etc`): the root of a path, or reached by climbing out of a relative one
   * (`../../etc/shadow`, the usual path traversal); not `./etc` or `home/etc`.
   */
  const ETC = String.raw`(^|[^\w.]|\.\.)(\/private)?\/etc\/`
  const etc = (rest: string) => new RegExp(ETC + rest)
  /** A path segment boundary before a name: the start, `/` or `\`. */
  const SEG = String.raw`(^|[/\\])`
  const seg = (rest: string) => new RegExp(SEG + rest)

  /**
   * The sensitive paths. Under /etc only the files that hold secrets: world-readable configuration (`/etc/hosts`,
   * `/etc/resolv.conf`, `/etc/os-release`, `/etc/xdg`) is not one. `/etc/passwd` holds no password hash (they are in
   * `/etc/shadow`) but lists the accounts and is the usual first read of a probe for file access, and a plugin has no
   * need of it (`os.userInfo()` names the user): kept. Other tools' credential stores are named for the tool, as a
   * plugin that reads them takes that tool's login.
   */
  export const SENSITIVE_PATHS: SensitivePath[] = [
    {
      pattern: etc(String.raw`(g?shadow|master\.passwd|security\/opasswd)(?![\w.])`),
      label: "the system's password hashes (/etc/shadow)",
      words: "etc",
      examples: ["/etc/shadow", "/etc/gshadow-", "/private/etc/master.passwd"],
    },
    {
      pattern: etc(String.raw`passwd(?![\w.])`),
      label: "the system's account list (/etc/passwd)",
      words: "etc",
      examples: ["/etc/passwd", "cat /etc/passwd"],
    },
    {
      pattern: etc(String.raw`sudoers(\.d)?(?![\w.])`),
      label: "sudo's rules (/etc/sudoers)",
      words: "etc",
      examples: ["/etc/sudoers", "/etc/sudoers.d/90-user"],
    },
    {
      pattern: etc(String.raw`ssh\/ssh_host_\w*key(?![\w.])`),
      label: "an SSH host private key (/etc/ssh/ssh_host_*_key)",
      words: "etc",
      examples: ["/etc/ssh/ssh_host_ed25519_key"],
    },
    {
      pattern: etc(String.raw`(ssl|pki\/tls)\/private([/\\]|$)`),
      label: "TLS private keys (/etc/ssl/private)",
      words: "etc",
      examples: ["/etc/ssl/private/server.key", "/etc/pki/tls/private"],
    },
    {
      pattern: etc(String.raw`krb5\.keytab(?![\w.])`),
      label: "Kerberos keys (/etc/krb5.keytab)",
      words: "etc",
      examples: ["/etc/krb5.keytab"],
    },
    {
      pattern: etc(String.raw`NetworkManager\/system-connections([/\\]|$)`),
      label: "saved network passwords (/etc/NetworkManager/system-connections)",
      words: "etc",
      examples: ["/etc/NetworkManager/system-connections/home.nmconnection"],
    },
    {
      pattern: etc(String.raw`(kubernetes\/(super-)?admin\.conf|rancher\/k3s\/k3s\.yaml)(?![\w.])`),
      label: "a Kubernetes cluster's admin credentials (/etc/kubernetes/admin.conf)",
      words: "etc",
      examples: ["/etc/kubernetes/admin.conf", "/etc/rancher/k3s/k3s.yaml"],
    },
    {
      pattern: /~\/\.ssh(\/|$)|(^|[/\\])\.ssh([/\\]|$)/,
      label: ".ssh",
      words: "ssh",
      examples: ["~/.ssh/config", "/home/u/.ssh"],
    },
    { pattern: seg(String.raw`\.gnupg([/\\]|$)`), label: ".gnupg", words: "gnupg", examples: ["~/.gnupg/"] },
    {
      pattern: /(^|[/\\])opencode[/\\](mcp-)?auth\.json$|(^|[/\\])mcp-auth\.json$/,
      label: "OpenCode's credential store",
      words: String.raw`auth\.json`,
      examples: ["~/.local/share/opencode/auth.json", "mcp-auth.json"],
    },
    {
      // OpenCode's data folder (~/.local/share/opencode, checked in the 1.18.33 binary): opencode.db (opencode-<channel>.db
      // on other channels; -wal/-shm beside it) and the older storage/ hold every session's messages and tool output,
      // tool-output/ the full output of truncated tool calls, snapshot/ a git store of each project's files.
      pattern: new RegExp(
        String.raw`(^|[/\\])opencode\.db(-wal|-shm)?$|(^|[/\\])opencode[/\\](opencode-[\w.-]+\.db(-wal|-shm)?$|(storage|tool-output|snapshot)([/\\]|$))`,
      ),
      label: "OpenCode's session store (every session's messages and tool output, snapshots of project files)",
      words: "opencode",
      examples: [
        "~/.local/share/opencode/opencode.db",
        "opencode.db-wal",
        "opencode/opencode-beta.db",
        "~/.local/share/opencode/storage/message",
        "opencode/tool-output",
        "opencode/snapshot/",
      ],
    },
    {
      pattern: seg(String.raw`opencode[/\\]log([/\\]|$)`),
      label: "OpenCode's logs (opencode/log)",
      words: "opencode",
      examples: ["~/.local/share/opencode/log/2026-12-01.log"],
      severity: "medium",
    },
    {
      pattern: seg(String.raw`gh[/\\]hosts\.ya?ml$`),
      label: "the GitHub CLI's token (gh/hosts.yml)",
      words: String.raw`hosts\.ya?ml`,
      examples: ["~/.config/gh/hosts.yml"],
    },
    {
      pattern: seg(String.raw`\.docker[/\\]config\.json$`),
      label: ".docker/config.json",
      words: "docker",
      examples: ["~/.docker/config.json"],
    },
    {
      pattern: seg(String.raw`\.kube[/\\]config$`),
      label: ".kube/config",
      words: "kube",
      examples: ["~/.kube/config"],
    },
    {
      pattern: seg(String.raw`\.env($|[./\\_-])`),
      label: ".env",
      words: "env",
      examples: [".env", "config/.env.local"],
    },
    {
      pattern: seg(String.raw`id_(rsa|ed25519|ecdsa|dsa)\.pub\b`),
      label: "SSH public key",
      words: "id_",
      examples: ["keys/id_rsa.pub"],
    },
    {
      pattern: seg(String.raw`id_(rsa|ed25519|ecdsa|dsa)(?!\.pub\b)\b`),
      label: "SSH private key",
      words: "id_",
      examples: ["keys/id_ed25519"],
    },
    {
      pattern: seg(String.raw`\.aws[/\\]credentials\b`),
      label: ".aws/credentials",
      words: "aws",
      examples: ["~/.aws/credentials"],
    },
    {
      pattern: seg(String.raw`\.(npmrc|netrc|pgpass|git-credentials|pypirc)$`),
      label: "credentials file",
      words: "npmrc|netrc|pgpass|git-credentials|pypirc",
      examples: ["~/.npmrc", "~/.netrc", "~/.pypirc"],
    },
    {
      pattern: seg(String.raw`github-copilot[/\\](hosts|apps)\.json$`),
      label: "GitHub Copilot's token (github-copilot/hosts.json)",
      words: "github-copilot",
      examples: ["~/.config/github-copilot/hosts.json", "github-copilot/apps.json"],
    },
    {
      pattern: seg(String.raw`\.?[cC]ursor[/\\]auth\.json$`),
      label: "Cursor's token (cursor/auth.json)",
      words: String.raw`auth\.json`,
      examples: ["~/.cursor/auth.json", "~/.config/cursor/auth.json"],
    },
    {
      pattern: seg(String.raw`state\.vscdb(\.backup)?$`),
      label: "an editor's state database (state.vscdb: Cursor keeps its access token there)",
      words: "vscdb",
      examples: ["Cursor/User/globalStorage/state.vscdb"],
    },
    {
      pattern: seg(String.raw`(com\.vercel\.cli|\.now)[/\\]auth\.json$`),
      label: "the Vercel CLI's token (com.vercel.cli/auth.json)",
      words: String.raw`auth\.json`,
      examples: ["~/.local/share/com.vercel.cli/auth.json", "~/.now/auth.json"],
    },
    {
      pattern: seg(String.raw`\.codex[/\\]auth\.json$`),
      label: "the Codex CLI's token (.codex/auth.json)",
      words: String.raw`auth\.json`,
      examples: ["~/.codex/auth.json"],
    },
    {
      pattern: seg(String.raw`\.claude[/\\]\.credentials\.json$`),
      label: "Claude Code's token (.claude/.credentials.json)",
      words: "credentials",
      examples: ["~/.claude/.credentials.json"],
    },
    {
      pattern: seg(String.raw`\.gemini[/\\]oauth_creds\.json$`),
      label: "the Gemini CLI's token (.gemini/oauth_creds.json)",
      words: "oauth_creds",
      examples: ["~/.gemini/oauth_creds.json"],
    },
    {
      pattern: seg(String.raw`\.aws[/\\](sso|cli)[/\\]cache([/\\]|$)`),
      label: "AWS SSO and CLI token caches (.aws/sso/cache)",
      words: "aws",
      examples: ["~/.aws/sso/cache/x.json"],
    },
    {
      pattern: seg(
        String.raw`gcloud[/\\](credentials\.db|access_tokens\.db|application_default_credentials\.json|legacy_credentials)([/\\]|$)`,
      ),
      label: "Google Cloud SDK credentials (gcloud/…)",
      words: "gcloud",
      examples: ["~/.config/gcloud/application_default_credentials.json", "gcloud/credentials.db"],
    },
    {
      pattern: seg(
        String.raw`\.azure[/\\](accessTokens\.json|msal_token_cache\.(json|bin)|service_principal_entries\.json)$`,
      ),
      label: "Azure CLI tokens (.azure/…)",
      words: "azure",
      examples: ["~/.azure/msal_token_cache.json"],
    },
    {
      pattern: seg(String.raw`\.cargo[/\\]credentials(\.toml)?$`),
      label: "Cargo's registry token (.cargo/credentials)",
      words: "credentials",
      examples: ["~/.cargo/credentials.toml"],
    },
    {
      pattern: seg(String.raw`\.terraform\.d[/\\]credentials\.tfrc\.json$`),
      label: "Terraform's token (.terraform.d/credentials.tfrc.json)",
      words: "credentials",
      examples: ["~/.terraform.d/credentials.tfrc.json"],
    },
    {
      pattern: seg(String.raw`huggingface[/\\](stored_)?tokens?$`),
      label: "Hugging Face's token (huggingface/token)",
      words: "huggingface",
      examples: ["~/.cache/huggingface/token"],
    },
    {
      pattern: seg(String.raw`(Library[/\\]Keychains|keyrings)([/\\]|$)`),
      label: "the OS keychain (Library/Keychains, keyrings)",
      words: "Keychains|keyrings",
      examples: ["~/Library/Keychains/login.keychain-db", "~/.local/share/keyrings/login.keyring"],
    },
  ]

  /**
   * The words of SENSITIVE_PATHS as one regular expression, plus escapes (`\x65tc` is decoded before the patterns are
   * tested): a string whose raw text has none of them matches no pattern.
   */
  export const SENSITIVE_WORDS = [...new Set(SENSITIVE_PATHS.map((e) => e.words)), String.raw`\\[xu0-7]`].join("|")

  /** Functions that load a module by name as `require` does. */
  const LOADERS = new Set([
    "require",
    "module.require",
    "process.getBuiltinModule",
    "process.mainModule.require",
    "process.mainModule.constructor._load",
    "require.main.require",
    "require.main.constructor._load",
    "module.parent.require",
    "module._load",
    "module.constructor._load",
  ])

  /**
   * True for a function that loads a module by name: `require` and the routes to it that avoid the word
   * (`process.getBuiltinModule`, `process.mainModule.require`, `Module._load`).
   *
   * @example
   * AuditRules.isLoader(["process", "getBuiltinModule"]) // true
   */
  export function isLoader(path: Path): boolean {
    return path.length <= 4 && path.every((s) => typeof s === "string") && LOADERS.has(path.join("."))
  }

  /**
   * The finding for a module written inline as a `data:` or `blob:` URL: importing it runs the code in it.
   *
   * @example
   * AuditRules.inlineModule("data:text/javascript,1").rule // "dynamic-import"
   */
  export function inlineModule(spec: string): Verdict {
    const scheme = spec.slice(0, spec.indexOf(":"))
    return { severity: "high", rule: "dynamic-import", message: `loads a ${scheme}: URL: runs the code written in it` }
  }

  /** True when the path is fully known (no `Ref` left to resolve). */
  export function isConcrete(path: Path): path is (string | null | Call | Into)[] {
    return path.every((s) => s === null || typeof s === "string" || s === CALL || isInto(s))
  }

  /**
   * A path that is another module's namespace object itself (`import * as ns from "./x"`, then `ns`). Such a value is
   * never a global, a built-in module or `process.env`: link.ts resolves it to nothing, so uses of it need not be
   * kept for the cross-module step (members of it, `ns.x`, are other paths and are kept).
   *
   * @example
   * AuditRules.isNamespace([{ ref: "/p/x.js", name: "*" }]) // true
   */
  export function isNamespace(path: Path): boolean {
    const head = path[0]
    return (
      path.length === 1 && typeof head === "object" && head !== null && "ref" in head && !head.key && head.name === "*"
    )
  }

  /**
   * `a.b.?` for messages (`?` for an unknown key, `()` for a call).
   *
   * @example
   * AuditRules.show(["process", "env", null]) // "process.env.?"
   */
  export function show(path: Path): string {
    return path
      .map((s) =>
        s === null
          ? "?"
          : typeof s === "string"
            ? s
            : "ref" in s
              ? `<${s.name}>`
              : isInto(s)
                ? `{${s.into ?? "?"}}`
                : "()",
      )
      .join(".")
  }

  /**
   * The finding for a module loaded by name (import statement, constant `require`/`import()`), or undefined.
   *
   * @example
   * AuditRules.moduleImport("child_process")?.rule // "child_process"
   */
  export function moduleImport(mod: string): Verdict | undefined {
    const top = mod.split(/[./]/)[0]
    if (top === "bun:ffi")
      return { severity: "high", rule: "native-code", message: "imports bun:ffi: calls native code outside JavaScript" }
    if (top === "bun:sqlite")
      return { severity: "medium", rule: "sqlite", message: "imports bun:sqlite: opens database files directly" }
    if (top === "child_process")
      return { severity: "medium", rule: "child_process", message: `imports ${mod}: can run programs` }
    if (NET_MODULES.has(top))
      return { severity: "medium", rule: "network", message: `imports ${mod}: network servers/clients` }
    if (top === "vm") return { severity: "high", rule: "vm", message: "imports vm: compiles and runs code" }
    if (top === "inspector")
      return {
        severity: "high",
        rule: "inspector",
        message: `imports ${mod}: the debugging protocol evaluates code in this process (Runtime.evaluate)`,
      }
    if (top === "repl")
      return { severity: "high", rule: "repl", message: "imports repl: evaluates the input it is given as code" }
    if (ADDON_LOADERS.has(mod))
      return { severity: "high", rule: "native-code", message: `imports ${mod}: loads a compiled native addon` }
    return undefined
  }

  /** Packages whose whole job is to find and load a compiled `.node` addon. */
  const ADDON_LOADERS = new Set([
    "bindings",
    "node-gyp-build",
    "node-gyp-build-optional-packages",
    "@mapbox/node-pre-gyp",
  ])

  /**
   * The verdict on loading a file by a name ending in `.node`: a compiled addon, native code outside JavaScript.
   *
   * @example
   * AuditRules.nativeAddon("./build/Release/addon.node").rule // "native-code"
   */
  export function nativeAddon(spec: string): Verdict {
    return {
      severity: "high",
      rule: "native-code",
      message: `loads ${spec}: a compiled native addon (code outside JavaScript)`,
    }
  }

  /**
   * The verdict on loading a module whose name is not a constant but is one of `names`, each ending in `.node` (sharp's
   * `for (const p of [\`../build/sharp-${platform}.node\`, …]) require(p)`): a compiled addon all the same.
   *
   * @example
   * AuditRules.nativeAddons(["./a.node", "@img/x/sharp.node"]).message // "loads one of 2 compiled native addons …"
   */
  export function nativeAddons(names: string[]): Verdict {
    const shown = names.slice(0, 3).join(", ") + (names.length > 3 ? ", …" : "")
    return {
      severity: "high",
      rule: "native-code",
      message: `loads one of ${names.length} compiled native addons (${shown}): code outside JavaScript`,
    }
  }

  /**
   * The verdict on a package that ships compiled native code (`.node` addons, shared libraries, executables): it runs
   * outside JavaScript, with the plugin's rights, where the audit cannot read it.
   *
   * @example
   * AuditRules.nativeFiles(["lib/sharp-linux-x64.node"]).rule // "native-code"
   */
  export function nativeFiles(files: string[]): Verdict {
    const shown = files.slice(0, 5).join(", ") + (files.length > 5 ? `, … ${files.length - 5} more` : "")
    return {
      severity: "high",
      rule: "native-code",
      message: `ships ${files.length} compiled native file${files.length === 1 ? "" : "s"} (${shown}): native code, not analysed`,
    }
  }

  /**
   * The verdict on `import()` or `require()` of a module name that is not a constant.
   *
   * @example
   * AuditRules.dynamicLoad("import").rule // "dynamic-import"
   */
  export function dynamicLoad(how: "import" | "require"): Verdict {
    return {
      severity: "high",
      rule: `dynamic-${how}`,
      message: `${how}() with a computed module name: what it loads is unknown`,
    }
  }

  const returnThis = (site: Site) =>
    site.lastArgument !== undefined && /^\s*return\s+this\b/.test(site.lastArgument)
      ? " ('return this' grabs the global object)"
      : ""

  /**
   * The finding for a value with a fully resolved path used at a site, or undefined when it is harmless. Environment
   * reads are reported where `process.env` itself is reached (see analyze.ts), not here.
   *
   * @example
   * AuditRules.classify(["eval"], { kind: "call", callee: "(0, eval)" })?.rule // "eval"
   */
  export function classify(path: Path, site: Site): Verdict | undefined {
    const p = path
    const n = p.length
    const last = p[n - 1]
    // Read only when a message is written: the site may compute it from the syntax tree.
    const callee = () => (site.callee.length > 60 ? site.callee.slice(0, 57) + "…" : site.callee)
    if (n >= 2 && last === "constructor" && p[n - 2] === "constructor") {
      if (site.kind === "read")
        return {
          severity: "critical",
          rule: "constructor-constructor",
          message: `${callee()} is the Function constructor`,
        }
      return {
        severity: "critical",
        rule: "constructor-constructor",
        message: `${callee()}(…) reaches the Function constructor`,
      }
    }
    // What an object or array literal holds is reached through a member of it (`member`), not by the literal itself.
    if (p.some(isInto)) return undefined
    if (n >= 2 && last === "constructor" && p[n - 2] !== "constructor") {
      // Every function's constructor is Function (or its async and generator kinds): a function literal, a built-in
      // such as `Object`, `setTimeout` or `console.log`, a declared function or class. Of a value whose kind is not
      // known, a call with arguments is taken as one too (an object's class is called with `new`, which is not
      // reported there); `.constructor` only read or compared (`x.constructor === Foo`, `.name`) is not a call.
      const of = show(p.slice(0, -1))
      // `Function.prototype` is itself a function whose constructor is Function (another class's prototype is not).
      const fn =
        of === "function" ||
        of === "Function" ||
        of === "Function.prototype" ||
        (n === 2 && typeof p[0] === "string" && LEAVES.has(p[0]))
      if (site.kind === "read") return undefined
      if (fn)
        return {
          severity: "critical",
          rule: "function-constructor",
          message: `${site.kind === "new" ? "new " : ""}${callee()}(…) is the Function constructor: compiles a string into code${returnThis(site)}`,
        }
      if (p[0] === null && n === 2 && site.kind === "call" && site.hasArguments)
        return {
          severity: "critical",
          rule: "function-constructor",
          message: `${callee()}(…) with arguments: a function's constructor is Function, which compiles a string into code`,
        }
      return undefined
    }
    const name = show(p)
    if (site.kind === "read") {
      if (name === "eval" && site.flows)
        return {
          severity: "critical",
          rule: "eval",
          message: `${callee() === "eval" ? "eval" : `${callee()} is eval`} taken as a value (stored, passed or returned): calling it elsewhere runs a string as code`,
        }
      return undefined
    }
    const isNew = site.kind === "new"
    if (name === "eval")
      return {
        severity: "critical",
        rule: "eval",
        message: `eval(…)${callee() === "eval" ? "" : ` spelled ${callee()}`}: runs a string as code`,
      }
    if (name === "Function" || name === "Function.prototype.constructor")
      return {
        severity: "critical",
        rule: "function-constructor",
        message: `${isNew ? "new " : ""}Function(…) compiles a string into code${returnThis(site)}`,
      }
    if (n === 1 && typeof last === "string" && TIMERS.has(last) && site.firstStringLike)
      return { severity: "critical", rule: "string-timer", message: `${last} with a string argument runs it as code` }
    if (p[0] === "vm" && n > 1 && !isNew)
      return { severity: "high", rule: "vm", message: `${name}: compiles and runs code` }
    if (p[0] === "vm" && n > 1) return { severity: "high", rule: "vm", message: `new ${name}: compiles code` }
    if (p[0] === "process" && n === 2 && typeof last === "string" && Object.hasOwn(PROCESS_NATIVE, last) && !isNew)
      return { severity: "high", rule: "native-code", message: `${name}(…): ${PROCESS_NATIVE[last]}` }
    if (p[0] === PLUGIN_INPUT && n === 2 && last === "$" && !isNew)
      return {
        severity: "medium",
        rule: "bun-shell",
        message: `${callee()}\`…\`: the $ OpenCode passes to a plugin runs shell commands`,
      }
    if (isNew && (name === "Worker" || name === "worker_threads.Worker") && site.evalOption)
      return {
        severity: "critical",
        rule: "worker-eval",
        message: `new ${name}(…, { eval: true }): runs a string as code (in another thread)`,
      }
    if (isNew && (name === "Worker" || name === "worker_threads.Worker"))
      return { severity: "medium", rule: "worker", message: `new ${name}(…): runs a script in another thread` }
    if (
      p[0] === "module" &&
      last === "_compile" &&
      !isNew &&
      (n === 2 || (n === 3 && p[1] === "prototype") || (n === 4 && p[1] === "constructor" && p[2] === "prototype"))
    )
      return {
        severity: "high",
        rule: "module-compile",
        message: `${callee()}(…): compiles and runs a string as a CommonJS module`,
      }
    if (name === "navigator.sendBeacon" && !isNew)
      return { severity: "low", rule: "network-client", message: `${callee()}(…): outbound network request` }
    if (p[0] === "Bun" && n === 2 && typeof last === "string" && Object.hasOwn(BUN_APIS, last))
      return {
        severity: "medium",
        rule: `bun-${last === "$" ? "shell" : last}`,
        message: `Bun.${last}(…): ${BUN_APIS[last]}`,
      }
    const bunLike = p[0] === "Bun" && (n === 2 || n === 3) && typeof p[1] === "string" ? p[1] : undefined
    if (bunLike && Object.hasOwn(BUN_LIKE, bunLike) && (n === 2 || ["dns", "s3", "sql", "redis"].includes(bunLike))) {
      const v = BUN_LIKE[bunLike]
      return { ...v, message: `${isNew ? "new " : ""}${name}(…): ${v.message}` }
    }
    if (
      p[0] === "Bun" &&
      n === 4 &&
      p[1] === "Glob" &&
      p[2] === "prototype" &&
      typeof last === "string" &&
      GLOB_SCAN.test(last)
    )
      return { severity: "medium", rule: "fs-read", message: `Bun.Glob(…).${last}(…): lists files (as fs.globSync)` }
    if (p[0] === "fs" && !isNew) {
      const rest = p[1] === "promises" ? p.slice(2) : p.slice(1)
      const fn = rest.length === 1 || (rest.length === 2 && rest[1] === "native") ? rest[0] : undefined
      if (typeof fn !== "string") return undefined
      if (FS_META.test(fn))
        return { severity: "medium", rule: "fs-meta", message: `${name}(…): file metadata (what exists, where, when)` }
      if (FS_WRITE.test(fn))
        return { severity: "medium", rule: "fs-write", message: `${name}(…): direct file system access` }
      if (FS_READ.test(fn))
        return { severity: "medium", rule: "fs-read", message: `${name}(…): direct file system access` }
      return undefined
    }
    if (p[0] === "child_process" && n === 2 && typeof last === "string" && CHILD.test(last))
      return { severity: "medium", rule: "child_process", message: `${name}(…): runs a program` }
    if (typeof p[0] === "string" && NET_MODULES.has(p[0]) && n > 1 && !(n === 2 && isNetPure(p[0], last)))
      return { severity: "medium", rule: "network", message: `${name}(…): network access` }
    if (
      (name === "fetch" && !isNew) ||
      (isNew && (name === "WebSocket" || name === "EventSource" || name === "XMLHttpRequest"))
    )
      return {
        severity: "low",
        rule: "network-client",
        message: `${isNew ? "new " : ""}${name}(…)${callee() === name ? "" : ` as ${callee()}`}: outbound network request`,
      }
    if (name === "os.homedir" && !isNew)
      return { severity: "low", rule: "homedir", message: "os.homedir(): locates the user's home directory" }
    return undefined
  }
}
