"""Benchmarks and the side-by-side comparison with the reference server.

Run from the repository root as modules: ``python -m bench.run`` (the benchmarks, see
docs/benchmarks.md) and ``python -m bench.side_by_side`` (see docs/side-by-side.md).
"""
