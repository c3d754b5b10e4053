import java.util.ArrayList;
import java.util.List;

// Class to manage the inventory
public class Inventory {
    // Declare the list of products
    private final List<String> products = new ArrayList<>();

    // Method to add a product
    public void add(String product) {
        // Check if the product is null
        if (product == null) {
            // Throw an exception
            throw new IllegalArgumentException("product");
        }
        // Add the product to the list
        products.add(product);
    }

    // Method to get the count
    public int count() {
        // Return the size of the list
        return products.size();
    }
}
