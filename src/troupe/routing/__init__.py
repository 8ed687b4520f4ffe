"""Routing: capabilities, partitioning and the instructions built from them."""
