"""The application layer: the ``offeval`` command line and what its commands write."""
