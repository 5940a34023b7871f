"""The data layer: interaction logs, policies, units, and files in and out."""
