"""Benchmark harness of the in-process memory stores: ``python -m tools.bench`` (or ``make bench``).

It times lionmem's ``InMemoryStore``, lionagi 0.36.0's ``InMemoryStore``, LangGraph's
``InMemoryStore`` (where its operations are comparable) and pure-Python floors on one seeded
workload, interleaving the contenders and taking medians, and writes JSON, a Markdown table and a
PNG chart. Modules: ``workload`` (the data and the queries), ``contenders`` (one adapter per
store), ``timing`` (samples and medians), ``footprint`` (memory and model construction),
``report`` (the outputs), ``__main__`` (the command line).
"""
