"""Overhead benchmark (same as ``troupe bench overhead``).

python bench/overhead.py --turns 2000
"""

from troupe.cli.bench import bench_app

if __name__ == "__main__":
    bench_app(["overhead", *__import__("sys").argv[1:]])
