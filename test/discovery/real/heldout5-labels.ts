/**
 * Labelled prompts of the FIFTH held-out set (catalogue: heldout5.json — anthropics/claude-plugins-official's agents,
 * commands and skills, thomasvan/claude-code-toolkit's agents, commands and skill, and K-Dense-AI/claude-scientific-skills'
 * skills in ~/.claude; Donchitos/Claude-Code-Game-Studios' agents and skills in the project's .claude). The prompts were
 * written and committed first (29535c4), when only the collections' names, sizes and folder and file names had been
 * seen; then labelled from the catalogue's names and descriptions as discovery lists them (its catalogue, never its
 * ranking; `type:name`, the one to four entries that fit best), and committed before the matcher was run on this
 * catalogue. Written by a helper that had not read the matcher's rules. Prompts with no label expect no suggestion: the
 * 8 chatter prompts at the end, and 6 real requests that nothing in the catalogue serves (`UNSERVED` in sets.ts).
 */
import type { Labelled } from "../labelled"

export const HELDOUT5: Labelled[] = [
  {
    prompt: "review the changes on this branch before I open the PR",
    relevant: ["agent:code-reviewer", "command:pr-review", "agent:reviewer-code", "skill:code-review"],
  },
  { prompt: "commit this, push it and open a pull request", relevant: ["command:commit-commands/commit-push-pr"] },
  {
    prompt: "delete the local branches that were already merged and deleted on github",
    relevant: ["command:commit-commands/clean_gone"],
  },
  {
    prompt: "go over PR 88 and tell me what's wrong with it",
    relevant: ["command:pr-review", "agent:code-reviewer", "agent:reviewer-code"],
  },
  {
    prompt: "are there places where we swallow exceptions and just log them? find them",
    relevant: ["agent:silent-failure-hunter", "agent:reviewer-system"],
  },
  {
    prompt: "this function is 200 lines of nested ifs, simplify it without changing behaviour",
    relevant: ["agent:code-simplifier"],
  },
  {
    prompt: "check if the tests in this PR actually cover the new edge cases",
    relevant: ["agent:pr-test-analyzer", "skill:test-evidence-review"],
  },
  {
    prompt: "the comments in auth.ts are out of date and misleading, clean them up",
    relevant: ["agent:comment-analyzer"],
  },
  {
    prompt: "I need to understand how the checkout flow works end to end before I change it",
    relevant: ["agent:explore"],
  },
  {
    prompt: "plan out how we'd add team workspaces to the app, then build it",
    relevant: ["skill:workflow", "agent:project-coordinator-engineer"],
  },
  {
    prompt: "our type definitions for Order are a mess, how should we model them",
    relevant: ["agent:type-design-analyzer"],
  },
  {
    prompt: "we have a COBOL batch system and management wants it rewritten in java, where do we start",
    relevant: [
      "command:code-modernization/modernize-assess",
      "agent:legacy-analyst",
      "command:code-modernization/modernize-brief",
    ],
  },
  {
    prompt: "pull the business rules out of this old VB6 code into a readable spec",
    relevant: ["agent:business-rules-extractor", "command:code-modernization/modernize-extract-rules"],
  },
  {
    prompt: "upgrade the app from spring boot 2 to 3",
    relevant: ["command:code-modernization/modernize-uplift", "agent:version-delta-analyst", "agent:uplift-migrator"],
  },
  { prompt: "what changed between django 3.2 and 5.0 that will affect us", relevant: ["agent:version-delta-analyst"] },
  {
    prompt: "do a security review of the repo and propose patches for what you find",
    relevant: [
      "skill:claude-security",
      "agent:claude-security",
      "command:code-modernization/modernize-harden",
      "agent:security-auditor",
    ],
  },
  {
    prompt: "is there any SQL injection in the api handlers?",
    relevant: ["agent:security-auditor", "skill:claude-security", "agent:reviewer-system"],
  },
  {
    prompt: "update CLAUDE.md, half of it describes how the project worked six months ago",
    relevant: [
      "skill:claude-md-improver",
      "command:claude-md-management/revise-claude-md",
      "command:generate-claudemd",
    ],
  },
  { prompt: "build an MCP server that exposes our internal tickets API", relevant: ["skill:build-mcp-server"] },
  {
    prompt: "I want a hook that stops claude from ever running rm -rf",
    relevant: ["skill:hook-development", "agent:hook-development-engineer"],
  },
  {
    prompt: "write a claude code plugin with a couple of commands for our team",
    relevant: ["command:plugin-dev/create-plugin", "skill:plugin-structure", "skill:command-development"],
  },
  {
    prompt: "make me a subagent that reviews terraform changes",
    relevant: ["agent:agent-creator", "skill:agent-development"],
  },
  { prompt: "what could I automate in this repo with claude code?", relevant: ["skill:claude-automation-recommender"] },
  {
    prompt: "start a new app with the claude agent sdk in typescript",
    relevant: ["command:agent-sdk-dev/new-sdk-app", "agent:agent-sdk-verifier-ts"],
  },
  { prompt: "keep looping on this task until all the tests pass", relevant: ["command:ralph-loop/ralph-loop"] },
  { prompt: "give me a summary of what we did in this session", relevant: [] },
  {
    prompt: "how do I reach an MCP server running in docker on my laptop from a remote client",
    relevant: ["command:mcp-tunnels/create-docker-mcp-tunnel"],
  },
  {
    prompt: "flash something fun onto my m5stack",
    relevant: ["skill:m5-onboard", "command:cwc-makers/maker-setup", "skill:cardputer-buddy"],
  },
  { prompt: "solve this olympiad geometry problem and write a proper proof", relevant: ["skill:math-olympiad"] },
  {
    prompt: "the enemy AI in our godot game just runs into walls",
    relevant: ["agent:ai-programmer", "agent:godot-specialist", "agent:godot-gdscript-specialist"],
  },
  {
    prompt: "write a gdscript state machine for the player controller",
    relevant: ["agent:godot-gdscript-specialist", "agent:gameplay-programmer"],
  },
  {
    prompt: "our unity game drops to 20 fps on switch, profile it",
    relevant: ["agent:performance-analyst", "skill:perf-profile", "agent:unity-specialist"],
  },
  {
    prompt: "set up replication for the weapon pickup in unreal so clients see it",
    relevant: ["agent:ue-replication-specialist", "agent:network-programmer"],
  },
  {
    prompt: "the in-game economy is broken, players have millions of gold after an hour",
    relevant: ["agent:economy-designer", "skill:balance-check"],
  },
  { prompt: "design a level for the ice cave area", relevant: ["agent:level-designer", "skill:team-level"] },
  {
    prompt: "write patch notes for 1.2.3 from the changelog",
    relevant: ["skill:patch-notes", "agent:community-manager"],
  },
  { prompt: "plan the next two-week sprint from the backlog", relevant: ["skill:sprint-plan", "agent:producer"] },
  { prompt: "we got feedback from the playtest yesterday, write it up", relevant: ["skill:playtest-report"] },
  {
    prompt: "a shader for water with foam at the edges in unity",
    relevant: ["agent:unity-shader-specialist", "agent:technical-artist"],
  },
  {
    prompt: "what's left before we can ship on steam?",
    relevant: ["skill:launch-checklist", "skill:release-checklist", "agent:release-manager"],
  },
  {
    prompt: "localize the game's dialogue into french and german",
    relevant: ["skill:localize", "agent:localization-lead"],
  },
  {
    prompt: "write the backstory and dialogue for the blacksmith npc",
    relevant: ["agent:writer", "agent:narrative-director"],
  },
  {
    prompt: "our combat feels floaty, how do we make hits feel heavier",
    relevant: ["agent:game-designer", "skill:team-combat"],
  },
  { prompt: "triage these 40 bug reports from QA", relevant: ["skill:bug-triage", "agent:qa-lead"] },
  { prompt: "estimate how long the crafting system will take", relevant: ["skill:estimate"] },
  { prompt: "the multiplayer lobby desyncs when someone joins mid-match", relevant: ["agent:network-programmer"] },
  {
    prompt: "write an ansible playbook that installs docker on our ubuntu servers",
    relevant: ["agent:ansible-automation-engineer"],
  },
  {
    prompt: "our go service leaks goroutines under load",
    relevant: ["agent:golang-general-engineer", "agent:golang-general-engineer-compact"],
  },
  { prompt: "add a rest endpoint in express for uploading avatars to s3", relevant: ["agent:nodejs-api-engineer"] },
  { prompt: "the opensearch cluster is red, what do I check", relevant: ["agent:opensearch-elasticsearch-engineer"] },
  {
    prompt: "consumers on the rabbitmq queue keep getting duplicate messages",
    relevant: ["agent:rabbitmq-messaging-engineer"],
  },
  {
    prompt: "set up grafana alerts on our prometheus metrics for disk usage",
    relevant: ["agent:prometheus-grafana-engineer"],
  },
  { prompt: "write a helm chart for the worker deployment", relevant: ["agent:kubernetes-helm-engineer"] },
  { prompt: "convert this kotlin callback code to coroutines", relevant: ["agent:kotlin-general-engineer"] },
  { prompt: "add tests for the laravel controllers", relevant: ["agent:php-general-engineer"] },
  { prompt: "swiftui list with pull to refresh", relevant: ["agent:swift-general-engineer"] },
  {
    prompt: "typescript error: Type 'undefined' is not assignable to type 'string' in 20 places after upgrading",
    relevant: ["agent:typescript-debugging-engineer"],
  },
  {
    prompt: "build a product listing page with a cart for our next.js store",
    relevant: ["agent:nextjs-ecommerce-engineer"],
  },
  {
    prompt: "write docs for the public api, nobody knows how to use it",
    relevant: ["agent:technical-documentation-engineer"],
  },
  {
    prompt: "research how other companies handle feature flags and write me a summary with sources",
    relevant: ["agent:research-coordinator-engineer", "skill:parallel-web", "skill:perplexity-search"],
  },
  {
    prompt: "the peewee models on sqlite are slow when we join orders and customers",
    relevant: ["agent:sqlite-peewee-engineer", "agent:database-engineer"],
  },
  {
    prompt: "load this csv of 20 million rows, pandas runs out of memory",
    relevant: ["skill:polars", "skill:dask", "skill:vaex"],
  },
  {
    prompt: "train a random forest on churn.csv and tell me which features matter",
    relevant: ["skill:scikit-learn", "skill:shap"],
  },
  {
    prompt: "plot the results as a publication-quality figure with error bars",
    relevant: ["skill:scientific-visualization", "skill:matplotlib", "skill:seaborn"],
  },
  { prompt: "fit a bayesian hierarchical model to the sales per store", relevant: ["skill:pymc"] },
  {
    prompt: "analyze this single cell RNA-seq data, cluster the cells and find marker genes",
    relevant: ["skill:scanpy", "skill:scvi-tools"],
  },
  {
    prompt: "compute molecular descriptors for these SMILES strings",
    relevant: ["skill:rdkit", "skill:datamol", "skill:molfeat"],
  },
  {
    prompt: "forecast next quarter's daily traffic from the last two years",
    relevant: ["skill:timesfm-forecasting", "skill:statsmodels", "skill:aeon"],
  },
  {
    prompt: "find recent papers on retrieval augmented generation and summarize them",
    relevant: ["skill:paper-lookup", "skill:literature-review", "skill:research-lookup"],
  },
  { prompt: "help me write the methods section of my paper", relevant: ["skill:scientific-writing"] },
  { prompt: "run this pytorch training on a cloud gpu without setting up servers", relevant: ["skill:modal"] },
  { prompt: "fine-tune a BERT model for classifying support tickets", relevant: ["skill:transformers"] },
  { prompt: "explain why the model predicted churn for this customer", relevant: ["skill:shap"] },
  { prompt: "the numpy simulation is too slow, can it run on the GPU?", relevant: ["skill:optimize-for-gpu"] },
  {
    prompt: "make a flowchart of the deployment process as a mermaid diagram",
    relevant: ["skill:markdown-mermaid-writing"],
  },
  {
    prompt: "test whether the difference between the two groups is significant",
    relevant: ["skill:statistical-analysis", "skill:statsmodels"],
  },
  { prompt: "write a regex that matches ISO 8601 dates", relevant: [] },
  { prompt: "set up nginx as a reverse proxy with https from let's encrypt", relevant: [] },
  { prompt: "our elixir genserver's mailbox keeps growing", relevant: [] },
  { prompt: "write a cron expression for every weekday at 7am", relevant: [] },
  { prompt: "convert the Makefile to a justfile", relevant: [] },
  { prompt: "thanks, that's everything for today", relevant: [] },
  { prompt: "you're a lifesaver 🙏", relevant: [] },
  { prompt: "kk", relevant: [] },
  { prompt: "nope, all good", relevant: [] },
  { prompt: "makes sense now", relevant: [] },
  { prompt: "got it, thanks!", relevant: [] },
  { prompt: "brb", relevant: [] },
  { prompt: "ok I'll sleep on it", relevant: [] },
]
