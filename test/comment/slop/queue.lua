-- Create the queue table
local Queue = {}

-- Function to create a new queue
function Queue.new()
  -- Return a new table
  return { first = 1, last = 0, items = {} }
end

-- Function to push an item
function Queue.push(q, item)
  -- Increment the last index
  q.last = q.last + 1
  -- Store the item
  q.items[q.last] = item
end

-- Return the queue module
return Queue
