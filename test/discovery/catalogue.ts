/**
 * A realistic catalogue for the discovery evaluation: the kind of agents, commands, skills, output styles and project
 * resources a developer accumulates in `~/.claude`, `~/.config/opencode`, `.claude` and `.opencode`. Written for this
 * project. `files()` lays it out under a root with `home/` (the home directory, XDG config in `home/.config`) and
 * `project/`.
 *
 * Variety on purpose: Claude Code agents with long descriptions and `<example>` blocks, OpenCode agents with `mode`,
 * commands without frontmatter (named and keyed by their file name), a nested command (`git/squash`), explicit
 * `keywords`, a project agent that overrides a global one of the same name, and resources of every type.
 */

type Def = { name: string; description?: string; keywords?: string[]; extra?: Record<string, unknown>; body?: string }

function md(front: Record<string, unknown>, body: string) {
  const lines = Object.entries(front)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
  return lines.length ? `---\n${lines.join("\n")}\n---\n\n${body}\n` : `${body}\n`
}

/** Claude Code agents in ~/.claude/agents (global). */
const CLAUDE_GLOBAL_AGENTS: Def[] = [
  {
    name: "code-reviewer",
    description:
      "Expert reviewer for quality, readability and maintainability. Use right after writing or changing code, or before merging a branch.\n\n<example>\nuser: I just finished the payment retry logic\nassistant: Let me use the code-reviewer agent to look over the changes\n</example>",
    extra: { tools: "Read, Grep, Glob, Bash", model: "sonnet" },
  },
  {
    name: "security-auditor",
    description:
      "Finds vulnerabilities: injection, broken authentication, secrets in code, insecure dependencies, OWASP Top 10. Use for security reviews and threat modelling.",
    extra: { tools: "Read, Grep, Glob" },
  },
  {
    name: "debugger",
    description:
      "Debugging specialist for errors, failing tests and unexpected behaviour. Reproduces the problem, isolates the root cause and proposes a minimal fix.",
  },
  {
    name: "test-automator",
    description:
      "Writes unit, integration and end-to-end tests, sets up test fixtures and raises coverage. Use proactively when a change has no tests.",
  },
  {
    name: "performance-engineer",
    description:
      "Profiles applications and removes bottlenecks: slow endpoints, memory leaks, N+1 queries, caching strategy, load testing.",
  },
  {
    name: "database-optimizer",
    description:
      "Tunes SQL queries and schemas: indexes, execution plans, partitioning, connection pooling for PostgreSQL and MySQL.",
  },
  {
    name: "devops-troubleshooter",
    description:
      "Investigates production incidents: reads logs and metrics, debugs deployments, container crashes and networking problems.",
  },
  {
    name: "kubernetes-architect",
    description:
      "Designs Kubernetes deployments: manifests, Helm charts, autoscaling, ingress, service mesh and cluster security.",
  },
  {
    name: "terraform-specialist",
    description:
      "Writes and refactors Terraform modules, manages state, plans infrastructure changes on AWS, GCP and Azure.",
  },
  {
    name: "frontend-developer",
    description:
      "Builds React components, responsive layouts and client-side state management. Handles hooks, routing and forms.",
  },
  {
    name: "ui-ux-designer",
    description:
      "Creates interface designs, wireframes, user flows and design systems with attention to usability and visual hierarchy.",
  },
  {
    name: "accessibility-auditor",
    description:
      "Audits web pages for WCAG compliance: screen readers, keyboard navigation, colour contrast, ARIA roles.",
  },
  {
    name: "backend-architect",
    description:
      "Designs backend services and REST APIs: service boundaries, data models, scalability and inter-service communication.",
  },
  {
    name: "graphql-architect",
    description: "Designs GraphQL schemas, resolvers and federation; fixes N+1 problems with dataloaders.",
  },
  {
    name: "python-pro",
    description: "Writes idiomatic Python: type hints, async, packaging, pytest, performance tuning of Python code.",
  },
  {
    name: "typescript-pro",
    description:
      "Advanced TypeScript: strict types, generics, type inference, declaration files and build configuration.",
  },
  {
    name: "rust-pro",
    description: "Rust systems programming: ownership and lifetimes, async with tokio, unsafe review, crate design.",
  },
  {
    name: "golang-pro",
    description: "Go services with goroutines and channels, context cancellation, interfaces and Go modules.",
  },
  {
    name: "data-scientist",
    description:
      "Data analysis with SQL and pandas: exploratory analysis, statistics, notebooks and charts that answer business questions.",
  },
  {
    name: "ml-engineer",
    description:
      "Trains, evaluates and deploys machine learning models; feature pipelines, model serving and monitoring.",
  },
  {
    name: "technical-writer",
    description:
      "Writes user documentation, READMEs, guides and tutorials in clear, plain language for the intended audience.",
  },
  {
    name: "api-documenter",
    description: "Writes OpenAPI specifications, API reference pages, SDK examples and endpoint documentation.",
  },
  {
    name: "legacy-modernizer",
    description:
      "Refactors legacy code step by step: migrates old frameworks, removes dead code, adds tests before changing behaviour.",
  },
  {
    name: "incident-responder",
    description:
      "Coordinates an active outage: triage, mitigation, status updates and the timeline for the postmortem.",
  },
  {
    name: "mobile-developer",
    description:
      "Builds iOS and Android apps with React Native or Flutter; offline sync, push notifications, app store releases.",
  },
  {
    name: "prompt-engineer",
    description: "Writes and improves prompts for LLM features, system prompts and evaluation of model outputs.",
  },
  {
    name: "system-architect",
    description: "High-level architecture decisions: trade-offs between designs, scalability, reliability and cost.",
  },
  {
    name: "regex-wizard",
    description: "",
    keywords: ["regex", "regular expression", "pattern matching", "parsing text"],
  },
]

