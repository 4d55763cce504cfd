"""Parsing stored generations at scale.

- `columns`: `parse_batch`, a batch of generations (lists or table columns) parsed in process.
- `files`: JSONL and Parquet rows read and written in order.
- `run`: the engines (in process, datasets, Ray) and their per-stage timings.
"""
