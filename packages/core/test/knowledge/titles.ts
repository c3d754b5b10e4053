import type { Resource } from "../../resource/schema"

/** Knowledge-base articles made of titles only, as the resource loader indexes a docs folder with no frontmatter. */
export namespace KnowledgeFixture {
  export function articles(titles: Record<string, string>): Resource.Metadata[] {
    return Object.entries(titles).map(
      ([id, name]) =>
        ({
          id,
          name,
          description: "",
          tags: [],
          type: "knowledge-base",
          domain: "common",
          path: `/kb/${id}.md`,
          relativePath: `.opencode/knowledge-base/${id}.md`,
          references: [],
          referencedBy: [],
          size: 1,
          lastModified: 0,
        }) as unknown as Resource.Metadata,
    )
  }
}
