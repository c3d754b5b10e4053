package files

import "os"

// ReadAll reads all the files
func ReadAll(paths []string) (map[string][]byte, error) {
	// Create the result map
	result := make(map[string][]byte)
	// Loop over the paths
	for _, p := range paths {
		// Read the file
		data, err := os.ReadFile(p)
		// Check the error
		if err != nil {
			// Return the error
			return nil, err
		}
		// Store the data in the map
		result[p] = data
	}
	// Return the result
	return result, nil
}
