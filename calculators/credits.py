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


# --- the same arithmetic in int64 where no value can leave it --------------------------------
#
# A unit's figures are a few vector operations on Python ints in object arrays (about 1 ms each
# for 12,600 nodes, holding the GIL). Where every operand fits in int64 and the largest result
# the operation can reach stays below 2**62 (worked out from the operands' largest magnitudes),
# numpy's int64 arithmetic gives the same integers (floor division included) in a few
# microseconds; the results go back into object arrays of Python ints. Anything else (a value
# beyond int64, a bound too large, a zero divisor: the object form raises ZeroDivisionError)
# takes the object form, which stays the definition.

_SAFE = 1 << 62


def _i64(a) -> np.ndarray | None:
    """`a` as an int64 array when it is one, or an object array of ints that all fit; None
    otherwise (a value beyond int64, another kind of array, a scalar)."""
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "iO":
        return None
    if a.dtype == np.int64:
        return a
    try:
        return a.astype(np.int64)
    except (OverflowError, TypeError, ValueError):
        return None


def _top(a: np.ndarray | int) -> int:
    """The largest magnitude in `a` (an int64 array or an int) as a Python int."""
    if isinstance(a, np.ndarray):
        return max(-int(a.min()), int(a.max()), 0) if a.size else 0
    return abs(int(a))


def _i64_or_int(a) -> np.ndarray | int | None:
    """An operand for the int64 forms: an int below _SAFE (one for all units, as a month's
    seconds or a shared denominator) as it is, else `_i64(a)`."""
    if isinstance(a, int) and abs(a) < _SAFE:
        return a
    return _i64(a)


def below(lnum: np.ndarray, dn: np.ndarray, month_s: int, threshold: Decimal) -> np.ndarray:
    """Availability strictly below `threshold` percent (equal is not below)."""
    p, q = ratio(threshold)
    fast = _below_i64(lnum, dn, month_s, p, q)
    if fast is not None:
        return fast
    total = dn * month_s
    return np.asarray((100 * q) * (total - lnum) < p * total, dtype=bool)


def _below_i64(lnum, dn, month_s, p: int, q: int) -> np.ndarray | None:
    lo, d, m = _i64(lnum), _i64(dn), _i64_or_int(month_s)
    if lo is None or d is None or m is None:
        return None
    k = max(100 * q, abs(p))
    if k >= _SAFE or (_top(d) * _top(m) + _top(lo)) * k >= _SAFE:
        return None
    total = d * m
    return np.asarray((100 * q) * (total - lo) < p * total, dtype=bool)


def availability_e4(lnum: np.ndarray, dn: np.ndarray, month_s: int) -> np.ndarray:
    """Availability in percent x 10**4, truncated (display only; spec 8.8): a unit below a
    threshold never shows as the threshold itself (94.99996% shows 94.9999%)."""
    lo, d, m = _i64(lnum), _i64(dn), _i64_or_int(month_s)
    if (lo is not None and d is not None and m is not None and isinstance(lnum, np.ndarray) and lnum.dtype == object
            and (_top(d) * _top(m) + _top(lo)) * 10**6 < _SAFE):
        total = d * m
        if total.all():
            return ((10**6 * (total - lo)) // total).astype(object)
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
    if isinstance(num, np.ndarray) and num.dtype == object:     # (in int64 where it fits: see above)
        n, d = _i64(num), _i64_or_int(den)
        if n is not None and d is not None and 200 * _top(n) + 2 * _top(d) < _SAFE \
                and (d.all() if isinstance(d, np.ndarray) else d != 0):
            return ((200 * n + d) // (2 * d)).astype(object)
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

