"""The units the schedule states thresholds in (`slaschema.checks.METRIC_UNITS`) are the units
the acceptance checks measure and report in: a signed '>= 20 GB/s' is judged in GB/s."""

from __future__ import annotations

from acceptance.checks import REGISTRY
from slaschema.checks import KNOWN_CHECKS, METRIC_UNITS


def test_every_check_reports_in_the_units_the_schedule_states():
    for name, cls in REGISTRY.items():
        units = {m: u for m, u in getattr(cls, "units", {}).items() if u}
        assert METRIC_UNITS.get(name, {}) == units, name


def test_units_are_for_known_metrics_only():
    for name, units in METRIC_UNITS.items():
        assert set(units) <= set(KNOWN_CHECKS[name][1]), name
