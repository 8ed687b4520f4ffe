"""Running the tree: the Assistant and its guards."""
