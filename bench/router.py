"""Router benchmark (same as ``troupe bench router``).

python bench/router.py
"""

from troupe.cli.bench import bench_app

if __name__ == "__main__":
    bench_app(["router", *__import__("sys").argv[1:]])
