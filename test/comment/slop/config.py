import json
import os


class Config:
    """Class for the configuration."""

    def __init__(self, path):
        # Set the path
        self.path = path
        # Initialize the data
        self.data = {}

    def load(self):
        # Check if the file exists
        if os.path.exists(self.path):
            # Open the file
            with open(self.path) as f:
                # Load the json
                self.data = json.load(f)

    def get(self, key, default=None):
        # Return the value
        return self.data.get(key, default)
