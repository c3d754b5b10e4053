// Validate the input
function validate(input) {
  // Check if the input is a string
  if (typeof input !== "string") {
    return false
  }
  // Check if the input is empty
  if (input.length === 0) {
    return false
  }
  // Check if the input is too long
  if (input.length > 100) {
    return false
  }
  // Return true
  return true
}

// Export the function
module.exports = validate
