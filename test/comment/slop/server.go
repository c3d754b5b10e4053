package main

import (
	"fmt"
	"net/http"
)

// Handler function for the root path
func handler(w http.ResponseWriter, r *http.Request) {
	// Set the content type
	w.Header().Set("Content-Type", "text/plain")
	// Write the response
	fmt.Fprintf(w, "hello")
}

// Main function
func main() {
	// Register the handler
	http.HandleFunc("/", handler)
	// Start the server
	http.ListenAndServe(":8080", nil)
}
