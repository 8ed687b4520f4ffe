"""Fake services the tests start on 127.0.0.1."""
