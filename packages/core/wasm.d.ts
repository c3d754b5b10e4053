// WebAssembly files imported with `with { type: "file" }` (the bash parser): Bun gives their path, inside a binary
// built with `bun build --compile` the embedded copy's.
declare module "*.wasm" {
  const file: string
  export default file
}
