"""Adapters that let other agent frameworks use lionmem's stores (each needs its own extra)."""
