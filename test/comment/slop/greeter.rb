# Class for greeting people
class Greeter
  # Initialize the greeter
  def initialize(name)
    # Set the name
    @name = name
  end

  # Method to greet
  def greet
    # Print the greeting
    puts "Hello, #{@name}"
  end
end

# Create a new greeter
g = Greeter.new("world")
# Call the greet method
g.greet
