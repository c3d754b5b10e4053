import { describe, expect, test } from "bun:test"
import fs from "fs"
import path from "path"
import { SecurityAccess } from "../../security/access"
import { SecurityConfig } from "../../security/config"
import { SecurityMcp } from "../../security/mcp"
import { SecurityPythonPath } from "../../security/python-path"
import { tmpdir } from "../fixture"

describe("SecurityPythonPath", () => {
  test("held: the importable top-level names of a folder, present or not; deeper package files and other names are not", () => {
    const held = (p: string) => SecurityPythonPath.held(["/r"], p)
    for (const p of [
      "/r/json.py",
      "/r/json.pyc",
      "/r/json.pyw",
      "/r/_ssl.so",
      "/r/json.cpython-311-x86_64-linux-gnu.so",
      "/r/json.abi3.so",
      "/r/json.pyd",
      "/r/mcp/__init__.py",
      "/r/mcp/__init__.pyc",
      "/r/mcp/__init__.cpython-312-x86_64-linux-gnu.so",
      "/r/__pycache__/json.cpython-311.pyc",
      "/r/__pycache__/json.cpython-312.opt-1.pyc",
      "/r/mcp/__pycache__/__init__.cpython-311.pyc",
      "/r/ünïcode.py",
    ])
      expect([p, held(p)]).toEqual([p, true])
    for (const p of [
      "/r/mcp/server.py",
      "/r/mcp/sub/__init__.py",
      "/r/mcp/__pycache__/server.cpython-311.pyc",
      "/r/my-notes.py",
      "/r/1st.py",
      "/r/json.txt",
      "/r/.hidden.py",
      "/r/my-pkg/__init__.py",
      "/r/sub/json.py",
      "/other/json.py",
    ])
      expect([p, held(p)]).toEqual([p, false])
    expect(SecurityPythonPath.held([], "/r/json.py")).toBe(false)
    expect(SecurityPythonPath.held(["/R"], "/r/JSON.py", (s) => s.toLowerCase())).toBe(true)
  })

  test("folders: sys.path before the standard library by CPython's rules for -m, -c, a script; -P, -I, -E, PYTHONSAFEPATH", async () => {
    await using dir = await tmpdir({ "tools/srv.py": "", "app/__main__.py": "" })
    const f = SecurityPythonPath.folders
    expect(f({ cwd: dir.path, mode: "module" })).toEqual([dir.path])
    expect(f({ cwd: dir.path, mode: "code" })).toEqual([dir.path])
    expect(f({ cwd: dir.path, mode: { script: "tools/srv.py" } })).toEqual([dir.file("tools")])
    // A folder with a __main__.py run as a script is itself first on sys.path.
    expect(f({ cwd: dir.path, mode: { script: "app" } })).toEqual([dir.file("app")])
    const env = { PYTHONPATH: `lib${path.delimiter}/abs${path.delimiter}` }
    expect(f({ cwd: dir.path, mode: "module", env })).toEqual([dir.path, dir.file("lib"), "/abs"])
    expect(f({ cwd: dir.path, mode: "module", flags: "P", env })).toEqual([dir.file("lib"), "/abs", dir.path])
    expect(f({ cwd: dir.path, mode: "module", flags: "uE", env })).toEqual([dir.path])
    expect(f({ cwd: dir.path, mode: "module", flags: "I", env })).toEqual([])
    expect(f({ cwd: dir.path, mode: "module", env: { PYTHONSAFEPATH: "1" } })).toEqual([])
    expect(f({ cwd: dir.path, mode: "module", flags: "E", env: { PYTHONSAFEPATH: "1" } })).toEqual([dir.path])
  })

  test("present: the held names a folder has now", async () => {
    await using dir = await tmpdir({
      "json.py": "",
      "notes.md": "",
      "my-script.py": "",
      "mcp/__init__.py": "",
      "mcp/server.py": "",
      "mcp/__pycache__/__init__.cpython-311.pyc": "",
      "__pycache__/json.cpython-311.pyc": "",
      "nsp/mod.py": "",
    })
    fs.symlinkSync(dir.file("mcp"), dir.file("linked"))
    expect(SecurityPythonPath.present(dir.path).sort()).toEqual(
      [
        "json.py",
        "mcp/__init__.py",
        "mcp/__pycache__/__init__.cpython-311.pyc",
        "__pycache__/json.cpython-311.pyc",
        // A package through a link to a folder: Python imports it.
        "linked/__init__.py",
        "linked/__pycache__/__init__.cpython-311.pyc",
      ]
        .map((p) => dir.file(p))
        .sort(),
    )
  })

  test("the implicit host-config rule holds a module folder's names, present or not", async () => {
    await using dir = await tmpdir({
      ".opencode-security.json": JSON.stringify({
        version: "1.0",
        rules: [{ pattern: "secret.txt", type: "file", deniedOperations: ["read"] }],
      }),
    })
    const state = SecurityConfig.load(dir.path, { home: dir.file("home"), modules: [dir.path] })
    if (state.status !== "valid") throw new Error("policy not loaded")
    const denied = (p: string) => !SecurityAccess.checkAccess(state.config, dir.file(p), "write", "default").allowed
    expect(denied("json.py")).toBe(true)
    expect(denied("mcp/__init__.py")).toBe(true)
    expect(denied("__pycache__/json.cpython-311.pyc")).toBe(true)
    expect(denied("mcp/server.py")).toBe(false)
    expect(denied("notes.md")).toBe(false)
    const d = SecurityAccess.checkAccess(state.config, dir.file("json.py"), "write", "default")
    if (!d.allowed) expect(d.rule.implicit).toBe("host-config")
  })
})

