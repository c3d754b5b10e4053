export { SecurityShell } from "./shell/index"
