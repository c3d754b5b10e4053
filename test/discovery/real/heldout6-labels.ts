/**
 * Labelled prompts of the SIXTH held-out set (catalogue: heldout6.json — melodic-software/claude-code-plugins' agents,
 * commands and skills and EveryInc/compound-engineering-plugin's skills in ~/.claude; jezweb/claude-skills' skills in
 * the project's .claude). The prompts were written first and saved, when only the collections' names, sizes and folder
 * and file names had been seen; then labelled from the catalogue's names and descriptions (`type:name`, the one to four
 * entries that fit best; a skill whose frontmatter names it otherwise than its folder, "Cloudflare D1 Database" for
 * cloudflare-d1, under that name), and committed before the matcher was run on this catalogue. Written by a helper that
 * had not read the matcher's rules (`match.ts`, `lexicon.ts`, `keywords.ts`) nor any ranking output. Prompts with no
 * label expect no suggestion: the 8 chatter prompts at the end, and 5 real requests that nothing in the catalogue serves
 * (`UNSERVED` in sets.ts).
 */
import type { Labelled } from "../labelled"

export const HELDOUT6: Labelled[] = [
  { prompt: "my commits don't show as verified on github, set up gpg signing", relevant: ["skill:gpg-signing"] },
  {
    prompt: "I use one gpg key for work repos and another for personal ones, make git pick the right one automatically",
    relevant: ["skill:gpg-multi-key", "skill:gpg-signing"],
  },
  {
    prompt: "windows people on the team keep committing CRLF line endings, sort that out for the repo",
    relevant: ["skill:line-endings"],
  },
  {
    prompt: "write a commit message for what's staged",
    relevant: ["skill:ce-commit", "skill:git-commit", "command:melodic-software/commit"],
  },
  {
    prompt: "commit this, push it and open a PR",
    relevant: ["skill:ce-commit-push-pr", "command:tac/pull-request"],
  },
  {
    prompt: "go through the review comments on my PR and fix what they asked for",
    relevant: ["skill:ce-resolve-pr-feedback"],
  },
  { prompt: "watch my PR until CI goes green and fix whatever breaks", relevant: ["skill:ce-babysit-pr"] },
  { prompt: "when did the login redirect break? dig through the git history", relevant: ["agent:history-reviewer"] },
  {
    prompt: "search our github issues for anything about the flaky upload test",
    relevant: ["command:git/search-issues", "skill:github-issues", "agent:issue-researcher"],
  },
  {
    prompt: "set up a separate worktree so I can do the hotfix without stashing my stuff",
    relevant: ["skill:ce-worktree", "skill:git-worktree-setup"],
  },
  { prompt: "add a hook so claude runs prettier after every file it edits", relevant: ["skill:hook-management"] },
  {
    prompt: "something's off with the permissions in my .claude/settings.json, can you check it",
    relevant: [
      "agent:settings-auditor",
      "command:claude-ecosystem/audit-settings",
      "skill:permission-management",
      "skill:settings-management",
    ],
  },
  {
    prompt: "write a new skill that generates release notes from merged PRs",
    relevant: ["skill:skill-development", "command:claude-ecosystem/create-skill"],
  },
  {
    prompt: "make a slash command that runs our database migration checklist",
    relevant: ["skill:command-development"],
  },
  {
    prompt: "my custom subagents aren't getting picked up, check what's wrong with them",
    relevant: ["agent:agent-auditor", "command:claude-ecosystem/audit-agents", "skill:subagent-development"],
  },
  { prompt: "connect the postgres MCP server to claude code", relevant: ["skill:mcp-integration"] },
  {
    prompt: "show the git branch and the model name in my status line",
    relevant: ["skill:status-line-customization"],
  },
  {
    prompt: "this system prompt for our support bot is way too vague, improve it",
    relevant: [
      "agent:prompt-improver",
      "command:claude-ecosystem/improve-prompt",
      "skill:prompt-improvement",
      "skill:system-prompt-engineering",
    ],
  },
  {
    prompt: "CLAUDE.md is 800 lines and contradicts itself, clean it up",
    relevant: [
      "agent:memory-auditor",
      "command:claude-ecosystem/audit-memory",
      "skill:memory-management",
      "skill:conditional-docs-setup",
    ],
  },
  {
    prompt: "is there a known claude code bug where it ignores the sandbox settings? search their issue tracker",
    relevant: ["agent:claude-code-issue-researcher", "command:claude-ecosystem/search-claude-issues"],
  },
  {
    prompt: "get a second opinion from gemini on this refactor plan",
    relevant: ["agent:gemini-second-opinion", "command:google-ecosystem/gemini-second-opinion"],
  },
  {
    prompt: "the monorepo is too big for your context, have gemini cli scan all of it and report back",
    relevant: [
      "agent:gemini-bulk-analyzer",
      "command:google-ecosystem/gemini-explore",
      "agent:gemini-deep-explorer",
      "skill:gemini-exploration-patterns",
    ],
  },
  {
    prompt: "write a custom gemini cli command for running our test suite",
    relevant: [
      "skill:gemini-command-development",
      "skill:toml-command-builder",
      "command:google-ecosystem/build-toml-command",
    ],
  },
  {
    prompt: "give my diff a once-over before I push",
    relevant: ["agent:code-reviewer", "command:code-quality/review", "skill:code-reviewing", "skill:ce-code-review"],
  },
  {
    prompt: "the csv importer throws KeyError on some rows, help me track it down",
    relevant: ["agent:debugger", "command:code-quality/debug", "skill:ce-debug"],
  },
  { prompt: "lint all the markdown in docs/", relevant: ["command:code-quality/lint-md", "skill:markdown-linting"] },
  {
    prompt: "write an ADR for switching service-to-service calls from REST to gRPC",
    relevant: ["command:enterprise-architecture/adr-create", "skill:adr-management"],
  },
  {
    prompt: "we want to break the monolith into services, what's the gap between where we are and where we need to be",
    relevant: ["skill:gap-analysis", "agent:migration-explorer"],
  },
  {
    prompt: "document this system's architecture for the new hires",
    relevant: [
      "agent:architecture-documenter",
      "command:enterprise-architecture/ea-document",
      "skill:architecture-documentation",
    ],
  },
  {
    prompt: "draw a sequence diagram of the oauth login flow",
    relevant: [
      "agent:diagram-generator",
      "command:visualization/visualize",
      "agent:code-visualizer",
      "command:visualization/visualize-code",
    ],
  },
  {
    prompt: "make a plantuml class diagram of the models folder",
    relevant: ["command:visualization/visualize-code", "agent:code-visualizer", "skill:plantuml-syntax"],
  },
  {
    prompt: "my windows laptop has been crawling since the last update, figure out why",
    relevant: ["agent:diagnostician", "command:windows-diagnostics/diagnose", "skill:system-diagnostics"],
  },
  {
    prompt: "plan the CSV export for reports and then build it",
    relevant: ["skill:ce-plan", "skill:ce-work", "command:tac/feature", "command:tac/implement"],
  },
  {
    prompt: "the checkout e2e tests are failing, get them passing again",
    relevant: ["command:tac/resolve-failed-e2e-test", "agent:e2e-test-resolver"],
  },
  {
    prompt: "is this issue a bug, a feature or a chore?",
    relevant: ["command:tac/classify-issue", "agent:issue-classifier"],
  },
  {
    prompt: "let's brainstorm ways to cut drop-off during onboarding",
    relevant: ["skill:ce-ideate", "skill:ce-brainstorm"],
  },
  { prompt: "write up a handoff so someone else can pick this up tomorrow", relevant: ["skill:ce-handoff"] },
  {
    prompt: "open the signup page in a real browser and tell me what breaks",
    relevant: ["skill:ce-test-browser", "skill:ce-dogfood"],
  },
  { prompt: "run the iOS app in the simulator and test the settings screen", relevant: ["skill:ce-test-xcode"] },
  { prompt: "this file is way overcomplicated, simplify it", relevant: ["skill:ce-simplify-code"] },
  {
    prompt: "hack together a quick prototype of the drag and drop board so we can try it",
    relevant: ["skill:ce-prototype"],
  },
  {
    prompt: "read my design doc and poke holes in it before I send it to the team",
    relevant: ["skill:ce-doc-review", "skill:ce-pov"],
  },
  {
    prompt: "write down what we learned fixing that race condition so nobody hits it again",
    relevant: ["skill:ce-compound"],
  },
  {
    prompt: "store user uploads in R2 and hand out signed URLs for downloads",
    relevant: ["skill:Cloudflare R2 Object Storage"],
  },
  { prompt: "add a captcha to the signup form, the site runs on cloudflare", relevant: ["skill:cloudflare-turnstile"] },
  {
    prompt: "set up drizzle with D1 in the worker",
    relevant: ["skill:drizzle-orm-d1", "skill:Cloudflare D1 Database"],
  },
  {
    prompt: "stream chat answers from openai into the react UI with the vercel ai sdk",
    relevant: ["skill:AI SDK UI", "skill:AI SDK Core"],
  },
  { prompt: "add clerk auth to the next.js app", relevant: ["skill:clerk-auth"] },
  {
    prompt: "our form validation is a mess, redo it with react-hook-form and zod",
    relevant: ["skill:react-hook-form-zod"],
  },
  { prompt: "cache the API calls and refetch when the window regains focus", relevant: ["skill:tanstack-query"] },
  {
    prompt: "upgrade us from tailwind 3 to v4, we use shadcn",
    relevant: ["skill:Tailwind v4 + shadcn/ui Stack"],
  },
  {
    prompt: "scrape the competitors' pricing pages into markdown",
    relevant: ["skill:Firecrawl Web Scraper", "skill:Cloudflare Browser Rendering"],
  },
  {
    prompt: "send the welcome emails from a background queue instead of in the request, we're on workers",
    relevant: ["skill:Cloudflare Queues", "skill:Cloudflare Email Routing"],
  },
  { prompt: "run a cleanup job every night at 2am on cloudflare", relevant: ["skill:Cloudflare Cron Triggers"] },
  {
    prompt: "add semantic search over our docs using embeddings",
    relevant: ["skill:Cloudflare Vectorize", "skill:google-gemini-embeddings"],
  },
  {
    prompt: "we're prop drilling the cart through six components, give it a proper store",
    relevant: ["skill:zustand-state-management"],
  },
  {
    prompt: "let users chat in rooms over websockets with the room state kept on cloudflare",
    relevant: ["skill:cloudflare-durable-objects"],
  },
  {
    prompt: "connect the worker to our existing postgres database without it being slow",
    relevant: ["skill:Cloudflare Hyperdrive"],
  },
  // Real requests that nothing in the catalogue serves (UNSERVED in sets.ts).
  { prompt: "upgrade the django app from 3.2 to 4.2", relevant: [] },
  { prompt: "write a terraform module for an s3 bucket with versioning and lifecycle rules", relevant: [] },
  { prompt: "the recyclerview in our android app stutters when scrolling", relevant: [] },
  { prompt: "set up horizontal pod autoscaling for the api deployment on kubernetes", relevant: [] },
  { prompt: "convert this jquery plugin to plain javascript", relevant: [] },
  // Chatter: asks for nothing.
  { prompt: "cool, that worked", relevant: [] },
  { prompt: "ok makes sense, thanks!", relevant: [] },
  { prompt: "nah leave it as it is", relevant: [] },
  { prompt: "perfect 👍", relevant: [] },
  { prompt: "calling it a day, cheers", relevant: [] },
  { prompt: "appreciate the help", relevant: [] },
  { prompt: "lol yeah that was dumb of me", relevant: [] },
  { prompt: "no more questions", relevant: [] },
]
