-- Select the customer name and total
SELECT c.name, SUM(o.total) AS total
-- From the customers table
FROM customers c
-- Join the orders table
JOIN orders o ON o.customer_id = c.id
-- Filter by the year
WHERE o.year = 2024
-- Group by the customer name
GROUP BY c.name
-- Order by the total
ORDER BY total DESC;