/** A project-level Claude agent overriding the global one (local wins). */
const CLAUDE_LOCAL_AGENTS: Def[] = [
  {
    name: "code-reviewer",
    description:
      "Reviews code in this repository against our conventions: error handling with Result types, no default exports, tests beside the code.",
  },
  {
    name: "payments-expert",
    description:
      "Knows this project's payments domain: Stripe integration, refunds, idempotency keys, ledger reconciliation and currency rounding.",
  },
]

/** OpenCode agents in the project (.opencode/agent). */
const OPENCODE_LOCAL_AGENTS: Def[] = [
  {
    name: "release-manager",
    description: "Prepares and ships releases: version bump, changelog, tags and the deployment checklist.",
    extra: { mode: "subagent" },
  },
  {
    name: "migration-planner",
    description: "Plans database schema migrations with zero downtime: backfills, dual writes and rollback steps.",
    extra: { mode: "subagent" },
  },
]

/** OpenCode agents in ~/.config/opencode/agent (global). */
const OPENCODE_GLOBAL_AGENTS: Def[] = [
  {
    name: "dependency-updater",
    description:
      "Upgrades npm, pip and cargo dependencies, reads changelogs for breaking changes and fixes the fallout.",
    extra: { mode: "subagent" },
  },
]

/** Claude Code commands in ~/.claude/commands (global); some without frontmatter. */
const CLAUDE_GLOBAL_COMMANDS: Def[] = [
  { name: "commit", description: "Create a conventional commit from the staged changes with a meaningful message" },
  { name: "explain", description: "Explain how the selected code works, step by step" },
  { name: "todo-sweep", description: "Find TODO and FIXME comments and turn them into a task list" },
  { name: "standup", description: "Summarise yesterday's commits and open pull requests for the daily standup" },
  { name: "lint-fix" },
  { name: "bump-deps" },
]

/** Claude Code commands in the project's .claude/commands. */
const CLAUDE_LOCAL_COMMANDS: Def[] = [
  { name: "fix-issue", description: "Read a GitHub issue by number, find the cause and implement the fix with a test" },
  { name: "pr-review", description: "Review the open pull request: correctness, tests, naming and risky changes" },
  { name: "test-coverage", description: "Run the test suite with coverage and list the least covered modules" },
]

/** OpenCode commands in the project's .opencode/command (one nested). */
const OPENCODE_LOCAL_COMMANDS: Def[] = [
  { name: "deploy-staging", description: "Build the images and deploy the current branch to the staging cluster" },
  { name: "changelog", description: "Update CHANGELOG.md from the merged pull requests since the last tag" },
  { name: "db-migrate", description: "Generate and apply a database migration for the model changes" },
  { name: "scaffold-component", description: "Create a new React component with story, styles and test files" },
  { name: "benchmark", description: "Run the benchmark suite and compare against the main branch" },
  { name: "docker-build", description: "Build and tag the Docker image locally, reporting image size" },
  { name: "git/squash", description: "Squash the commits of the current branch into one with a clean message" },
  { name: "translate-strings", description: "Extract new UI strings and add them to the locale files for translation" },
]

