import requests


def fetch_titles(urls):
    titles = []
    # Loop through the urls
    for url in urls:
        response = requests.get(url, timeout=10)
        # Check if the response is ok
        if response.ok:
            titles.append(response.text.split("<title>")[1].split("</title>")[0])
    # Return the titles
    return titles
