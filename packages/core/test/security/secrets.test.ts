import { describe, expect, test } from "bun:test"
import { SecuritySecrets } from "../../security/secrets"

const ids = (text: string) => SecuritySecrets.find(text).map((m) => m.id)

describe("SecuritySecrets", () => {
  const samples: [string, string][] = [
    ["AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"],
    ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-access-key"],
    ["ghp_" + "a1".repeat(18), "github-token"],
    ["github_pat_" + "A1b2".repeat(6), "github-fine-grained-token"],
    ["glpat-" + "x1Y2".repeat(5), "gitlab-token"],
    ["xoxb-1234567890-abcdefghij", "slack-token"],
    ["https://hooks.slack.com/services/T0001/B0001/XXXXYYYY", "slack-webhook"],
    ["sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"],
    ["AIza" + "SyA1234567890abcdefghijklmnopqrstuv", "google-api-key"],
    ["sk-ant-api03-" + "abcDEF123456".repeat(3), "anthropic-key"],
    ["sk-proj-" + "abcDEF123456".repeat(3), "openai-key"],
    ["npm_" + "a1B2c3D4e5".repeat(3) + "f6G7h8", "npm-token"],
    ["hf_" + "aBcDeFgHiJ".repeat(3) + "kLmN", "huggingface-token"],
    ["SG." + "a".repeat(22) + "." + "b".repeat(43), "sendgrid-key"],
    ["-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "private-key"],
    ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"],
    ["DefaultEndpointsProtocol=https;AccountKey=" + "a".repeat(86) + "==", "azure-storage-key"],
    ["postgres://app:hunter2@db.internal/prod", "url-credentials"],
  ]
  for (const [text, id] of samples) test(`finds ${id}`, () => expect(ids(`value: ${text} end`)).toEqual([id]))

  test("an unterminated private key is protected to the end", () => {
    const text = "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blb\nmore"
    const [m] = SecuritySecrets.find(text)
    expect(text.slice(m.start, m.end)).toContain("more")
  })
  test("placeholders, words and identifiers are not secrets", () => {
    expect(ids("mongodb://user:password@host `mongodb://${string}:${string}@${string}` https://a:<token>@x")).toEqual(
      [],
    )
    expect(ids("task-force ask-me risk_live_x SKIPPED AKIAshort eyJ")).toEqual([])
    expect(ids("the_ghp_prefix_inside_a_word_" + "a1".repeat(20))).toEqual([])
  })
  test("the match covers only the secret, not its label", () => {
    const text = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    const [m] = SecuritySecrets.find(text)
    expect(text.slice(m.start, m.end)).toBe("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
  })

  test("secrets are found at the very start and end of a text, and beside non-ASCII characters", () => {
    const key = "AKIAIOSFODNN7EXAMPLE"
    expect(SecuritySecrets.find(key)).toEqual([{ start: 0, end: 20, id: "aws-access-key-id" }])
    expect(SecuritySecrets.find(`é${key}`)).toEqual([{ start: 1, end: 21, id: "aws-access-key-id" }])
    expect(SecuritySecrets.find(`😀${key}😀`)).toEqual([{ start: 2, end: 22, id: "aws-access-key-id" }])
    expect(ids("x://u:hunter2@h")).toEqual(["url-credentials"])
    // Code units above 127 share the prefix table with ASCII ones (Á is 0xC1, A is 0x41): they must not match.
    expect(ids(`ÁKIAIOSFODNN7EXAMPLE ${"\u0141"}KIAIOSFODNN7EXAMPLE ${"\u01ebh"}p_${"a1".repeat(18)}`)).toEqual([])
  })
  test("when a pattern fails at a position, a later pattern with an overlapping prefix is tried", () => {
    // `sk-ant-` is too short for the Anthropic format but long enough for the OpenAI one.
    expect(ids(`key sk-ant-${"a1B2".repeat(4)}x`)).toEqual(["openai-key"])
    expect(ids(`key sk-ant-api03-${"a1B2".repeat(5)}`)).toEqual(["anthropic-key"])
    // A failed candidate does not hide one that starts inside it.
    expect(ids(`ghp_short ghp_${"a1".repeat(18)}`)).toEqual(["github-token"])
  })

  test("mask replaces each secret by a marker naming its format and keeps everything else", () => {
    const key = "AKIAIOSFODNN7EXAMPLE"
    expect(SecuritySecrets.mask(`a ${key} b ${key}`)).toBe(
      "a [REDACTED: aws-access-key-id] b [REDACTED: aws-access-key-id]",
    )
    expect(SecuritySecrets.mask("nothing secret here")).toBe("nothing secret here")
    expect(SecuritySecrets.mask("")).toBe("")
  })
})