/** OpenCode commands in ~/.config/opencode/command (global). */
const OPENCODE_GLOBAL_COMMANDS: Def[] = [
  { name: "security-scan", description: "Scan dependencies and code for known vulnerabilities and leaked secrets" },
  { name: "perf-profile", description: "Profile a slow script or endpoint and show the hottest functions" },
]

/** Skills: name → SKILL.md, spread over the four skill locations. */
const SKILLS: (Def & { at: "claude-global" | "claude-local" | "opencode-global" | "opencode-local" })[] = [
  {
    at: "claude-global",
    name: "pdf-forms",
    description: "Fill in, extract text from and merge PDF documents and forms.",
  },
  {
    at: "claude-global",
    name: "xlsx-reports",
    description: "Create and edit Excel spreadsheets with formulas, pivot tables and charts.",
  },
  {
    at: "claude-global",
    name: "docx-editing",
    description: "Create and edit Word documents with tracked changes, comments and styles.",
  },
  {
    at: "claude-global",
    name: "pptx-slides",
    description: "Build PowerPoint presentations: slide layouts, speaker notes, charts.",
  },
  {
    at: "claude-global",
    name: "brand-guidelines",
    description: "Apply the company's colours, typography and tone of voice to any artefact.",
  },
  {
    at: "claude-global",
    name: "mcp-builder",
    description: "Build MCP servers that expose tools and resources to language models.",
  },
  {
    at: "claude-global",
    name: "webapp-testing",
    description: "Drive a local web app with Playwright: click through flows, take screenshots, check console errors.",
  },
  {
    at: "claude-global",
    name: "frontend-design",
    description: "Produce polished, distinctive web interfaces with HTML and CSS, avoiding generic layouts.",
  },
  {
    at: "claude-global",
    name: "image-optimization",
    description: "Compress, resize and convert images (PNG, JPEG, WebP, AVIF) for the web.",
  },
  {
    at: "claude-local",
    name: "release-notes",
    description: "Draft user-facing release notes from merged pull requests and issue titles.",
  },
  {
    at: "claude-local",
    name: "openapi-client",
    description: "Generate a typed API client from an OpenAPI specification.",
  },
  {
    at: "claude-local",
    name: "incident-postmortem",
    description: "Write a blameless postmortem: timeline, impact, root cause and follow-up actions.",
  },
  {
    at: "opencode-local",
    name: "sql-query-tuning",
    description: "Rewrite slow SQL queries and read EXPLAIN ANALYZE output to choose indexes.",
  },
  {
    at: "opencode-local",
    name: "k8s-manifests",
    description: "Write Kubernetes manifests: deployments, services, config maps, probes and resource limits.",
  },
  {
    at: "opencode-local",
    name: "terraform-module",
    description: "Scaffold a reusable Terraform module with variables, outputs and examples.",
  },
  {
    at: "opencode-local",
    name: "log-analysis",
    description: "Search and summarise application logs to find error spikes and their first occurrence.",
  },
  {
    at: "opencode-local",
    name: "i18n-extraction",
    description: "Find hard-coded user-facing strings and move them into translation catalogues.",
  },
  {
    at: "opencode-global",
    name: "data-viz",
    description: "Turn data into charts and dashboards with Vega-Lite or matplotlib.",
  },
  {
    at: "opencode-global",
    name: "csv-cleaning",
    description: "Clean messy CSV files: encodings, delimiters, duplicates and inconsistent dates.",
  },
  {
    at: "opencode-global",
    name: "dependency-audit",
    description: "List outdated and vulnerable packages with upgrade paths and licence issues.",
  },
  {
    at: "opencode-global",
    name: "git-bisect",
    description: "Find the commit that introduced a regression with git bisect and a test script.",
  },
  {
    at: "opencode-global",
    name: "shell-scripting",
    description: "Write robust bash scripts: strict mode, quoting, argument parsing, traps.",
  },
]