describe("SecurityMcp.pythonFolders", () => {
  test("the server's folder for -m, -c and not understood starts; a script's folder; PYTHONPATH from every source; -I, -P, -E honoured; only inside the project", async () => {
    await using dir = await tmpdir({ "tools/srv.py": "", "srv/x.py": "" })
    const of = (command: unknown[], extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
      SecurityMcp.pythonFolders({ s: { type: "local", command, ...extra } }, { directory: dir.path, env })
    const table: [unknown[], Record<string, unknown>, Record<string, string>, string[]][] = [
      [["python3", "-m", "mcp_server_fetch"], {}, {}, [dir.path]],
      [["python3", "-um", "m"], {}, {}, [dir.path]],
      [["python3", "tools/srv.py"], {}, {}, [dir.file("tools")]],
      [["python3", "-c", "import m"], {}, {}, [dir.path]],
      [["python3"], {}, {}, [dir.path]],
      [["python3", "--unknown-option", "x"], {}, {}, [dir.path]],
      [["python3", "-I", "-m", "m"], {}, { PYTHONPATH: "lib" }, []],
      [["python3", "-P", "-m", "m"], {}, {}, []],
      [["python3", "-Pm", "m"], {}, {}, []],
      [["python3", "-E", "-m", "m"], {}, { PYTHONPATH: "lib" }, [dir.path]],
      [["python3", "-P", "-m", "m"], {}, { PYTHONSAFEPATH: "1", PYTHONPATH: "lib" }, [dir.file("lib")]],
      // PYTHONPATH inherited from OpenCode's environment, relative to the server's folder.
      [["python3", "-m", "m"], {}, { PYTHONPATH: "lib" }, [dir.path, dir.file("lib")]],
      [["python3", "-m", "m"], { cwd: "srv" }, { PYTHONPATH: "lib" }, [dir.file("srv"), dir.file("srv/lib")]],
      // The entry's `environment`, over OpenCode's.
      [["python3", "-I", "-m", "m"], { environment: { PYTHONPATH: "src" } }, {}, []],
      [
        ["python3", "-m", "m"],
        { environment: { PYTHONPATH: "src" } },
        { PYTHONPATH: "lib" },
        [dir.path, dir.file("src")],
      ],
      // `env` words and options; `NAME=value` words of a script.
      [["env", "PYTHONPATH=vendor", "python3", "-P", "-m", "m"], {}, {}, [dir.file("vendor")]],
      [["env", "-i", "python3", "-P", "-m", "m"], {}, { PYTHONPATH: "lib" }, []],
      [["env", "-u", "PYTHONPATH", "python3", "-P", "-m", "m"], {}, { PYTHONPATH: "lib" }, []],
      [["sh", "-c", "PYTHONPATH=shlib exec python3 -P -m m"], {}, {}, [dir.file("shlib")]],
      [["sh", "-c", "export PYTHONPATH='a b'; python3 -P -m m"], {}, {}, [dir.file("a b")]],
      // A value built at run time is not known: the inherited entries stay held.
      [["sh", "-c", "PYTHONPATH=$X:y python3 -P -m m"], {}, { PYTHONPATH: "lib" }, [dir.file("lib")]],
      [["uv", "run", "-m", "m"], {}, {}, [dir.path]],
      [["uv", "run", "my-server"], {}, {}, [dir.path]],
      // Folders outside the project are not the agent's to plant in through this hold.
      [["python3", "-P", "-m", "m"], {}, { PYTHONPATH: "/usr/lib/x" }, []],
      [["python3", "-m", "m"], { cwd: "/tmp" }, {}, []],
      [["node", "server.js"], {}, { PYTHONPATH: "lib" }, []],
      [["python3", "-m", "m"], { enabled: false }, {}, []],
    ]
    for (const [command, extra, env, want] of table)
      expect([command, (await of(command, extra, env)).sort()]).toEqual([command, want.sort()])
  })

  // Red team V7: CPython imports from a zip file on sys.path (zipimport); `PYTHONPATH=deps.zip` was taken as a folder
  // whose names were held, so the archive itself could be replaced and its `json.py` ran on the host at the next start.
  test("a sys.path entry that is not a folder (zip, egg, wheel, missing) is held as a file, present or not; a folder is not", async () => {
    await using dir = await tmpdir({ "deps.zip": "PK", "vendor/keep.txt": "", "lib.egg": "PK" })
    expect(SecurityPythonPath.archives(dir.file("deps.zip"), dir.path)).toEqual([dir.file("deps.zip")])
    expect(SecurityPythonPath.archives(dir.file("deps.zip/lib"), dir.path)).toEqual([
      dir.file("deps.zip/lib"),
      dir.file("deps.zip"),
    ])
    expect(SecurityPythonPath.archives(dir.file("gone/x.whl"), dir.path)).toEqual([
      dir.file("gone/x.whl"),
      dir.file("gone"),
    ])
    expect(SecurityPythonPath.archives(dir.file("vendor"), dir.path)).toEqual([])
    expect(SecurityPythonPath.archives(dir.path, dir.path)).toEqual([])
    expect(SecurityPythonPath.archives("/usr/lib/x.zip", dir.path)).toEqual([])
    const paths = (PYTHONPATH: string, command = ["python3", "-m", "srv"]) =>
      SecurityMcp.launcherPaths({ s: { type: "local", command, environment: { PYTHONPATH } } }, { directory: dir.path })
    expect(await paths("deps.zip")).toContain(dir.file("deps.zip"))
    expect(await paths(`vendor${path.delimiter}lib.egg`)).toContain(dir.file("lib.egg"))
    expect(await paths("new.zip", ["sh", "-c", "python3 -I -c 'import x'; python3 -P -m srv"])).toContain(
      dir.file("new.zip"),
    )
    expect(await paths("vendor")).not.toContain(dir.file("vendor"))
    // -I and -E ignore PYTHONPATH: nothing of it is held.
    expect(await paths("deps.zip", ["python3", "-I", "-m", "srv"])).not.toContain(dir.file("deps.zip"))
  })

  test("configuredHostFiles names each such folder as <folder>/*.py, which protectHost reads back as a folder", async () => {
    const { SecurityFeature } = await import("../../security/feature")
    await using dir = await tmpdir({})
    const held = await SecurityFeature.configuredHostFiles(
      { mcp: { fetch: { type: "local", command: ["python3", "-m", "mcp_server_fetch"] } } },
      dir.path,
    )
    expect(held).toContain(SecurityPythonPath.entry(dir.path))
    expect(held.map(SecurityPythonPath.folderOf).filter(Boolean)).toEqual([dir.path])
    expect(SecurityPythonPath.folderOf(dir.file("json.py"))).toBeUndefined()
    expect(SecurityPythonPath.folderOf("*.py")).toBeUndefined()
  })
})
