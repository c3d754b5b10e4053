// Class for the counter
class Counter {
    // Declare the count variable
    var count = 0

    // Function to increment the count
    func increment() {
        // Increment the count
        count += 1
    }

    // Function to reset the count
    func reset() {
        // Set the count to zero
        count = 0
    }
}
