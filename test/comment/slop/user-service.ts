import { db } from "./db"

// Define the User interface
interface User {
  id: string
  name: string
  email: string
}

// Function to get a user by id
export async function getUser(id: string): Promise<User | undefined> {
  // Query the database for the user
  const row = await db.query("select * from users where id = $1", [id])
  // Check if the row exists
  if (!row) {
    // Return undefined if not found
    return undefined
  }
  // Return the user
  return { id: row.id, name: row.name, email: row.email }
}

// Function to update the user email
export async function updateEmail(id: string, email: string) {
  // Validate the email
  if (!email.includes("@")) throw new Error("invalid email")
  // Update the database
  await db.query("update users set email = $1 where id = $2", [email, id])
}
