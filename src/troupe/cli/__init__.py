"""The ``troupe`` command line."""
