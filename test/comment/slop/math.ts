// Add two numbers
export function add(a: number, b: number) {
  // return a + b
  return a + b
}

// Subtract two numbers
export function subtract(a: number, b: number) {
  // return a - b
  return a - b
}

// Multiply two numbers
export function multiply(a: number, b: number) {
  // return a * b
  return a * b
}
