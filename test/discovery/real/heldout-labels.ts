/**
 * Labelled prompts of the HELD-OUT set (catalogue: heldout.json — 0xfurai's subagents and obra's superpowers skills in
 * ~/.claude, qdhenry's Claude Command Suite in the project's .claude). Written for this project in developers' words,
 * before the matcher was run on this catalogue: the prompts first, without looking at the catalogue; then the labels,
 * from the catalogue's names and descriptions (`type:name`, the one to four entries that fit best). Not used while
 * designing the matcher. Prompts with no label expect no suggestion: chatter, and one real request that nothing in
 * the catalogue serves ("translate the app into german").
 */
import type { Labelled } from "../labelled"

export const HELDOUT: Labelled[] = [
  {
    prompt: "I keep getting 'cannot read property of undefined' in the dashboard, track it down",
    relevant: ["agent:debugger", "command:dev/debug-error", "skill:systematic-debugging"],
  },
  {
    prompt: "please look over my last commit for problems",
    relevant: [
      "command:dev/code-review",
      "agent:code-reviewer-pro",
      "agent:code-auditor",
      "skill:requesting-code-review",
    ],
  },
  {
    prompt: "bump all our dependencies to latest and make sure nothing breaks",
    relevant: ["command:setup/modernize-deps", "agent:dependency-analyzer"],
  },
  {
    prompt: "plan out how we'd build a notifications feature before writing any code",
    relevant: ["skill:writing-plans", "skill:brainstorming"],
  },
  { prompt: "brainstorm some approaches for offline sync in the mobile app", relevant: ["skill:brainstorming"] },
  {
    prompt: "write a changelog entry for this release",
    relevant: ["command:deploy/add-changelog", "agent:release-manager"],
  },
  {
    prompt: "prepare the 2.0 release: version bump, tag, notes",
    relevant: ["command:deploy/prepare-release", "agent:release-manager"],
  },
  {
    prompt: "roll back yesterday's deploy, it broke payments",
    relevant: ["command:deploy/rollback-deploy", "agent:release-manager"],
  },
  { prompt: "set up CI for this repo", relevant: ["command:deploy/ci-setup", "agent:deployment-engineer"] },
  { prompt: "dockerize the app", relevant: ["command:deploy/containerize-application", "agent:docker-expert"] },
  {
    prompt: "deploy this to kubernetes",
    relevant: ["command:deploy/setup-kubernetes-deployment", "agent:kubernetes-expert"],
  },
  {
    prompt: "our API is slow under load, run a load test and find the bottlenecks",
    relevant: ["command:test/setup-load-testing", "agent:performance-engineer"],
  },
  {
    prompt: "add caching to the product listing endpoint",
    relevant: ["command:performance/implement-caching-strategy"],
  },
  {
    prompt: "write end-to-end tests for the checkout flow",
    relevant: ["command:test/e2e-setup", "agent:cypress-expert", "agent:playwright-expert"],
  },
  {
    prompt: "increase test coverage in the auth package",
    relevant: ["command:test/test-coverage", "agent:test-engineer", "command:test/write-tests"],
  },
  { prompt: "write the failing test first, then the fix", relevant: ["skill:test-driven-development"] },
  {
    prompt: "check the code for OWASP vulnerabilities",
    relevant: ["agent:owasp-top10-expert", "command:security/security-audit", "agent:security-auditor"],
  },
  {
    prompt: "harden the authentication: add rate limiting and 2FA",
    relevant: [
      "command:security/security-hardening",
      "command:setup/setup-rate-limiting",
      "command:security/add-authentication-system",
    ],
  },
  { prompt: "create a REST endpoint for uploading avatars in express", relevant: ["agent:express-expert"] },
  { prompt: "the rails app has N+1 queries everywhere", relevant: ["agent:rails-expert"] },
  {
    prompt: "help me structure a django project with celery tasks",
    relevant: ["agent:django-expert", "agent:celery-expert"],
  },
  { prompt: "write a redis caching layer for sessions", relevant: ["agent:redis-expert"] },
  {
    prompt: "migrate our mongodb collections to add a field to every document",
    relevant: ["agent:mongodb-expert", "command:setup/create-database-migrations"],
  },
  { prompt: "design the database schema for a booking system", relevant: ["command:setup/design-database-schema"] },
  {
    prompt: "write a graphql resolver for comments with pagination",
    relevant: ["agent:graphql-expert", "command:setup/implement-graphql-api", "agent:graphql-architect"],
  },
  { prompt: "build a vue component for the settings page", relevant: ["agent:vue-expert"] },
  { prompt: "convert the class components to react hooks", relevant: ["agent:react-expert", "agent:react-pro"] },
  {
    prompt: "our next.js pages are slow to render, improve SSR performance",
    relevant: ["agent:nextjs-expert", "agent:nextjs-pro"],
  },
  { prompt: "style the landing page with tailwind", relevant: ["agent:tailwind-expert"] },
  { prompt: "fix the layout on mobile screens, it's not responsive", relevant: ["agent:css-expert"] },
  { prompt: "write a spring boot service for order processing", relevant: ["agent:spring-boot-expert"] },
  { prompt: "implement a kafka consumer in java", relevant: ["agent:kafka-expert", "agent:java-expert"] },
  { prompt: "write a rust CLI that parses logs", relevant: ["agent:rust-expert", "agent:rust-pro"] },
  {
    prompt: "optimise this python data processing script, it's too slow",
    relevant: ["agent:python-expert", "agent:python-pro"],
  },
  {
    prompt: "analyse the sales data in a pandas notebook",
    relevant: ["agent:pandas-expert", "agent:data-scientist"],
  },
  { prompt: "add elasticsearch full-text search to the catalogue", relevant: ["agent:elasticsearch-expert"] },
  { prompt: "write ansible playbooks to provision the servers", relevant: ["agent:ansible-expert"] },
  {
    prompt: "create terraform for an s3 bucket behind cloudfront",
    relevant: ["agent:terraform-expert", "agent:terraform-specialist"],
  },
  { prompt: "set up nginx as a reverse proxy with TLS", relevant: ["agent:network-engineer"] },
  {
    prompt: "document the architecture of this repo",
    relevant: ["command:docs/create-architecture-documentation"],
  },
  {
    prompt: "generate API documentation",
    relevant: ["command:docs/generate-api-documentation", "command:docs/doc-api", "agent:api-documenter"],
  },
  { prompt: "write onboarding docs for new developers", relevant: ["command:docs/create-onboarding-guide"] },
  {
    prompt: "split this big task across parallel subagents",
    relevant: [
      "skill:dispatching-parallel-agents",
      "command:spec-workflow/parallel-tasks",
      "skill:subagent-driven-development",
    ],
  },
  {
    prompt: "execute the implementation plan we wrote yesterday step by step",
    relevant: ["skill:executing-plans", "skill:subagent-driven-development"],
  },
  {
    prompt: "I'm done with this branch, wrap it up and merge it",
    relevant: ["skill:finishing-a-development-branch"],
  },
  {
    prompt: "work on this in a separate git worktree so main stays clean",
    relevant: ["skill:using-git-worktrees"],
  },
  {
    prompt: "before you say it's fixed, actually run the tests and show me",
    relevant: ["skill:verification-before-completion"],
  },
  { prompt: "I got review comments on my PR, help me address them", relevant: ["skill:receiving-code-review"] },
  { prompt: "refactor the payment module without changing behaviour", relevant: ["command:dev/refactor-code"] },
  { prompt: "find dead code and unused exports", relevant: ["command:dev/refactor-code"] },
  { prompt: "clean up old merged git branches", relevant: ["command:dev/clean-branches"] },
  { prompt: "create a sprint plan from the backlog", relevant: ["command:team/sprint-planning"] },
  {
    prompt: "turn this feature idea into user stories with acceptance criteria",
    relevant: ["agent:product-manager", "agent:task-decomposer"],
  },
  { prompt: "translate the app into german", relevant: [] },
  { prompt: "set up error monitoring with sentry", relevant: ["command:setup/setup-monitoring-observability"] },
  {
    prompt: "write a websocket chat server in node",
    relevant: ["agent:websocket-expert", "agent:nodejs-expert"],
  },
  { prompt: "flutter app: add push notifications", relevant: ["agent:flutter-expert"] },
  { prompt: "build an android screen with jetpack compose", relevant: ["agent:android-expert"] },
  {
    prompt: "write swift code for the ios onboarding screens",
    relevant: ["agent:ios-expert", "agent:swift-expert", "agent:swiftui-expert"],
  },
  {
    prompt: "our svelte store isn't updating the UI",
    relevant: ["agent:svelte-expert", "command:svelte/svelte:debug", "agent:svelte-development"],
  },
  {
    prompt: "write a cloudflare worker that rewrites URLs",
    relevant: ["command:dev/cloudflare-worker", "skill:Cloudflare Manager"],
  },
  {
    prompt: "estimate the risk of this architecture change",
    relevant: [
      "command:dev/architecture-scenario-explorer",
      "command:team/architecture-review",
      "agent:architect-reviewer",
    ],
  },
  // chatter
  { prompt: "thank you!", relevant: [] },
  { prompt: "ok cool", relevant: [] },
  { prompt: "that's all, thanks", relevant: [] },
  { prompt: "yep", relevant: [] },
  { prompt: "good night", relevant: [] },
  { prompt: "no, that's fine", relevant: [] },
  { prompt: "awesome, works now", relevant: [] },
  { prompt: "lol ok", relevant: [] },
]
