// Import the tax module
const tax = require("./tax")

// Create a new cart class
class Cart {
  // Constructor
  constructor() {
    // Initialize the items array
    this.items = []
  }

  // Add an item to the cart
  add(item) {
    // Push the item into the array
    this.items.push(item)
  }

  // Calculate the total
  total() {
    // Initialize the sum
    let sum = 0
    // Loop through the items
    for (const item of this.items) {
      // Add the price to the sum
      sum += item.price
    }
    // Return the total with tax
    return tax.apply(sum)
  }
}

module.exports = Cart
