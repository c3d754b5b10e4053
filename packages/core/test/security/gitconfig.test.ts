import { describe, expect, test } from "bun:test"
import { SecurityGitConfig } from "../../security/gitconfig"

describe("SecurityGitConfig.risky", () => {
  test("settings that run a program, in any spelling of their section", () => {
    const text = [
      "[core]",
      "\trepositoryformatversion = 0",
      "\tFSMonitor = ./watch.sh",
      '[filter "lfs"]',
      "\tsmudge = git-lfs smudge %f",
      "[diff.pdf]",
      "\ttextconv = pdftotext",
      '[includeIf "gitdir:~/work/"]',
      "\tpath = ~/work.gitconfig",
      "[pager] log = less",
      '[remote "origin"]',
      "\turl = git@example.com:x.git",
      "\tuploadpack = ./evil",
    ].join("\n")
    expect(SecurityGitConfig.risky(text)).toEqual([
      "core.fsmonitor",
      "filter.lfs.smudge",
      "diff.pdf.textconv",
      "includeif.gitdir:~/work/.path",
      "pager.log",
      "remote.origin.uploadpack",
    ])
  })

  test("a shell alias is one, a plain alias is not; ordinary settings and comments are none", () => {
    expect(SecurityGitConfig.risky('[alias]\n\tup = !sh x.sh\n\tst = status\n\tq = "!echo hi"\n')).toEqual([
      "alias.up",
      "alias.q",
    ])
    expect(
      SecurityGitConfig.risky("# core.fsmonitor = x\n[user]\n\tname = me\n[core]\n\tbare = false\n; pager = x\n"),
    ).toEqual([])
    // A key of the same name in another section is not the setting.
    expect(SecurityGitConfig.risky('[user]\n\tpager = x\n[branch "main"]\n\teditor = x\n')).toEqual([])
  })
})
