"""Where troupe keeps what outlives a turn: session stores and their turn queue.

Session stores are ADK's own services, chosen by URL
(:mod:`troupe.stores.sessions`); every store opened here shares the queue
that runs one turn at a time per session (:mod:`troupe.stores.session_lock`).
"""
