export class LinkedList<T> {
  private head?: { value: T; next?: any }
  private size = 0

  // Add a value to the list
  push(value: T) {
    // Create a new node
    const node = { value, next: this.head }
    // Set the head to the new node
    this.head = node
    // Increment the size
    this.size++
  }

  // Get the length of the list
  get length() {
    return this.size
  }

  toArray(): T[] {
    const out: T[] = []
    for (let n = this.head; n; n = n.next) out.push(n.value)
    return out
  }
}
