/**
 * Labelled prompts for the discovery evaluation: what a developer types, and the catalogue entries (see
 * catalogue.ts) a good suggestion list would surface for it, as `type:name` (`resource:<id>` for project resources).
 * Written for this project, in users' words rather than the catalogue's: paraphrases, typos of style, short and long
 * prompts. Prompts with an empty list expect no suggestion at all.
 */
export type Labelled = { prompt: string; relevant: string[] }

export const LABELLED: Labelled[] = [
  // reviews and quality
  {
    prompt: "can you review the changes on my branch before I merge it?",
    relevant: ["agent:code-reviewer", "command:pr-review", "resource:code-review"],
  },
  {
    prompt: "look over this pull request and tell me what's risky",
    relevant: ["command:pr-review", "agent:code-reviewer"],
  },
  {
    prompt: "check the login flow for security holes, I'm worried about SQL injection",
    relevant: ["agent:security-auditor", "resource:security-review"],
  },
  {
    prompt: "are there any leaked secrets or vulnerable packages in this repo?",
    relevant: ["command:security-scan", "skill:dependency-audit", "agent:security-auditor"],
  },
  // debugging
  {
    prompt: "the checkout test keeps failing with a null pointer, help me find out why",
    relevant: ["agent:debugger"],
  },
  {
    prompt: "something broke between v2.3 and v2.4, which commit introduced the regression?",
    relevant: ["skill:git-bisect", "agent:debugger"],
  },
  {
    prompt: "our error rate spiked at 3am, dig through the logs and find when it started",
    relevant: ["skill:log-analysis", "agent:devops-troubleshooter"],
  },
  {
    prompt: "production is down, pods are crashlooping, what do we do",
    relevant: ["agent:incident-responder", "agent:devops-troubleshooter", "resource:incident-process"],
  },
  // tests
  {
    prompt: "write tests for the invoice module, it has none",
    relevant: ["agent:test-automator"],
  },
  {
    prompt: "which modules have the lowest test coverage?",
    relevant: ["command:test-coverage", "agent:test-automator"],
  },
  {
    prompt: "click through the signup page in a browser and check for console errors",
    relevant: ["skill:webapp-testing"],
  },
  // performance and databases
  {
    prompt: "the /orders endpoint takes 4 seconds, profile it and speed it up",
    relevant: ["agent:performance-engineer", "command:perf-profile"],
  },
  {
    prompt: "this postgres query is slow, here's the explain analyze output",
    relevant: ["skill:sql-query-tuning", "agent:database-optimizer"],
  },
  {
    prompt: "which indexes should I add to the users table?",
    relevant: ["agent:database-optimizer", "skill:sql-query-tuning"],
  },
  {
    prompt: "add a column for the shipping address and generate the migration",
    relevant: ["command:db-migrate", "agent:migration-planner"],
  },
  {
    prompt: "we need to rename a column on a 200M-row table without downtime",
    relevant: ["agent:migration-planner", "agent:database-optimizer"],
  },
  { prompt: "run the benchmarks and compare with main", relevant: ["command:benchmark"] },
  // infrastructure
  {
    prompt: "write the kubernetes deployment and service yaml for the worker",
    relevant: ["skill:k8s-manifests", "agent:kubernetes-architect"],
  },
  {
    prompt: "set up a helm chart with autoscaling for the api",
    relevant: ["agent:kubernetes-architect", "skill:k8s-manifests"],
  },
  {
    prompt: "create a terraform module for our S3 buckets",
    relevant: ["skill:terraform-module", "agent:terraform-specialist"],
  },
  { prompt: "deploy this branch to staging", relevant: ["command:deploy-staging", "resource:deployment-runbook"] },
  { prompt: "build the docker image and tell me how big it is", relevant: ["command:docker-build"] },
  {
    prompt: "how do we roll back a bad deploy here?",
    relevant: ["resource:deployment-runbook"],
  },
  {
    prompt: "set up CI and monitoring for the new notifications microservice",
    relevant: ["resource:onboard-service"],
  },
  { prompt: "the API keys expire next week, rotate them", relevant: ["resource:rotate-secrets"] },
  // releases and git
  {
    prompt: "let's ship version 3.1 today",
    relevant: ["agent:release-manager", "resource:ship-release", "resource:release"],
  },
  {
    prompt: "write the release notes for this version from the merged PRs",
    relevant: ["skill:release-notes", "command:changelog"],
  },
  { prompt: "update the changelog since the last tag", relevant: ["command:changelog"] },
  { prompt: "squash my commits into a single one", relevant: ["command:git/squash"] },
  { prompt: "commit the staged changes with a good message", relevant: ["command:commit"] },
  { prompt: "fix issue #412", relevant: ["command:fix-issue"] },
  { prompt: "write a description for my pull request", relevant: ["resource:pr-description"] },
  // frontend
  {
    prompt: "create a new Button component with a story and tests",
    relevant: ["command:scaffold-component", "agent:frontend-developer"],
  },
  {
    prompt: "make the settings page work with a screen reader and keyboard only",
    relevant: ["agent:accessibility-auditor", "resource:accessibility"],
  },
  {
    prompt: "design a nicer landing page, the current one looks generic",
    relevant: ["skill:frontend-design", "agent:ui-ux-designer"],
  },
  {
    prompt: "the react form loses its state when I switch routes",
    relevant: ["agent:frontend-developer"],
  },
  {
    prompt: "move the hard-coded button labels into the translation files",
    relevant: ["skill:i18n-extraction", "command:translate-strings"],
  },
  { prompt: "our hero images are 5MB each, shrink them to webp", relevant: ["skill:image-optimization"] },
  // backend and APIs
  {
    prompt: "design the REST API for the subscriptions service",
    relevant: ["agent:backend-architect", "resource:api-endpoint"],
  },
  { prompt: "generate a typescript client from our openapi spec", relevant: ["skill:openapi-client"] },
  {
    prompt: "document the endpoints of the accounts API",
    relevant: ["agent:api-documenter"],
  },
  { prompt: "our graphql resolvers make hundreds of queries per request", relevant: ["agent:graphql-architect"] },
  {
    prompt: "how do refunds and chargebacks work in our system?",
    relevant: ["agent:payments-expert", "resource:payments-domain"],
  },
  { prompt: "what fields does an order event have?", relevant: ["resource:order-event"] },
  {
    prompt: "should we split the monolith into services? weigh the trade-offs",
    relevant: ["agent:system-architect", "resource:adr", "resource:architecture-overview"],
  },
  {
    prompt: "give me an overview of how our services talk to each other",
    relevant: ["resource:architecture-overview"],
  },
  // languages
  { prompt: "fix the lifetime errors in this rust function", relevant: ["agent:rust-pro"] },
  { prompt: "convert this script to async python with type hints", relevant: ["agent:python-pro"] },
  { prompt: "the generics in this typescript type are wrong", relevant: ["agent:typescript-pro"] },
  { prompt: "a goroutine leaks when the context is cancelled", relevant: ["agent:golang-pro"] },
  { prompt: "write a regex that matches ISO dates", relevant: ["agent:regex-wizard"] },
  { prompt: "write a bash script that backs up the database nightly", relevant: ["skill:shell-scripting"] },
  // documents and data
  { prompt: "fill in this PDF form with the customer's details", relevant: ["skill:pdf-forms"] },
  { prompt: "make an excel spreadsheet of monthly revenue with a pivot table", relevant: ["skill:xlsx-reports"] },
  { prompt: "turn these findings into a slide deck for Monday", relevant: ["skill:pptx-slides"] },
  {
    prompt: "plot the signups per week as a chart",
    relevant: ["skill:data-viz", "agent:data-scientist"],
  },
  { prompt: "this CSV has mixed date formats and duplicate rows, clean it up", relevant: ["skill:csv-cleaning"] },
  {
    prompt: "write the postmortem for yesterday's outage",
    relevant: ["skill:incident-postmortem", "resource:postmortem"],
  },
  { prompt: "improve the README so new contributors can get started", relevant: ["agent:technical-writer"] },
  { prompt: "upgrade all our npm dependencies", relevant: ["agent:dependency-updater", "command:bump-deps"] },
  { prompt: "build an MCP server that exposes our ticket system", relevant: ["skill:mcp-builder"] },
  { prompt: "what did I do yesterday? prepare my standup", relevant: ["command:standup"] },
  {
    prompt: "this old jQuery code needs to move to a modern framework",
    relevant: ["agent:legacy-modernizer"],
  },
  { prompt: "find all the TODO comments and list them", relevant: ["command:todo-sweep"] },
  { prompt: "improve the system prompt of our support chatbot", relevant: ["agent:prompt-engineer"] },
  // styles
  {
    prompt: "explain it to me like a teacher, I want to learn how this works",
    relevant: ["outputStyle:learning", "outputStyle:explanatory"],
  },
  {
    prompt: "summarise the project status for the managers, no jargon",
    relevant: ["outputStyle:executive-summary"],
  },
  {
    prompt: "argue against my plan to rewrite the backend, find the weaknesses",
    relevant: ["outputStyle:devils-advocate"],
  },
  // memory think
  {
    prompt: "memory think add 'security risk of storing tokens in local storage'",
    relevant: ["agent:security-auditor"],
  },
  {
    prompt: "memory think counter 'we should move everything to kubernetes'",
    relevant: ["outputStyle:devils-advocate", "agent:kubernetes-architect"],
  },
  // nothing to suggest
  { prompt: "thanks, that's all for now", relevant: [] },
  { prompt: "hi!", relevant: [] },
  { prompt: "what time is it in Tokyo?", relevant: [] },
  { prompt: "rename the variable x to count in utils.ts", relevant: [] },
  { prompt: "yes, go ahead", relevant: [] },
  { prompt: "what's the capital of Australia", relevant: [] },
]
