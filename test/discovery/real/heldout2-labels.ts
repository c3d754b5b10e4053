/**
 * Labelled prompts of the SECOND held-out set (catalogue: heldout2.json — affaan-m/everything-claude-code's agents,
 * commands and skills and SuperClaude's commands and agents in ~/.claude; Jeffallan/claude-skills and
 * vijaythecoder/awesome-claude-agents in the project's .claude). The prompts were written and committed first
 * (a492829), before anything of the catalogue was read; then labelled from the catalogue's names and descriptions
 * (`type:name`, the one to four entries that fit best), and committed before the matcher was run on this catalogue.
 * Its misses were read later, while the matcher was changed, so it is tuning material now. Prompts with no label
 * expect no suggestion: the 8 chatter prompts at the end, and 5 real requests that nothing in the catalogue serves
 * (`UNSERVED` in sets.ts).
 */
import type { Labelled } from "../labelled"

export const HELDOUT2: Labelled[] = [
  {
    prompt: "the build is failing on CI with a bunch of type errors, get it green again",
    relevant: ["agent:build-error-resolver", "command:build-fix"],
  },
  {
    prompt: "review the diff on this branch before I open the PR",
    relevant: ["command:code-review", "agent:code-reviewer", "skill:code-reviewer"],
  },
  { prompt: "write unit tests for src/billing/invoice.ts", relevant: ["skill:test-master", "command:test-coverage"] },
  {
    prompt: "we're getting intermittent 502s from the gateway, figure out what's going on",
    relevant: ["command:troubleshoot", "agent:root-cause-analyst", "skill:debugging-wizard"],
  },
  {
    prompt: "set up playwright tests for the checkout flow",
    relevant: ["skill:playwright-expert", "skill:e2e-testing", "agent:e2e-runner"],
  },
  {
    prompt: "is this endpoint vulnerable to sql injection?",
    relevant: [
      "agent:security-reviewer",
      "skill:security-reviewer",
      "skill:security-review",
      "agent:security-engineer",
    ],
  },
  {
    prompt: "scan the repo for hardcoded api keys before we open source it",
    relevant: ["agent:opensource-sanitizer", "skill:opensource-pipeline", "agent:opensource-forker"],
  },
  {
    prompt: "refactor this 800-line component into smaller pieces",
    relevant: ["agent:refactoring-expert", "agent:code-simplifier"],
  },
  {
    prompt: "remove dead code and unused exports",
    relevant: ["agent:refactor-cleaner", "command:refactor-clean", "command:cleanup"],
  },
  {
    prompt: "our postgres queries on the orders table are slow, which indexes should we add",
    relevant: ["skill:postgres-pro", "skill:database-optimizer", "skill:sql-pro", "agent:database-reviewer"],
  },
  {
    prompt: "design the database schema for a multi-tenant saas app",
    relevant: ["skill:sql-pro", "agent:database-reviewer"],
  },
  {
    prompt: "write a migration to split the name column into first and last name",
    relevant: ["skill:database-migrations", "agent:database-reviewer"],
  },
  {
    prompt: "build a REST API for managing user subscriptions",
    relevant: ["agent:api-architect", "agent:backend-developer", "skill:api-designer", "skill:api-design"],
  },
  {
    prompt: "create a Dockerfile and docker-compose for local dev",
    relevant: ["skill:docker-patterns", "skill:devops-engineer"],
  },
  {
    prompt: "write terraform for an s3 bucket behind cloudfront",
    relevant: ["skill:terraform-engineer", "skill:devops-engineer"],
  },
  {
    prompt: "set up github actions to run tests and deploy on merge to main",
    relevant: ["skill:devops-engineer", "skill:deployment-patterns", "agent:devops-architect"],
  },
  {
    prompt: "the kubernetes pod keeps getting OOMKilled",
    relevant: ["skill:kubernetes-specialist", "command:troubleshoot"],
  },
  {
    prompt: "write a good commit message for these changes",
    relevant: ["command:git", "command:prp-commit", "skill:git-workflow"],
  },
  { prompt: "create a pull request with a proper description", relevant: ["command:pr", "command:prp-pr"] },
  {
    prompt: "update the README with install instructions",
    relevant: ["agent:doc-updater", "agent:documentation-specialist", "command:update-docs", "agent:technical-writer"],
  },
  {
    prompt: "document the architecture of this service for new hires",
    relevant: [
      "skill:codebase-onboarding",
      "agent:code-archaeologist",
      "agent:documentation-specialist",
      "skill:code-tour",
    ],
  },
  {
    prompt: "the React app re-renders way too much, make it faster",
    relevant: [
      "skill:react-expert",
      "agent:performance-optimizer",
      "agent:react-component-architect",
      "skill:frontend-patterns",
    ],
  },
  { prompt: "make this page usable with a screen reader", relevant: ["agent:a11y-architect", "skill:accessibility"] },
  { prompt: "convert this javascript project to typescript", relevant: ["skill:typescript-pro"] },
  { prompt: "our go service leaks goroutines", relevant: ["skill:golang-pro", "agent:go-reviewer"] },
  {
    prompt: "the borrow checker keeps fighting me on this rust parser",
    relevant: ["agent:rust-build-resolver", "command:rust-build", "skill:rust-engineer"],
  },
  {
    prompt: "add a django model and admin page for blog posts",
    relevant: ["agent:django-backend-expert", "skill:django-expert", "agent:django-expert"],
  },
  {
    prompt: "scaffold a new Next.js app with tailwind",
    relevant: ["skill:nextjs-developer", "agent:react-nextjs-expert", "agent:tailwind-frontend-expert"],
  },
  {
    prompt: "build a flutter screen for the user profile",
    relevant: ["skill:flutter-expert", "skill:dart-flutter-patterns"],
  },
  { prompt: "let's do the discount feature test-first", relevant: ["agent:tdd-guide", "skill:tdd-workflow"] },
  {
    prompt: "plan the implementation of SSO before we start coding",
    relevant: ["command:plan", "agent:planner", "command:prp-plan"],
  },
  { prompt: "break this epic down into tasks", relevant: ["agent:planner", "command:plan", "command:workflow"] },
  {
    prompt: "write a PRD for the new onboarding flow",
    relevant: ["command:plan-prd", "command:prp-prd", "agent:requirements-analyst", "skill:feature-forge"],
  },
  { prompt: "add tracing with opentelemetry to the payment service", relevant: ["skill:monitoring-expert"] },
  {
    prompt: "set up prometheus alerts and a grafana dashboard",
    relevant: ["skill:monitoring-expert", "skill:dashboard-builder"],
  },
  {
    prompt: "write a postmortem for last night's outage",
    relevant: ["skill:sre-engineer", "agent:root-cause-analyst"],
  },
  { prompt: "I need a RAG pipeline over our internal docs", relevant: ["skill:rag-architect"] },
  { prompt: "improve this system prompt, the model keeps ignoring instructions", relevant: ["skill:prompt-engineer"] },
  {
    prompt: "train a classifier on this csv and tell me how good it is",
    relevant: ["agent:ml-data-expert", "skill:mle-workflow"],
  },
  { prompt: "write an etl job that loads events from kafka into bigquery", relevant: ["skill:spark-engineer"] },
  {
    prompt: "our js bundle is huge, cut it down",
    relevant: ["agent:performance-optimizer", "skill:frontend-patterns"],
  },
  { prompt: "integrate stripe checkout for subscriptions", relevant: [] },
  { prompt: "add rate limiting to the public API", relevant: ["skill:api-design", "skill:redis-patterns"] },
  {
    prompt: "implement JWT auth with refresh tokens",
    relevant: ["skill:secure-code-guardian", "skill:security-review"],
  },
  { prompt: "audit our npm dependencies for known vulnerabilities", relevant: ["skill:security-reviewer"] },
  { prompt: "upgrade us from react 17 to 18", relevant: ["skill:react-expert"] },
  {
    prompt: "the spring boot app takes forever to start",
    relevant: ["skill:spring-boot-engineer", "skill:java-architect", "skill:springboot-patterns"],
  },
  {
    prompt: "explain what this code does, I just inherited it",
    relevant: ["command:explain", "agent:code-archaeologist", "agent:code-explorer", "skill:spec-miner"],
  },
  {
    prompt: "onboard me to this codebase, where do I start?",
    relevant: ["skill:codebase-onboarding", "agent:code-archaeologist", "skill:code-tour"],
  },
  {
    prompt: "why is this test flaky? passes locally, fails on CI",
    relevant: ["skill:debugging-wizard", "agent:root-cause-analyst", "command:troubleshoot"],
  },
  { prompt: "set up eslint and prettier with a pre-commit hook", relevant: [] },
  {
    prompt: "benchmark the new json parser against the old one",
    relevant: ["skill:benchmark", "agent:performance-engineer"],
  },
  {
    prompt: "write e2e tests for the login page",
    relevant: ["agent:e2e-runner", "skill:e2e-testing", "skill:playwright-expert"],
  },
  {
    prompt: "how should we split the monolith into services?",
    relevant: ["skill:microservices-architect", "skill:legacy-modernizer", "agent:architect", "agent:system-architect"],
  },
  {
    prompt: "create a landing page for the product launch",
    relevant: ["skill:frontend-design-direction", "agent:frontend-developer"],
  },
  { prompt: "draft release notes for v3.2", relevant: ["skill:github-ops"] },
  {
    prompt: "migrate our CI from jenkins to github actions",
    relevant: ["skill:devops-engineer", "skill:deployment-patterns"],
  },
  {
    prompt: "the python script eats all the memory, profile it",
    relevant: ["agent:Python Performance Expert", "agent:performance-optimizer"],
  },
  { prompt: "add websocket support for live notifications", relevant: ["skill:websocket-engineer"] },
  {
    prompt: "verify the feature actually works before calling it done",
    relevant: ["skill:verification-loop", "agent:self-review"],
  },
  {
    prompt: "the dashboard shows wrong totals, find out why",
    relevant: ["skill:debugging-wizard", "agent:root-cause-analyst", "command:troubleshoot"],
  },
  {
    prompt: "make the UI look more polished",
    relevant: ["skill:make-interfaces-feel-better", "skill:frontend-design-direction"],
  },
  { prompt: "harden the nginx config", relevant: ["skill:secure-code-guardian", "skill:security-reviewer"] },
  {
    prompt: "check this code against the OWASP top 10",
    relevant: ["skill:secure-code-guardian", "agent:security-reviewer", "skill:security-reviewer"],
  },
  { prompt: "our test suite takes 20 minutes, speed it up", relevant: [] },
  {
    prompt: "TypeError: Cannot read properties of undefined (reading 'map') at UserList.tsx:42",
    relevant: ["skill:debugging-wizard", "command:troubleshoot", "skill:react-expert"],
  },
  { prompt: "ugh, tests are red again", relevant: ["command:test", "command:troubleshoot"] },
  { prompt: "pr pls", relevant: ["command:pr", "command:prp-pr"] },
  {
    prompt: "what's our test coverage like? which files have none?",
    relevant: ["command:test-coverage", "command:test"],
  },
  { prompt: "add i18n so we can ship the app in spanish", relevant: [] },
  { prompt: "write a smart contract for an ERC-20 token", relevant: [] },
  {
    prompt: "research how other companies handle feature flags and summarize",
    relevant: ["agent:deep-research", "agent:deep-research-agent", "command:research", "skill:deep-research"],
  },
  { prompt: "save what we did today so I can pick it up tomorrow", relevant: ["command:save-session", "command:save"] },
  { prompt: "thanks, that's perfect", relevant: [] },
  { prompt: "ok", relevant: [] },
  { prompt: "cool, go ahead", relevant: [] },
  { prompt: "nice work!", relevant: [] },
  { prompt: "hmm let me think about it", relevant: [] },
  { prompt: "sounds good to me", relevant: [] },
  { prompt: "no that's all for today", relevant: [] },
  { prompt: "great, thanks a lot", relevant: [] },
]
