import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { tmpdir } from "../fixture"
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

  test("the other settings git runs a program from: trailers, diff/merge tools, man viewers, ssh signing keys, send-email, a submodule's !update", () => {
    const text = [
      '[trailer "sign"]',
      "\tcommand = ./t.sh",
      '[difftool "x"]',
      "\tcmd = ./d.sh",
      '[mergetool "x"]',
      "\tpath = ./m.sh",
      '[man "x"]',
      "\tcmd = ./man.sh",
      '[gpg "ssh"]',
      "\tdefaultKeyCommand = ./k.sh",
      "[sendemail]",
      "\tsmtpServer = ./mail.sh",
      "[core]",
      "\talternateRefsCommand = ./r.sh",
      '[submodule "lib"]',
      "\tupdate = !./u.sh",
      '[submodule "doc"]',
      "\tupdate = rebase",
    ].join("\n")
    expect(SecurityGitConfig.risky(text)).toEqual([
      "trailer.sign.command",
      "difftool.x.cmd",
      "mergetool.x.path",
      "man.x.cmd",
      "gpg.ssh.defaultkeycommand",
      "sendemail.smtpserver",
      "core.alternaterefscommand",
      "submodule.lib.update",
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

describe("SecurityGitConfig.referenced", () => {
  test("included files (any depth, absent or not), the global hooks folder and attributes file", async () => {
    await using dir = await tmpdir({})
    const home = dir.path
    fs.writeFileSync(
      path.join(home, ".gitconfig"),
      [
        "[include]",
        "\tpath = ~/.gitconfig.local",
        '[includeIf "gitdir:~/work/"]',
        '\tpath = "work.inc"',
        "[core]",
        "\thooksPath = ~/.githooks",
        "\tattributesFile = attrs",
      ].join("\n"),
    )
    fs.writeFileSync(path.join(home, "work.inc"), "[include]\n\tpath = deeper/more.inc\n[core]\n\thookspath = .hooks\n")
    const got = SecurityGitConfig.referenced([path.join(home, ".gitconfig"), path.join(home, "absent")], {
      home,
      root: "/repo",
    })
    expect(got.sort()).toEqual(
      [
        path.join(home, ".gitconfig.local"),
        path.join(home, "work.inc"),
        path.join(home, ".githooks") + path.sep,
        path.join(home, "attrs"),
        path.join(home, "deeper/more.inc"),
        "/repo/.hooks" + path.sep,
      ].sort(),
    )
  })
  test("an include cycle ends", async () => {
    await using dir = await tmpdir({})
    const a = path.join(dir.path, "a")
    fs.writeFileSync(a, "[include]\n\tpath = b\n")
    fs.writeFileSync(path.join(dir.path, "b"), "[include]\n\tpath = a\n")
    expect(SecurityGitConfig.referenced([a], { home: dir.path, root: "/r" }).sort()).toEqual(
      [a, path.join(dir.path, "b")].sort(),
    )
  })
})
