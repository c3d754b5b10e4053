import math


# Function to calculate the mean
def mean(values):
    # Check if the list is empty
    if not values:
        # Return zero for empty lists
        return 0
    # Calculate the sum
    total = sum(values)
    # Return the average
    return total / len(values)


# Function to calculate the standard deviation
def stddev(values):
    # Get the mean
    m = mean(values)
    # Calculate the variance
    variance = sum((v - m) ** 2 for v in values) / len(values)
    # Return the square root of the variance
    return math.sqrt(variance)
