// Class for the settings
class Settings {
    // Initialize the map
    private val values = mutableMapOf<String, String>()

    // Function to get a value
    fun get(key: String): String? {
        // Return the value from the map
        return values[key]
    }

    // Function to set a value
    fun set(key: String, value: String) {
        // Set the value in the map
        values[key] = value
    }
}
