use std::collections::HashMap;

// Function to parse the config
pub fn parse(text: &str) -> HashMap<String, String> {
    // Create a new hash map
    let mut map = HashMap::new();
    // Iterate over the lines
    for line in text.lines() {
        // Skip empty lines
        if line.trim().is_empty() {
            continue;
        }
        // Split the line at the equals sign
        if let Some((key, value)) = line.split_once('=') {
            // Insert the key and value into the map
            map.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    // Return the map
    map
}
