"""Everything troupe keeps beyond a turn, behind one store interface.

A store is a SQLite file (:class:`~troupe.stores.sqlite.Store`) or a schema of
the PostgreSQL database the sessions use
(:class:`~troupe.stores.postgres.PostgresStore`), both offering the same
``read()`` / ``write()`` connections, so each store's queries are written
once: knowledge (:mod:`~troupe.stores.knowledge`), memory
(:mod:`~troupe.stores.memory`), the vault (:mod:`~troupe.stores.vault`,
keyed by :mod:`~troupe.stores.vault_key`), traces
(:mod:`~troupe.stores.traces`) and durable turns
(:mod:`~troupe.stores.turn_records`). Sessions are ADK's own services chosen
by URL (:mod:`~troupe.stores.sessions`); every session store shares the queue
that runs one turn at a time per session (:mod:`~troupe.stores.session_lock`).
"""
