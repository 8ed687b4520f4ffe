"""``python -m troupe``: the same as the ``troupe`` command."""

from __future__ import annotations

from .cli.app import main

if __name__ == "__main__":
    main()