/** Output styles (Claude Code). */
const STYLES: (Def & { at: "global" | "local" })[] = [
  { at: "global", name: "concise", description: "Short answers: the result first, no preamble, minimal explanation." },
  {
    at: "global",
    name: "explanatory",
    description: "Explains the reasoning and the trade-offs behind each implementation choice.",
  },
  {
    at: "global",
    name: "learning",
    description: "Teaching mode: asks the user to write small pieces themselves and explains concepts.",
  },
  { at: "global", name: "socratic", description: "Answers with guiding questions that lead the user to the solution." },
  {
    at: "global",
    name: "devils-advocate",
    description: "Challenges the proposal: argues the opposite position and looks for weaknesses.",
  },
  {
    at: "global",
    name: "executive-summary",
    description: "For managers: outcome, risk and cost in a few bullet points, no jargon.",
  },
  {
    at: "local",
    name: "pair-programmer",
    description: "Thinks aloud as a pair programming partner, proposing small steps and checking in.",
  },
  { at: "local", name: "bullet-points", description: "Formats every answer as a structured list of bullet points." },
]

/** Project resources under .opencode/<type>/, read by the resource loader. */
const RESOURCES: { path: string; title: string; description: string; tags: string[] }[] = [
  {
    path: "task/ship-release.md",
    title: "Ship a release",
    description: "Cut, tag and publish a release of the service",
    tags: ["release", "git", "deploy"],
  },
  {
    path: "task/onboard-service.md",
    title: "Onboard a new service",
    description: "Register a new microservice: repository, CI pipeline, monitoring and on-call",
    tags: ["service", "ci", "monitoring"],
  },
  {
    path: "task/rotate-secrets.md",
    title: "Rotate secrets",
    description: "Rotate API keys and database credentials without downtime",
    tags: ["security", "credentials"],
  },
  {
    path: "checklist/code-review.md",
    title: "Code review checklist",
    description: "What every review checks: tests, error handling, naming, logging",
    tags: ["review", "quality"],
  },
  {
    path: "checklist/release.md",
    title: "Release checklist",
    description: "Steps before tagging: green CI, changelog, migrations applied, rollback plan",
    tags: ["release"],
  },
  {
    path: "checklist/security-review.md",
    title: "Security review checklist",
    description: "Authentication, authorisation, input validation, secrets and dependency checks",
    tags: ["security", "review"],
  },
  {
    path: "checklist/accessibility.md",
    title: "Accessibility checklist",
    description: "Keyboard access, labels, contrast and screen reader checks for UI changes",
    tags: ["a11y", "ui"],
  },
  {
    path: "knowledge-base/dev/deployment-runbook.md",
    title: "Deployment runbook",
    description: "How deployments work here: environments, feature flags, rollback commands",
    tags: ["deploy", "operations"],
  },
  {
    path: "knowledge-base/architecture-overview.md",
    title: "Architecture overview",
    description: "Services, queues and databases of the platform and how they talk to each other",
    tags: ["architecture"],
  },
  {
    path: "knowledge-base/payments-domain.md",
    title: "Payments domain",
    description: "Glossary and rules of payments: captures, refunds, chargebacks, settlement",
    tags: ["payments", "billing"],
  },
  {
    path: "knowledge-base/incident-process.md",
    title: "Incident process",
    description: "Severity levels, who to page, communication during an outage",
    tags: ["incident", "on-call"],
  },
  {
    path: "template/adr.md",
    title: "Architecture decision record",
    description: "Template for recording an architecture decision: context, options, decision, consequences",
    tags: ["architecture", "decision"],
  },
  {
    path: "template/pr-description.md",
    title: "Pull request description",
    description: "Template for pull request descriptions: summary, testing, screenshots, risks",
    tags: ["pull-request"],
  },
  {
    path: "template/postmortem.md",
    title: "Postmortem template",
    description: "Sections of a blameless postmortem document",
    tags: ["incident", "postmortem"],
  },
  {
    path: "template/api-endpoint.md",
    title: "API endpoint design",
    description: "Template to specify a new HTTP endpoint: route, request, response, errors",
    tags: ["api", "rest"],
  },
]

const SCHEMAS: { path: string; id: string; title: string; description: string }[] = [
  {
    path: "schema/order-event.json",
    id: "order-event",
    title: "Order event",
    description: "Event emitted when an order is created, paid or cancelled",
  },
  {
    path: "schema/user-profile.json",
    id: "user-profile",
    title: "User profile",
    description: "Shape of the user profile returned by the accounts API",
  },
]

