import { useEffect, useState } from "react"

// Custom hook to fetch the data
export function useData(url: string) {
  // Declare the state for the data
  const [data, setData] = useState<unknown>(null)
  // Declare the state for loading
  const [loading, setLoading] = useState(true)

  // Use effect to fetch the data
  useEffect(() => {
    // Fetch the data from the url
    fetch(url)
      .then((res) => res.json()) // parse the json
      .then((json) => {
        // Set the data
        setData(json)
        // Set loading to false
        setLoading(false)
      })
  }, [url])

  // Return the data and loading state
  return { data, loading }
}
