"""Memory store implementations: the in-process reference store and durable adapters."""
