using System.Collections.Generic;

// Class for the order service
public class OrderService
{
    // Declare the orders list
    private readonly List<Order> orders = new List<Order>();

    // Method to place an order
    public void Place(Order order)
    {
        // Validate the order
        if (order.Quantity <= 0)
        {
            // Throw an exception
            throw new System.ArgumentException("quantity");
        }
        // Add the order to the list
        orders.Add(order);
    }

    // Method to get all orders
    public IEnumerable<Order> All()
    {
        // Return the orders
        return orders;
    }
}
