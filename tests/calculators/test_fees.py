"""The node fee has one rule (`Pricing.fee_terms`, used by `Pricing.fee`); `fee_fraction` and
`service_fee` are the same rule in exact fractions over arrays of units, for nodes and for
racks/clusters (sums of their nodes), for whole months and for part of one."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from calculators.credits import fee_fraction
from calculators.service import service_fee
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


@pytest.mark.parametrize("pricing", [Pricing(per_gpu_hour=Decimal("3.25")), Pricing(per_node_month=Decimal("9100.55"))])
def test_fees_for_part_of_the_month_follow_the_same_rule(pricing):
    """Revision 1.1 fees over service time (`service_fee`, `fee_fraction(seconds=...)`) are
    `count x rate x seconds / per` of `Pricing.fee_terms`; the whole month gives the fee of
    `Pricing.fee`, and shares of a month add up to the month."""
    month_s = 744 * 3600
    gpus = np.array([4, 8, 4])
    seconds = np.array([month_s, 0, 1234567])
    num, den = service_fee(pricing, gpus, seconds, month_s)
    num2, den2 = fee_fraction(pricing, gpus, month_s, seconds=seconds)
    assert den == den2 and list(num) == list(num2)
    for g, s, n in zip(gpus.tolist(), seconds.tolist(), num):
        assert type(n) is int
        count, rate, per = pricing.fee_terms(gpus=g, nodes=1, month_seconds=month_s)
        assert Fraction(n, den) == Fraction(rate) * count * s / per
    assert Fraction(num[0], den) == Fraction(pricing.fee(gpus=4, nodes=1, hours=744))
    assert num[1] == 0
    half_num, half_den = service_fee(pricing, gpus[:1], np.array([month_s // 2]), month_s)
    assert 2 * Fraction(half_num[0], half_den) == Fraction(pricing.fee(gpus=4, nodes=1, hours=744))


def test_fee_terms_is_the_one_branch():
    per_gpu = Pricing(per_gpu_hour=Decimal("3.25"))
    per_node = Pricing(per_node_month=Decimal("9100.55"))
    assert per_gpu.fee_terms(gpus=16, nodes=3, month_seconds=2678400) == (16, Decimal("3.25"), 3600)
    assert per_node.fee_terms(gpus=16, nodes=3, month_seconds=2678400) == (3, Decimal("9100.55"), 2678400)
    # Decimal as written: the exponent of the rate and the hours, not of the seconds
    assert str(per_gpu.fee(gpus=4, nodes=1, hours=744)) == "9672.00"
    assert str(per_gpu.fee(gpus=4, nodes=1, hours=Decimal("743.5"))) == "9665.500"
    assert str(per_node.fee(gpus=4, nodes=2, hours=Decimal("730"))) == "18201.10"


def test_whole_month_fraction_is_reduced():
    """A whole month: the factor month / per is reduced once (at a monthly rate the fee is
    the rate's own fraction), so the engine's fractions stay small."""
    month_s = 672 * 3600
    num, den = fee_fraction(Pricing(per_node_month=Decimal("9100.55")), np.array([4, 8]), month_s)
    assert (list(num), den) == ([182011, 182011], 20)
    num, den = fee_fraction(Pricing(per_gpu_hour=Decimal("3.25")), np.array([4, 8]), month_s)
    assert (list(num), den) == ([4 * 672 * 13, 8 * 672 * 13], 4)
