"""The node fee has one rule (`Pricing.fee`); `fee_fraction` is the same rule in exact
fractions over arrays of units, for nodes and for racks/clusters (sums of their nodes)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from calculators.credits import fee_fraction
from slaschema.models import Pricing


@pytest.mark.parametrize("pricing", [Pricing(per_gpu_hour=Decimal("3.25")), Pricing(per_node_month=Decimal("9100.50"))])
def test_fee_fraction_is_pricing_fee(pricing):
    month_s = 744 * 3600
    gpus = np.array([4, 4, 8])
    num, den = fee_fraction(pricing, gpus, month_s)
    for g, n in zip(gpus.tolist(), num):
        assert Fraction(n, den) == Fraction(pricing.fee(gpus=g, nodes=1, hours=744))
    # a rack of those three nodes: the sum of their fees, whatever the basis
    rack_num, rack_den = fee_fraction(pricing, np.array([16]), month_s, np.array([3]))
    assert Fraction(rack_num[0], rack_den) == sum(Fraction(x, den) for x in num)
    assert Fraction(rack_num[0], rack_den) == Fraction(pricing.fee(gpus=16, nodes=3, hours=744))


def test_per_node_month_ignores_the_month_length():
    p = Pricing(per_node_month=Decimal("100"))
    assert p.fee(gpus=4, nodes=2, hours=672) == p.fee(gpus=4, nodes=2, hours=744) == Decimal("200")
    assert Pricing(per_gpu_hour=Decimal("2")).fee(gpus=4, nodes=1, hours=10) == Decimal("80")