function agentFile(d: Def) {
  return md(
    { name: d.name, description: d.description || undefined, keywords: d.keywords, ...d.extra },
    d.body ?? `You are ${d.name}. Follow the instructions of the user and report what you changed.`,
  )
}

function commandFile(d: Def) {
  // Commands without a description are plain prompt templates, as many people write them.
  if (!d.description) return `Do the following for $ARGUMENTS: ${d.name.replace(/-/g, " ")}.\n`
  return md({ description: d.description, ...d.extra }, `${d.description}.\n\n$ARGUMENTS`)
}

/** The catalogue as files, relative to a root holding `home/` and `project/`. */
export function files(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const d of CLAUDE_GLOBAL_AGENTS) out[`home/.claude/agents/${d.name}.md`] = agentFile(d)
  for (const d of CLAUDE_LOCAL_AGENTS) out[`project/.claude/agents/${d.name}.md`] = agentFile(d)
  for (const d of OPENCODE_LOCAL_AGENTS) out[`project/.opencode/agent/${d.name}.md`] = agentFile({ ...d, name: d.name })
  for (const d of OPENCODE_GLOBAL_AGENTS) out[`home/.config/opencode/agent/${d.name}.md`] = agentFile(d)
  for (const d of CLAUDE_GLOBAL_COMMANDS) out[`home/.claude/commands/${d.name}.md`] = commandFile(d)
  for (const d of CLAUDE_LOCAL_COMMANDS) out[`project/.claude/commands/${d.name}.md`] = commandFile(d)
  for (const d of OPENCODE_LOCAL_COMMANDS) out[`project/.opencode/command/${d.name}.md`] = commandFile(d)
  for (const d of OPENCODE_GLOBAL_COMMANDS) out[`home/.config/opencode/command/${d.name}.md`] = commandFile(d)
  const skillDir = {
    "claude-global": "home/.claude/skills",
    "claude-local": "project/.claude/skills",
    "opencode-global": "home/.config/opencode/skill",
    "opencode-local": "project/.opencode/skills",
  }
  for (const d of SKILLS)
    out[`${skillDir[d.at]}/${d.name}/SKILL.md`] = md(
      { name: d.name, description: d.description },
      `# ${d.name}\n\nInstructions for ${d.name}.`,
    )
  for (const d of STYLES)
    out[`${d.at === "global" ? "home" : "project"}/.claude/output-styles/${d.name}.md`] = md(
      { name: d.name, description: d.description },
      `Answer in the ${d.name} style.`,
    )
  for (const r of RESOURCES)
    out[`project/.opencode/${r.path}`] = md(
      { title: r.title, description: r.description, tags: r.tags },
      `# ${r.title}\n\n${r.description}.`,
    )
  for (const s of SCHEMAS)
    out[`project/.opencode/${s.path}`] = JSON.stringify(
      { $id: s.id, title: s.title, description: s.description, type: "object", properties: {} },
      null,
      2,
    )
  return out
}

/** Every suggestible entry as `type:name` (resources as `resource:<id>`), for checking the labelled set. */
export function names(): Set<string> {
  const all = new Set<string>()
  for (const d of [
    ...CLAUDE_GLOBAL_AGENTS,
    ...CLAUDE_LOCAL_AGENTS,
    ...OPENCODE_LOCAL_AGENTS,
    ...OPENCODE_GLOBAL_AGENTS,
  ])
    all.add(`agent:${d.name}`)
  for (const d of [
    ...CLAUDE_GLOBAL_COMMANDS,
    ...CLAUDE_LOCAL_COMMANDS,
    ...OPENCODE_LOCAL_COMMANDS,
    ...OPENCODE_GLOBAL_COMMANDS,
  ])
    all.add(`command:${d.name}`)
  for (const d of SKILLS) all.add(`skill:${d.name}`)
  for (const d of STYLES) all.add(`outputStyle:${d.name}`)
  for (const r of RESOURCES) all.add(`resource:${r.path.split("/").pop()!.replace(/\.md$/, "")}`)
  for (const s of SCHEMAS) all.add(`resource:${s.id}`)
  return all
}
