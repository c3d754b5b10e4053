#!/bin/bash
# Set the error mode
set -e

# Define the build directory
BUILD_DIR=build

# Create the build directory
mkdir -p "$BUILD_DIR"

# Copy the files to the build directory
cp -r src/* "$BUILD_DIR"

# Check if the config exists
if [ -f config.env ]; then
  # Copy the config
  cp config.env "$BUILD_DIR"
fi

# Print a message
echo "done"
