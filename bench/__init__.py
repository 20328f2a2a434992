"""agentcli benchmarks: ``python -m bench`` (or ``make bench``) prints a table and writes docs/benchmarks.md.

Each measure runs several times and reports the median and min–max, as ratios against a
peer (bare ripgrep, a bare Textual app, a bare SDK loop) wherever one exists, since
absolute times depend on the machine. Benchmarks are not tests: nothing here asserts.
"""
