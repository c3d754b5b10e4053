/**
 * Labelled prompts of the FOURTH held-out set (catalogue: heldout4.json — wshobson/agents' agents,
 * glittercowboy/taches-cc-resources' commands, skills and agents and brennercruvinel/CCPlugins' commands in ~/.claude;
 * wshobson/agents' commands and skills in the project's .claude). The prompts were written and committed first
 * (9781a72), before any description of the catalogue was read (only the collections' names, sizes and folder names had
 * been seen); then labelled from the catalogue's names and descriptions as discovery lists them (`type:name`, the one
 * to four entries that fit best), and committed before the matcher was run on this catalogue. Not used while designing
 * or tuning the matcher. Prompts with no label expect no suggestion: the 8 chatter prompts at the end, and 5 real
 * requests that nothing in the catalogue serves (`UNSERVED` in sets.ts).
 */
import type { Labelled } from "../labelled"

export const HELDOUT4: Labelled[] = [
  {
    prompt:
      "why does `pytest tests/test_orders.py` pass locally but fail in CI with ImportError: cannot import name 'OrderStatus'",
    relevant: ["command:debug", "skill:debugging-strategies", "agent:python-pro", "skill:debug-like-expert"],
  },
  {
    prompt: "review my diff before i push",
    relevant: [
      "command:review",
      "agent:code-documentation-code-reviewer",
      "agent:code-review-preshipment",
      "skill:code-review-excellence",
    ],
  },
  {
    prompt: "clean up the project, there's a bunch of debug files and leftover console.logs",
    relevant: ["command:cleanproject"],
  },
  { prompt: "write a commit message for what I staged", relevant: ["command:commit"] },
  {
    prompt: "make a plan for adding multi-tenant support to the saas backend before we touch any code",
    relevant: ["command:create-plan", "skill:create-plans", "agent:api-scaffolding-backend-architect"],
  },
  {
    prompt: "the api p99 latency went from 120ms to 900ms after yesterday's deploy, what happened?",
    relevant: [
      "agent:application-performance-performance-engineer",
      "agent:cicd-automation-devops-troubleshooter",
      "agent:prod-logs-health-check",
      "agent:application-performance-observability-engineer",
    ],
  },
  {
    prompt: "set up prometheus alerts for when the error rate goes over 2%",
    relevant: [
      "skill:prometheus-configuration",
      "agent:application-performance-observability-engineer",
      "skill:slo-implementation",
    ],
  },
  {
    prompt: "add grafana dashboards for the payment service",
    relevant: ["skill:grafana-dashboards", "agent:application-performance-observability-engineer"],
  },
  {
    prompt: "we need distributed tracing across our microservices, opentelemetry probably",
    relevant: [
      "skill:distributed-tracing",
      "agent:application-performance-observability-engineer",
      "agent:application-performance-performance-engineer",
    ],
  },
  {
    prompt: "write a dockerfile for this fastapi app, keep the image small",
    relevant: ["agent:api-scaffolding-fastapi-pro", "agent:cicd-automation-deployment-engineer"],
  },
  {
    prompt: "convert our docker-compose setup to kubernetes manifests",
    relevant: ["skill:k8s-manifest-generator", "agent:cicd-automation-kubernetes-architect"],
  },
  {
    prompt: "terraform module for an s3 bucket with versioning and encryption",
    relevant: ["skill:terraform-module-library", "agent:cicd-automation-terraform-specialist"],
  },
  {
    prompt: "the pods keep getting OOMKilled, how do I figure out the right memory limits",
    relevant: ["agent:cicd-automation-kubernetes-architect", "agent:cicd-automation-devops-troubleshooter"],
  },
  {
    prompt: "migrate the angularjs app to react, where do we even start",
    relevant: ["agent:code-refactoring-legacy-modernizer", "agent:application-performance-frontend-developer"],
  },
  {
    prompt: "upgrade from python 3.8 to 3.12, what's going to break?",
    relevant: ["agent:python-pro", "skill:dependency-upgrade", "agent:code-refactoring-legacy-modernizer"],
  },
  {
    prompt: "add type hints to utils.py and make mypy happy",
    relevant: ["skill:python-type-safety", "agent:python-pro"],
  },
  {
    prompt: "the python service is slow, profile it and tell me where the time goes",
    relevant: [
      "skill:python-performance-optimization",
      "agent:python-pro",
      "agent:application-performance-performance-engineer",
    ],
  },
  {
    prompt: "set up a new python project with uv and ruff",
    relevant: [
      "skill:uv-package-manager",
      "command:python-scaffold",
      "skill:python-project-structure",
      "skill:python-code-style",
    ],
  },
  {
    prompt: "write async code to fetch 500 urls concurrently without hammering the server",
    relevant: ["skill:async-python-patterns", "agent:python-pro"],
  },
  {
    prompt: "build a RAG pipeline over our internal docs with embeddings",
    relevant: [
      "skill:rag-implementation",
      "skill:embedding-strategies",
      "agent:ai-engineer",
      "agent:vector-database-engineer",
    ],
  },
  {
    prompt: "the chatbot keeps making stuff up, how do I reduce hallucinations in the answers",
    relevant: [
      "skill:rag-implementation",
      "agent:ai-engineer",
      "skill:llm-evaluation",
      "skill:prompt-engineering-patterns",
    ],
  },
  {
    prompt: "improve this prompt, the model ignores half the instructions",
    relevant: ["agent:prompt-engineer", "skill:prompt-engineering-patterns"],
  },
  {
    prompt: "fine-tune a small llama model on our support tickets",
    relevant: [
      "command:finetune",
      "agent:llm-finetuning-architect",
      "skill:lora-qlora-recipes",
      "skill:dataset-curation",
    ],
  },
  {
    prompt: "evaluate our LLM app — we have no idea if changes make answers better or worse",
    relevant: ["skill:llm-evaluation"],
  },
  {
    prompt: "design the REST api for a booking system (rooms, reservations, cancellations)",
    relevant: ["skill:api-design-principles", "agent:api-scaffolding-backend-architect"],
  },
  {
    prompt: "add graphql to the node backend",
    relevant: [
      "agent:api-scaffolding-graphql-architect",
      "skill:nodejs-backend-patterns",
      "skill:api-design-principles",
    ],
  },
  {
    prompt: "our postgres query on orders takes 8 seconds, fix it",
    relevant: [
      "skill:sql-optimization-patterns",
      "agent:database-cloud-optimization-database-optimizer",
      "agent:sql-pro",
    ],
  },
  {
    prompt: "design the database schema for a multi-vendor marketplace",
    relevant: [
      "agent:database-cloud-optimization-database-architect",
      "skill:postgresql-table-design",
      "agent:sql-pro",
    ],
  },
  {
    prompt: "write a migration that splits the name column into first_name and last_name without downtime",
    relevant: ["skill:database-migration", "command:sql-migrations"],
  },
  {
    prompt: "set up an event driven architecture with kafka between the order and inventory services",
    relevant: [
      "skill:microservices-patterns",
      "agent:event-sourcing-architect",
      "agent:api-scaffolding-backend-architect",
    ],
  },
  {
    prompt: "implement the saga pattern for the checkout flow",
    relevant: ["skill:saga-orchestration", "agent:event-sourcing-architect", "skill:workflow-orchestration-patterns"],
  },
  {
    prompt: "integrate stripe subscriptions with webhooks",
    relevant: ["skill:stripe-integration", "skill:billing-automation"],
  },
  {
    prompt: "pci compliance — what do we need to change in how we store card data",
    relevant: ["skill:pci-compliance", "agent:backend-development-security-auditor"],
  },
  {
    prompt: "scan the repo for security vulnerabilities",
    relevant: [
      "command:security-scan",
      "command:security-sast",
      "agent:backend-development-security-auditor",
      "command:security-dependencies",
    ],
  },
  {
    prompt: "we got a pentest report with XSS findings, help me fix them",
    relevant: ["agent:frontend-security-coder", "command:xss-scan"],
  },
  {
    prompt: "add SAST to our github actions pipeline",
    relevant: ["skill:sast-configuration", "command:security-sast", "skill:github-actions-templates"],
  },
  {
    prompt: "write a github actions workflow that runs tests on every PR and deploys main to staging",
    relevant: [
      "skill:github-actions-templates",
      "agent:cicd-automation-deployment-engineer",
      "skill:deployment-pipeline-design",
    ],
  },
  {
    prompt: "set up canary deployments with argo rollouts",
    relevant: [
      "agent:cicd-automation-deployment-engineer",
      "skill:gitops-workflow",
      "skill:deployment-pipeline-design",
    ],
  },
  {
    prompt: "write unit tests for the cart reducer",
    relevant: [
      "skill:javascript-testing-patterns",
      "command:test-generate",
      "agent:backend-development-test-automator",
    ],
  },
  {
    prompt: "tdd this: a function that parses durations like '1h30m' into seconds",
    relevant: ["agent:backend-development-tdd-orchestrator", "agent:backend-development-test-automator"],
  },
  {
    prompt: "our jest tests are flaky, the same 3 fail randomly",
    relevant: ["skill:javascript-testing-patterns", "skill:debugging-strategies", "command:test"],
  },
  {
    prompt: "increase test coverage in the billing module",
    relevant: ["command:test-generate", "agent:backend-development-test-automator"],
  },
  {
    prompt: "make the dashboard look less ugly, it's a mess of inconsistent spacing and colors",
    relevant: ["command:design-review", "skill:visual-design-foundations", "agent:ui-designer"],
  },
  {
    prompt: "create a design system with tokens for colors, spacing, typography",
    relevant: [
      "skill:design-system-patterns",
      "agent:design-system-architect",
      "command:design-system-setup",
      "skill:tailwind-design-system",
    ],
  },
  {
    prompt: "the site isn't accessible with a keyboard, fix the focus handling",
    relevant: ["agent:accessibility-expert", "skill:accessibility-compliance", "skill:wcag-audit-patterns"],
  },
  {
    prompt: "build a react native screen for the user profile with an edit form",
    relevant: [
      "skill:react-native-architecture",
      "agent:frontend-mobile-development-mobile-developer",
      "skill:react-native-design",
    ],
  },
  { prompt: "swiftui view for onboarding with 3 pages", relevant: ["agent:ios-developer", "skill:mobile-ios-design"] },
  {
    prompt: "the flutter app janks when scrolling the feed",
    relevant: ["agent:flutter-expert", "agent:frontend-mobile-development-mobile-developer"],
  },
  {
    prompt: "next.js app router: how do I do server actions for the contact form",
    relevant: ["skill:nextjs-app-router-patterns", "agent:application-performance-frontend-developer"],
  },
  {
    prompt: "set up a monorepo with turborepo for the web app and shared packages",
    relevant: ["skill:monorepo-management", "skill:turborepo-caching", "agent:monorepo-architect"],
  },
  {
    prompt: "convert the javascript project to typescript",
    relevant: ["agent:typescript-pro", "skill:typescript-advanced-types"],
  },
  {
    prompt: "explain how this codebase is organized, I just joined the team",
    relevant: ["command:understand", "command:explain-like-senior"],
  },
  {
    prompt: "write docs for the public api endpoints",
    relevant: [
      "agent:api-testing-observability-api-documenter",
      "skill:openapi-spec-generation",
      "agent:reference-builder",
    ],
  },
  {
    prompt: "generate an openapi spec from our express routes",
    relevant: ["skill:openapi-spec-generation", "agent:api-testing-observability-api-documenter"],
  },
  { prompt: "write a README for this repo", relevant: ["command:docs", "agent:code-documentation-docs-architect"] },
  {
    prompt: "create a slash command that runs lint and tests and summarizes failures",
    relevant: ["command:create-slash-command", "skill:create-slash-commands"],
  },
  {
    prompt: "make me a skill for writing our release notes",
    relevant: ["command:create-agent-skill", "skill:create-agent-skills"],
  },
  {
    prompt: "write a hook that blocks commits when there's a TODO in the diff",
    relevant: ["skill:create-hooks", "command:create-hook"],
  },
  { prompt: "build an MCP server that exposes our jira tickets to claude", relevant: ["skill:create-mcp-servers"] },
  {
    prompt: "create a subagent that only reviews SQL migrations",
    relevant: ["command:create-subagent", "skill:create-subagents"],
  },
  {
    prompt: "i keep going back and forth on whether to use a queue here, help me think it through",
    relevant: ["command:research/options", "command:research/technical", "agent:api-scaffolding-backend-architect"],
  },
  {
    prompt: "what are the tradeoffs of microservices vs a modular monolith for a team of 5",
    relevant: [
      "skill:microservices-patterns",
      "agent:comprehensive-review-architect-review",
      "skill:architecture-patterns",
      "command:research/options",
    ],
  },
  {
    prompt: "find all the TODOs and FIXMEs and turn them into a list of tasks",
    relevant: ["command:find-todos", "command:todos-to-issues"],
  },
  {
    prompt: "rust: borrow checker complains about my struct holding a reference, help",
    relevant: ["agent:rust-pro", "skill:memory-safety-patterns"],
  },
  {
    prompt: "write a go worker pool that processes jobs from redis",
    relevant: ["agent:golang-pro", "skill:go-concurrency-patterns"],
  },
  { prompt: "the c++ build takes forever, speed up compile times", relevant: [] },
  {
    prompt: "write a solidity contract for an nft mint with an allowlist",
    relevant: ["skill:nft-standards", "agent:blockchain-developer", "skill:solidity-security"],
  },
  {
    prompt: "audit this defi contract for reentrancy",
    relevant: ["skill:solidity-security", "agent:blockchain-developer"],
  },
  {
    prompt: "reverse engineer this binary, I want to know what the license check does",
    relevant: ["agent:reverse-engineer", "skill:binary-analysis-patterns", "skill:anti-reversing-techniques"],
  },
  {
    prompt: "set up airflow dag for the nightly ETL from postgres to bigquery",
    relevant: ["skill:airflow-dag-patterns", "agent:data-engineer"],
  },
  { prompt: "dbt models for our sales data", relevant: ["skill:dbt-transformation-patterns", "agent:data-engineer"] },
  {
    prompt: "write a business plan / market sizing for a dev tools startup",
    relevant: [
      "skill:market-sizing-analysis",
      "command:business-case",
      "agent:startup-analyst",
      "command:market-opportunity",
    ],
  },
  {
    prompt: "calculate our saas unit economics, CAC LTV churn etc",
    relevant: ["skill:startup-metrics-framework", "agent:startup-analyst"],
  },
  {
    prompt: "incident postmortem for the outage last night",
    relevant: ["skill:postmortem-writing", "agent:incident-responder"],
  },
  {
    prompt: "the on-call runbook for the db failover is outdated, rewrite it",
    relevant: ["skill:incident-runbook-templates", "agent:database-admin"],
  },
  {
    prompt: "refactor this 600-line function into something readable",
    relevant: ["command:refactor", "command:make-it-pretty"],
  },
  { prompt: "find dead code we can delete", relevant: [] },
  { prompt: "undo my last commit but keep the changes", relevant: ["skill:git-advanced-workflows"] },
  { prompt: "rename the master branch to main", relevant: [] },
  { prompt: "resize all the png icons in assets/ to 64x64", relevant: [] },
  { prompt: "what's the difference between == and === again", relevant: [] },
  { prompt: "ok thanks", relevant: [] },
  { prompt: "perfect, that's exactly it", relevant: [] },
  { prompt: "cool", relevant: [] },
  { prompt: "no that's all for now", relevant: [] },
  { prompt: "sounds good 👍", relevant: [] },
  { prompt: "ty!!", relevant: [] },
  { prompt: "hmm ok, makes sense", relevant: [] },
  { prompt: "nice one, thanks for the help", relevant: [] },
]
