"""Exact fee and credit arithmetic (sla-semantics.md, sections 4 and 5).

Everything is rational arithmetic on Python ints held in numpy object arrays (one entry per
unit or node, a few vector operations per scope), so there is no float and no rounding
until the single half-up rounding of each node's monthly credit to cents.

A unit's loss in a month is `lnum / dn` seconds: `dn = 1` for ordinary downtime, `dn =
gpus` for a node whose degraded time counts proportionally (`lnum` is then lost
GPU-seconds). Availability is `1 - lnum / (dn * M)` for a month of `M` seconds.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from slaschema.models import Pricing, ServiceLevel


def ratio(d: Decimal | int) -> tuple[int, int]:
    n, q = Decimal(d).as_integer_ratio()
    return int(n), int(q)


def obj(a) -> np.ndarray:
    """An object array of Python ints (exact, no overflow)."""
    return np.asarray(a, dtype=np.int64).astype(object)


def below(lnum: np.ndarray, dn: np.ndarray, month_s: int, threshold: Decimal) -> np.ndarray:
    """Availability strictly below `threshold` percent (equal is not below)."""
    p, q = ratio(threshold)
    total = dn * month_s
    return np.asarray((100 * q) * (total - lnum) < p * total, dtype=bool)


def availability_e4(lnum: np.ndarray, dn: np.ndarray, month_s: int) -> np.ndarray:
    """Availability in percent x 10**4, truncated (display only; spec 8.8): a unit below a
    threshold never shows as the threshold itself (94.99996% shows 94.9999%)."""
    total = dn * month_s
    return (10**6 * (total - lnum)) // total


def downtime_value(lnum: int, dn: int) -> int | Decimal:
    """A unit's `downtime_seconds` from its loss `lnum / dn`: an int, or (proportional degraded
    time not a whole number of seconds) lost GPU-seconds / GPUs rounded to 3 decimals."""
    if dn == 1:
        return lnum
    if lnum % dn == 0:
        return lnum // dn
    return round(Decimal(lnum) / Decimal(dn), 3)


def pct_text(e4: int) -> str:
    return f"{e4 // 10000}.{e4 % 10000:04d}"


def tiered(lnum: np.ndarray, dn: np.ndarray, month_s: int, sl: ServiceLevel
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Credit share per unit: `(credit_pct Decimal, num, den)`; largest tier that applies."""
    n = len(lnum)
    tiers = sorted(sl.credits or [], key=lambda t: t.credit)   # later (larger) credits win
    best = np.full(n, -1, dtype=np.int64)
    for i, tier in enumerate(tiers):
        best = np.where(below(lnum, dn, month_s, tier.below), i, best)
    pcts = [t.credit for t in tiers]
    pct = np.array(pcts + [Decimal(0)], dtype=object)[best]          # index -1 -> no credit
    num = np.array([ratio(x)[0] for x in pcts] + [0], dtype=object)[best]
    den = np.array([ratio(x)[1] * 100 for x in pcts] + [1], dtype=object)[best]
    return pct, num, den


def pro_rata(lnum: np.ndarray, dn: np.ndarray, month_s: int, sl: ServiceLevel
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`downtime_hours x fee / hours x multiplier`, capped at the fee, as a share of the fee."""
    assert sl.pro_rata is not None
    mn, md = ratio(sl.pro_rata.multiplier)
    num = lnum * mn
    den = dn * (month_s * md)
    over = np.asarray(num > den, dtype=bool)
    num = np.where(over, 1, num).astype(object)
    den = np.where(over, 1, den).astype(object)
    pct = np.full(len(num), None, dtype=object)                     # computed for display
    return pct, num, den


def fee_fraction(pricing: Pricing, gpus: np.ndarray, month_s: int, nodes: np.ndarray | None = None,
                 seconds: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Each unit's fee as `num / den` (den shared, independent of `seconds`): the rule of
    `Pricing.fee_terms` in exact fractions, `count x rate x seconds / per`. `gpus`: GPUs per
    unit; `nodes`: nodes per unit (default: one each, the units are nodes); `seconds`: each
    unit's seconds of the month (revision 1.1 service time or hours not charged; default: the
    whole month, whose common factor `month_s / per` is reduced once: 1 at a monthly rate)."""
    count, rate, per = pricing.fee_terms(gpus=gpus, nodes=1 if nodes is None else nodes, month_seconds=month_s)
    pn, pd = ratio(rate)
    n = len(gpus)
    if seconds is None:
        g = math.gcd(month_s, per)
        return _times(count, (month_s // g) * pn, n), pd * (per // g)
    return _times(count, pn, n) * obj(seconds), pd * per


def _times(count, factor: int, n: int) -> np.ndarray:
    """`count x factor` for each of `n` units as Python ints (`count`: an array, or one int
    for every unit)."""
    if np.ndim(count) == 0:
        out = np.empty(n, dtype=object)
        out[:] = int(count) * factor
        return out
    return obj(count) * factor


def cents_half_up(num, den):
    """`num/den` currency units -> cents, rounded half-up (non-negative amounts)."""
    return (200 * num + den) // (2 * den)


def cents_floor(num, den):
    return (100 * num) // den


def money(cents: int) -> str:
    cents = int(cents)
    if cents < 0:
        return "-" + money(-cents)
    units, c = divmod(cents, 100)
    return f"{units}.{c:02d}"


def money_decimal(cents: int) -> Decimal:
    return Decimal(int(cents)).scaleb(-2)


def exact_money(value: Fraction) -> str:
    """Exact amount as text: cents when exact to the cent, more digits only when needed."""
    c = value * 100
    if c.denominator == 1:
        return money(int(c))
    d = Decimal(value.numerator) / Decimal(value.denominator)
    return format(d.normalize(), "f")


def each_once(values, fmt) -> list[str]:
    """`[fmt(v) for v in values]`, calling `fmt` once per distinct value: amounts and
    percentages repeat across a fleet's units (equal fees, zero credits), so a 12,600-node
    document formats a few hundred of them instead of tens of thousands."""
    seen = dict.fromkeys(values)            # the distinct values, each as it first appears
    for v in seen:
        seen[v] = fmt(v)
    return list(map(seen.__getitem__, values))

