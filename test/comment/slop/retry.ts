// Helper function to sleep
function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms)) // wait for ms milliseconds
}

// Function to retry an operation
export async function retry<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {
  let lastError: unknown // store the last error
  for (let i = 0; i < attempts; i++) { // loop over the attempts
    try {
      return await fn() // call the function
    } catch (error) {
      lastError = error // save the error
      await sleep(100 * 2 ** i) // wait before retrying
    }
  }
  throw lastError // throw the last error
}
