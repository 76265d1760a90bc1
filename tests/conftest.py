"""Shared test configuration: hypothesis profiles sized for CI on a shared two-core machine."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# No deadline: the machines are shared and noisy; speed is measured by the benchmark tools.
settings.register_profile(
    "lionmem",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("lionmem")
