"""The registry: hook specifications, plugin discovery and components by name."""
