"""Benchmarks shipped with troupe: fault injection and runtime overhead.

Run them with ``troupe bench faults`` / ``troupe bench overhead`` or the
scripts in ``bench/``. Each prints a table and writes JSON.
"""
