"""Settling the month's credit node by node: the shares add up to the credit total to the cent."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from calculators.settle import hours, scaled_cents, settled_node_cents


def period(credits, total):
    return SimpleNamespace(nodes=SimpleNamespace(credit_cents=credits), credit_total_cents=total,
                           credit_uncapped_cents=sum(credits))


def test_left_over_cents_go_to_the_largest_remainders_then_topology_order():
    # 100 cents capped to 50 over three equal nodes: 16.67 each -> 17, 17, 16
    assert settled_node_cents(period([100, 100, 100], 50)).tolist() == [17, 17, 16]
    # uneven credits: 333 x 200/1000 = 66.6, 667 x 200/1000 = 133.4 -> 67, 133
    assert settled_node_cents(period([333, 667], 200)).tolist() == [67, 133]


def test_no_cap_keeps_node_credits_and_minimum_clears_them():
    assert settled_node_cents(period([5, 7], 12)).tolist() == [5, 7]
    assert settled_node_cents(period([5, 7], 0)).tolist() == [0, 0]
    assert scaled_cents(7, period([5, 7], 0)) == 0
    assert scaled_cents(500, period([500, 500], 500)) == 250


@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=40), st.integers(0, 100))
def test_settled_credits_always_sum_to_the_total(credits, pct):
    uncapped = sum(credits)
    total = uncapped * pct // 100
    out = settled_node_cents(period(credits, total)).tolist()
    assert sum(out) == total
    assert all(0 <= o <= c for o, c in zip(out, credits))


def test_hours_have_four_decimals():
    assert hours(9000) == "2.5000" and hours(14460) == "4.0167" and hours(0.5) == "0.0001"
