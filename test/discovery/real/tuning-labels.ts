/**
 * Labelled prompts of the TUNING set (catalogue: tuning.json — VoltAgent's subagents, wshobson's commands, Anthropic's
 * skills, as installed in ~/.claude). Written for this project in developers' words; the labels name the entries a
 * developer would want suggested (`type:name`), usually the one to three that fit best. The matcher was designed
 * while looking at this set's results. Prompts with no label are chatter and expect no suggestion.
 */
import type { Labelled } from "../labelled"

export const TUNING: Labelled[] = [
  {
    prompt: "can you review the diff on my branch before I merge",
    relevant: ["agent:code-reviewer", "command:workflows/full-review", "command:tools/multi-agent-review"],
  },
  {
    prompt: "users get a 500 from /checkout every few minutes, find the root cause",
    relevant: ["agent:debugger", "agent:error-detective", "command:tools/smart-debug", "command:tools/error-analysis"],
  },
  {
    prompt: "our kubernetes pods keep getting OOMKilled after the last deploy",
    relevant: ["agent:kubernetes-specialist", "agent:devops-incident-responder"],
  },
  {
    prompt: "write a helm chart and manifests to deploy this service to k8s",
    relevant: ["command:tools/k8s-manifest", "agent:kubernetes-specialist"],
  },
  {
    prompt: "this postgres query takes 8 seconds, help me speed it up",
    relevant: ["agent:postgres-pro", "agent:database-optimizer", "agent:sql-pro"],
  },
  {
    prompt: "we need a zero-downtime migration to split the users table",
    relevant: ["command:tools/db-migrate", "agent:database-administrator"],
  },
  {
    prompt: "set up github actions to run the tests and deploy on every merge to main",
    relevant: ["agent:deployment-engineer", "agent:devops-engineer", "command:workflows/workflow-automate"],
  },
  {
    prompt: "audit our npm dependencies for known vulnerabilities",
    relevant: ["command:tools/deps-audit", "agent:dependency-manager"],
  },
  {
    prompt: "upgrade react from 17 to 18 and fix whatever breaks",
    relevant: ["command:tools/deps-upgrade", "agent:react-specialist"],
  },
  {
    prompt: "scan the repo for security issues like sql injection and hardcoded secrets",
    relevant: ["command:tools/security-scan", "agent:security-auditor"],
  },
  {
    prompt: "make the signup form usable with a screen reader",
    relevant: ["agent:accessibility-tester", "command:tools/accessibility-audit"],
  },
  {
    prompt: "write unit tests for the billing module",
    relevant: ["agent:test-automator", "command:tools/test-harness"],
  },
  {
    prompt: "let's do this test-first: write the failing tests before any code",
    relevant: ["command:tools/tdd-red", "command:workflows/tdd-cycle"],
  },
  { prompt: "turn this PDF invoice into a table I can use", relevant: ["skill:pdf"] },
  { prompt: "make a slide deck summarising the Q3 results", relevant: ["skill:pptx"] },
  { prompt: "fill in this excel sheet with formulas for the monthly totals", relevant: ["skill:xlsx"] },
  { prompt: "edit the word document and keep tracked changes on", relevant: ["skill:docx"] },
  { prompt: "generate an art piece with p5.js, something with flow fields", relevant: ["skill:algorithmic-art"] },
  {
    prompt: "build an MCP server that exposes our issue tracker to Claude",
    relevant: ["skill:mcp-builder", "agent:mcp-developer"],
  },
  { prompt: "how do I call the Anthropic API with streaming and tool use from python", relevant: ["skill:claude-api"] },
  {
    prompt: "open the local web app in a browser with playwright and check that the login page works",
    relevant: ["skill:webapp-testing", "agent:ui-ux-tester"],
  },
  {
    prompt: "write a friendly announcement for the team about the new on-call rotation",
    relevant: ["skill:internal-comms"],
  },
  {
    prompt: "our Docker image is 2GB, make it smaller",
    relevant: ["command:tools/docker-optimize", "agent:docker-expert"],
  },
  {
    prompt: "we are spending too much on AWS, find ways to cut the bill",
    relevant: ["command:tools/cost-optimize", "agent:cloud-architect"],
  },
  {
    prompt: "set up prometheus and grafana dashboards for the api",
    relevant: ["command:tools/monitor-setup", "agent:sre-engineer"],
  },
  {
    prompt: "define SLOs and an error budget for the payments service",
    relevant: ["command:tools/slo-implement", "agent:sre-engineer"],
  },
  {
    prompt: "production is down, the site returns 502, what do we do right now",
    relevant: ["command:workflows/incident-response", "agent:devops-incident-responder", "agent:incident-responder"],
  },
  {
    prompt: "this old jquery app needs to move to react, plan the migration",
    relevant: ["agent:legacy-modernizer", "command:workflows/legacy-modernize", "command:tools/code-migrate"],
  },
  {
    prompt: "clean up this messy 800-line function",
    relevant: ["agent:refactoring-specialist", "command:tools/refactor-clean"],
  },
  { prompt: "how much tech debt do we have and what should we fix first", relevant: ["command:tools/tech-debt"] },
  { prompt: "explain what this module does, I'm new to the codebase", relevant: ["command:tools/code-explain"] },
  { prompt: "generate docs from the code", relevant: ["command:tools/doc-generate", "agent:documentation-engineer"] },
  {
    prompt: "write an OpenAPI spec for our REST endpoints",
    relevant: ["agent:api-documenter", "agent:api-designer"],
  },
  {
    prompt: "scaffold a new REST API for orders with FastAPI",
    relevant: ["command:tools/api-scaffold", "agent:fastapi-developer"],
  },
  {
    prompt: "I need a fake payments API so the frontend team can work offline",
    relevant: ["command:tools/api-mock"],
  },
  { prompt: "design the GraphQL schema for our product catalogue", relevant: ["agent:graphql-architect"] },
  {
    prompt: "the go service leaks goroutines under load",
    relevant: ["agent:golang-pro", "agent:performance-engineer"],
  },
  { prompt: "add type-safe generics to this typescript utility", relevant: ["agent:typescript-pro"] },
  { prompt: "build the iOS app screens in SwiftUI", relevant: ["agent:swift-expert"] },
  { prompt: "our flutter app janks when scrolling long lists", relevant: ["agent:flutter-expert"] },
  { prompt: "write a terraform module for the vpc and subnets", relevant: ["agent:terraform-engineer"] },
  {
    prompt: "save where we are so another agent can pick this up tomorrow",
    relevant: ["command:tools/context-save", "agent:context-manager"],
  },
  {
    prompt: "improve this prompt so the model stops inventing fields",
    relevant: ["command:tools/prompt-optimize", "agent:prompt-engineer"],
  },
  {
    prompt: "build a RAG pipeline over our docs with a vector store",
    relevant: ["agent:llm-architect", "agent:ai-engineer"],
  },
  {
    prompt: "train and deploy a churn prediction model",
    relevant: ["command:workflows/ml-pipeline", "agent:ml-engineer", "agent:machine-learning-engineer"],
  },
  {
    prompt: "build an ETL job that loads events from kafka into the warehouse",
    relevant: ["command:tools/data-pipeline", "agent:data-engineer"],
  },
  { prompt: "validate the incoming CSV data and reject bad rows", relevant: ["command:tools/data-validation"] },
  { prompt: "write my standup notes from yesterday's jira tickets", relevant: ["command:tools/standup-notes"] },
  { prompt: "fix github issue #123", relevant: ["command:tools/issue", "command:workflows/smart-fix"] },
  {
    prompt: "our checkout page loads slowly, profile and optimise it end to end",
    relevant: ["command:workflows/performance-optimization", "agent:performance-engineer"],
  },
  {
    prompt: "check whether we're GDPR compliant in how we store user data",
    relevant: ["agent:gdpr-ccpa-compliance", "command:tools/compliance-check", "agent:compliance-auditor"],
  },
  {
    prompt: "we handle patient records, what do we need for HIPAA",
    relevant: ["agent:hipaa-compliance", "command:tools/compliance-check"],
  },
  {
    prompt: "analyze our A/B test results for the new pricing page",
    relevant: ["agent:ab-test-analysis", "agent:data-analyst"],
  },
  { prompt: "set up a branching strategy and merge rules for the team", relevant: ["agent:git-workflow-manager"] },
  { prompt: "create a new skill for claude that formats our changelogs", relevant: ["skill:skill-creator"] },
  { prompt: "make an animated gif for slack celebrating the launch", relevant: ["skill:slack-gif-creator"] },
  { prompt: "design a poster for the meetup", relevant: ["skill:canvas-design"] },
  { prompt: "validate our yaml config files before deploy", relevant: ["command:tools/config-validate"] },
  { prompt: "add a websocket feed for live order updates", relevant: ["agent:websocket-engineer"] },
  { prompt: "integrate stripe payments into checkout", relevant: ["agent:payment-integration"] },
  { prompt: "write the README for this repo", relevant: ["agent:readme-generator"] },
  { prompt: "run a chaos experiment to see if we survive losing a zone", relevant: ["agent:chaos-engineer"] },
  {
    prompt: "apply our brand colours and fonts to this html report",
    relevant: ["skill:brand-guidelines", "skill:theme-factory"],
  },
  {
    prompt: "rewrite this blog post so it doesn't sound AI-written",
    relevant: ["agent:ai-writing-auditor", "agent:content-quality-editor"],
  },
  // chatter
  { prompt: "thanks, that's all for now", relevant: [] },
  { prompt: "ok", relevant: [] },
  { prompt: "great, looks good to me", relevant: [] },
  { prompt: "yes please go ahead", relevant: [] },
  { prompt: "hmm, never mind", relevant: [] },
  { prompt: "cool thanks!", relevant: [] },
  { prompt: "sounds good, continue", relevant: [] },
  { prompt: "perfect", relevant: [] },
]
