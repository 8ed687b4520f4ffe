"""Sentence encoders compared for the router (same as ``troupe bench encoders``).

python bench/encoders.py
"""

from troupe.cli.bench import bench_app

if __name__ == "__main__":
    bench_app(["encoders", *__import__("sys").argv[1:]])
