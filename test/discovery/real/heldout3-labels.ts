/**
 * Labelled prompts of the THIRD held-out set (catalogue: heldout3.json — rshah515/claude-code-subagents' agents,
 * alirezarezvani/claude-skills' engineering skills, commands and agents and feiskyer/claude-code-settings' commands in
 * ~/.claude; davepoon/buildwithclaude's skills and centminmod/my-claude-code-setup's agents, commands and skills in the
 * project's .claude). The prompts were written and committed first (9685b96), when only the collections' names, sizes
 * and file names had been seen; then labelled from the catalogue's names and descriptions (`type:name`, the one to
 * four entries that fit best), and committed before the matcher was run on this catalogue. Not used while designing
 * or tuning the matcher. Prompts with no label expect no suggestion: the 8 chatter prompts at the end, and 6 real
 * requests that nothing in the catalogue serves (`UNSERVED` in sets.ts).
 */
import type { Labelled } from "../labelled"

export const HELDOUT3: Labelled[] = [
  {
    prompt: "can you figure out why `npm run build` fails with \"Module not found: Can't resolve './utils/date'\"?",
    relevant: ["agent:debugger", "agent:javascript-expert"],
  },
  {
    prompt: "add tests for the retry logic in lib/http/retry.go",
    relevant: ["agent:test-automator", "agent:go-expert", "skill:tdd-guide", "command:tdd"],
  },
  {
    prompt: "the login e2e test fails about 1 run in 5 on CI, help me make it stable",
    relevant: ["agent:e2e-testing-expert", "agent:debugger"],
  },
  { prompt: "rename userSvc to userService everywhere, it's used in like 40 files", relevant: ["agent:refactorer"] },
  {
    prompt: "go through PR #412 and leave review comments",
    relevant: ["command:gh/review-pr", "skill:pr-review-expert", "agent:code-reviewer", "skill:code-reviewer"],
  },
  {
    prompt: "write the changelog for the 2.0 release",
    relevant: [
      "command:changelog",
      "skill:changelog-generator",
      "skill:release-manager",
      "command:documentation/create-release-note",
    ],
  },
  { prompt: "tag v1.4.0 and publish it to npm", relevant: ["skill:release-manager"] },
  {
    prompt: "set up a gitlab pipeline that builds the docker image and pushes it to our registry",
    relevant: ["agent:cicd-pipeline-expert", "command:pipeline", "skill:ci-cd-pipeline-builder", "skill:senior-devops"],
  },
  { prompt: "write a helm chart for the api service", relevant: ["agent:kubernetes-expert", "agent:devops-engineer"] },
  {
    prompt: "our AWS bill doubled last month, where can we cut costs?",
    relevant: ["agent:cloud-cost-optimizer", "agent:aws-infrastructure-expert", "skill:aws-solution-architect"],
  },
  {
    prompt: "check our dependencies for known CVEs",
    relevant: [
      "skill:dependency-auditor",
      "skill:senior-secops",
      "agent:devsecops-engineer",
      "skill:security-pen-testing",
    ],
  },
  { prompt: "add rate limiting to the /login endpoint", relevant: ["skill:senior-backend", "agent:security-auditor"] },
  {
    prompt: "implement refresh tokens for the JWT auth in the express backend",
    relevant: ["skill:senior-backend", "agent:javascript-expert"],
  },
  { prompt: "let users sign in with their Google account", relevant: ["skill:senior-backend"] },
  {
    prompt: "the home page takes 6 seconds to load on mobile, get the lighthouse score up",
    relevant: ["agent:performance-engineer", "skill:senior-frontend", "agent:seo-implementation-expert"],
  },
  {
    prompt: "the signup form is unusable with VoiceOver, fix the a11y problems",
    relevant: ["agent:accessibility-expert", "command:a11y-audit", "skill:senior-frontend"],
  },
  {
    prompt: "convert this class component to hooks",
    relevant: ["agent:react-expert", "skill:senior-frontend", "agent:refactorer"],
  },
  {
    prompt: "build a responsive navbar with tailwind",
    relevant: ["skill:senior-frontend", "agent:ux-design-expert", "agent:ui-components-expert"],
  },
  {
    prompt: "add a dark mode toggle to the settings page",
    relevant: ["skill:senior-frontend", "agent:ui-components-expert"],
  },
  {
    prompt: "write a python script to clean the CSV export: duplicate rows, dates in three formats",
    relevant: ["agent:python-expert", "agent:data-quality-engineer"],
  },
  {
    prompt: "train a simple model that predicts churn from the users table",
    relevant: ["agent:data-scientist", "agent:ml-engineer", "skill:senior-data-scientist"],
  },
  {
    prompt: "build an ETL job that loads click events from kafka into bigquery",
    relevant: [
      "agent:data-engineer",
      "agent:streaming-data-expert",
      "skill:senior-data-engineer",
      "skill:gcp-cloud-architect",
    ],
  },
  {
    prompt: "SQL query for monthly active users per country?",
    relevant: ["skill:sql-database-assistant", "agent:business-intelligence-expert"],
  },
  { prompt: "explain what this regex does: ^(?=.*\\d)(?=.*[a-z]).{8,}$", relevant: [] },
  {
    prompt: "how does the auth middleware in src/server/auth work? walk me through it",
    relevant: ["agent:code-searcher"],
  },
  { prompt: "generate API reference docs from openapi.yaml", relevant: ["agent:api-documenter"] },
  {
    prompt: "add docstrings to the public functions in utils.py",
    relevant: ["agent:code-documenter", "agent:python-expert"],
  },
  {
    prompt: "panic: runtime error: invalid memory address or nil pointer dereference at handler.go:88",
    relevant: ["agent:debugger", "agent:go-expert"],
  },
  {
    prompt: "the node service's heap keeps growing until it crashes, find the leak",
    relevant: ["agent:performance-engineer", "skill:performance-profiler", "agent:debugger", "agent:javascript-expert"],
  },
  {
    prompt: "rust won't compile: cannot borrow `items` as mutable more than once at a time",
    relevant: ["agent:rust-expert"],
  },
  { prompt: "port this python service to go", relevant: ["agent:go-expert", "agent:python-expert"] },
  { prompt: "upgrade the app from Next 13 to Next 15", relevant: ["agent:nextjs-expert", "skill:senior-frontend"] },
  {
    prompt: "bump django from 3.2 to 5.0 and fix whatever breaks",
    relevant: ["agent:django-expert", "agent:python-expert"],
  },
  {
    prompt: "help me plan the next sprint from what's in the backlog",
    relevant: ["command:sprint-plan", "agent:cs-agile-product-owner", "agent:cs-project-manager"],
  },
  {
    prompt: "write user stories for the new onboarding flow",
    relevant: ["command:user-story", "agent:cs-agile-product-owner", "agent:prd-writer"],
  },
  {
    prompt: "draft a PRD for team workspaces",
    relevant: ["command:prd", "agent:prd-writer", "agent:cs-product-manager"],
  },
  {
    prompt: "break this feature into tasks I can hand out to the team",
    relevant: ["command:kiro/task", "agent:project-manager", "agent:cs-agile-product-owner"],
  },
  { prompt: "squash my last 5 commits into one", relevant: [] },
  { prompt: "merge conflict in package-lock.json, what do I do", relevant: [] },
  {
    prompt: "I pushed a secret to main by mistake, how do I get it out of the history",
    relevant: ["skill:env-secrets-manager", "skill:secrets-vault-manager"],
  },
  { prompt: "who changed the pricing logic last and why?", relevant: [] },
  { prompt: "set up a monorepo with turborepo for the web app and the api", relevant: ["skill:monorepo-navigator"] },
  { prompt: "build a node CLI that syncs a folder to s3", relevant: ["agent:javascript-expert"] },
  {
    prompt: "create an MCP server that exposes our internal REST API to claude",
    relevant: ["skill:mcp-server-builder"],
  },
  { prompt: "make me a slash command that runs lint and tests in one go", relevant: ["command:cc/create-command"] },
  { prompt: "write a chrome extension that highlights prices on a page", relevant: ["agent:javascript-expert"] },
  {
    prompt: "build the profile screen in SwiftUI",
    relevant: ["agent:swift-expert", "agent:mobile-developer", "skill:ios-hig-design-guide"],
  },
  {
    prompt: "flutter app crashes on startup on android 14",
    relevant: ["agent:flutter-expert", "agent:mobile-developer", "agent:debugger"],
  },
  {
    prompt: "set up push notifications in our react native app",
    relevant: ["agent:react-native-expert", "agent:mobile-developer"],
  },
  { prompt: "add a graphql endpoint for orders", relevant: ["agent:graphql-expert", "skill:senior-backend"] },
  {
    prompt: "where should we cut the monolith into services?",
    relevant: ["skill:senior-architect", "agent:architect", "agent:tech-lead"],
  },
  {
    prompt: "draft an incident report for saturday's outage: timeline, root cause, follow-ups",
    relevant: ["skill:incident-commander", "agent:incident-commander", "agent:sre"],
  },
  {
    prompt: "prod is down, the database refuses connections!!",
    relevant: ["agent:incident-commander", "agent:debugger", "agent:sre"],
  },
  {
    prompt: "set up prometheus alerts and a grafana dashboard for p99 latency",
    relevant: ["agent:monitoring-expert", "agent:observability-expert", "skill:observability-designer"],
  },
  {
    prompt: "add opentelemetry tracing to the go services",
    relevant: ["agent:observability-expert", "skill:observability-designer", "agent:go-expert"],
  },
  {
    prompt: "write a k6 load test for the checkout api",
    relevant: ["agent:load-testing-expert", "agent:performance-engineer"],
  },
  {
    prompt: "are we GDPR compliant? what would we need to change",
    relevant: ["agent:legal-compliance-expert", "agent:cs-quality-regulatory", "skill:senior-secops"],
  },
  { prompt: "threat model the new file upload feature", relevant: ["skill:senior-security", "agent:security-auditor"] },
  {
    prompt: "run a pentest against staging",
    relevant: ["skill:security-pen-testing", "agent:security-penetration-tester", "agent:security-auditor"],
  },
  { prompt: "bash script that rotates the logs and gzips the old ones", relevant: [] },
  {
    prompt: "this pandas groupby over 10M rows takes forever",
    relevant: ["agent:python-expert", "agent:performance-engineer"],
  },
  {
    prompt: "build a chatbot that answers questions from our docs using embeddings",
    relevant: ["skill:rag-architect", "agent:ai-engineer", "skill:senior-ml-engineer"],
  },
  {
    prompt: "the support bot keeps making up refund policies, rewrite its prompt",
    relevant: ["skill:senior-prompt-engineer", "agent:ai-engineer"],
  },
  {
    prompt: "our unity game stutters when lots of enemies spawn",
    relevant: ["agent:game-developer", "agent:performance-engineer"],
  },
  { prompt: "add a paypal checkout to the order page", relevant: ["agent:payment-expert"] },
  {
    prompt: "write a blog post announcing the new public API",
    relevant: ["agent:technical-writer", "skill:content-research-writer", "agent:copywriter-specialist"],
  },
  {
    prompt: "add meta tags and a sitemap so the marketing site ranks better",
    relevant: ["agent:seo-implementation-expert", "agent:seo-expert", "command:seo-auditor"],
  },
  {
    prompt: "what's the worst tech debt in this codebase and what should we fix first?",
    relevant: ["skill:tech-debt-tracker", "command:tech-debt", "agent:refactorer"],
  },
  {
    prompt: "sanity check the whole feature end to end before I ship it",
    relevant: ["agent:e2e-testing-expert", "agent:test-automator"],
  },
  {
    prompt: "write an ADR on picking postgres over mongodb",
    relevant: ["agent:architecture-documenter", "skill:senior-architect", "skill:database-designer"],
  },
  {
    prompt: "add a kubernetes cronjob for the nightly db backup",
    relevant: ["agent:kubernetes-expert", "agent:disaster-recovery"],
  },
  { prompt: "turn the docs folder into a site with mkdocs", relevant: [] },
  {
    prompt: "show prices in the user's currency and dates in their locale",
    relevant: ["agent:i18n-expert", "agent:localization-engineer"],
  },
  { prompt: "awesome, cheers", relevant: [] },
  { prompt: "yup", relevant: [] },
  { prompt: "that works, appreciate it", relevant: [] },
  { prompt: "lgtm", relevant: [] },
  { prompt: "never mind", relevant: [] },
  { prompt: "haha fair enough", relevant: [] },
  { prompt: "good night!", relevant: [] },
  { prompt: "alright, I'll take it from here", relevant: [] },
]
