"""troupe's benchmark kit: stub tools, a faulty model, request sets and the
benchmarks behind ``troupe bench``. It lives in the repository's ``bench/``
and is not part of the installed package: ``troupe bench`` and
``troupe eval --stub-tools`` load it from a source checkout, and the scripts
in ``bench/`` import it directly (``python bench/load.py``).
"""
