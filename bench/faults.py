"""Fault-injection benchmark (same as ``troupe bench faults``).

python bench/faults.py --turns 1000 --seed 7
"""

from troupe.cli.bench import bench_app

if __name__ == "__main__":
    bench_app(["faults", *__import__("sys").argv[1:]])
