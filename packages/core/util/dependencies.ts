/**
 * Folders that hold installed dependencies rather than the project's own code, in the common ecosystems. README
 * injection brings in none of their READMEs; the lsp tool's project-wide walks (diagnostics of a folder, a rename's
 * search for mentions) do not enter them.
 *
 * @example
 * Dependencies.FOLDERS.has("site-packages") // true
 * Dependencies.isVenv(new Set(["bin", "lib", "pyvenv.cfg"])) // true: a virtual environment, whatever its name
 */
export namespace Dependencies {
  /**
   * Folder names that hold installed dependencies (exact, any depth): npm, Bower, jspm and Yarn (`.yarn`), Go modules'
   * and Composer's `vendor` (Bundler's `vendor/bundle` too), Bundler's `.bundle`, Python's virtual environments and
   * installs (`.venv`, `venv`, `site-packages`, `dist-packages`, `__pypackages__`, tox and nox environments),
   * CocoaPods and Carthage, SwiftPM's `.build`, vendored `third_party` code; and `.git`. A virtual environment under
   * another name is found by its `pyvenv.cfg` (`VENV_MARKER`).
   */
  export const FOLDERS: ReadonlySet<string> = new Set([
    "node_modules",
    "bower_components",
    "jspm_packages",
    ".yarn",
    "vendor",
    ".bundle",
    ".venv",
    "venv",
    "site-packages",
    "dist-packages",
    "__pypackages__",
    ".tox",
    ".nox",
    "Pods",
    "Carthage",
    ".build",
    "third_party",
    "third-party",
    ".git",
  ])
  /** The file that marks a Python virtual environment's folder (PEP 405). */
  export const VENV_MARKER = "pyvenv.cfg"

  /** Whether a folder whose entries are `names` is a Python virtual environment (it holds `pyvenv.cfg`). */
  export function isVenv(names: ReadonlySet<string>): boolean {
    return names.has(VENV_MARKER)
  }
}
