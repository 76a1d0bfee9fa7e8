"""A deliberately plain reference implementation of sla-semantics.md sections 1-5.

Pure Python on lists of `(start, end)` tuples and `Fraction`s, one unit at a time, written
from the spec's wording (no numpy, no pandas, nothing shared with `calculators`). The
property tests compare the engine against it on random scenarios.

A scenario is plain data:
    spec = {"zone", "gpus", "sites": {site: {cluster: {rack: [node, ...]}}}, "price",
            "min_outage", "degraded", "rack": None | (k, follow), "cluster": None | (pct, follow),
            "exclusions": {name: (notice_s | None, cap_s | None)},
            "levels": {scope: ("tiers", target, [(below, credit), ...]) | ("pro_rata", target, mult)},
            "stacking", "cap": None | pct, "minimum": Decimal,
            # revision 1.1 (section 8), all optional:
            "windows": {node: (from | None, to | None)} epoch seconds, "counts_from": "fault" | "report",
            "measure": None | (bucket_s, "full" | "any"), "not_charged": None | (per_s, over_s),
            "minimum_strict": bool}
    a pro-rata level may carry a 4th item: only_below_target (bool).
    incidents: [{"id", "scope", "target", "start", "end" (None = open), "impact",
                 "gpus_affected", "category", "notice_at", "reported_at"}] with epoch seconds
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from zoneinfo import ZoneInfo


# --- interval lists -------------------------------------------------------------------

def union(ivs):
    out = []
    for s, e in sorted(iv for iv in ivs if iv[1] > iv[0]):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def intersect(a, b):
    out = []
    for s1, e1 in a:
        for s2, e2 in b:
            s, e = max(s1, s2), min(e1, e2)
            if e > s:
                out.append((s, e))
    return union(out)


def subtract(a, b):
    out = []
    for s, e in union(a):
        pieces = [(s, e)]
        for bs, be in b:
            nxt = []
            for ps, pe in pieces:
                if be <= ps or bs >= pe:
                    nxt.append((ps, pe))
                else:
                    if bs > ps:
                        nxt.append((ps, bs))
                    if be < pe:
                        nxt.append((be, pe))
            pieces = nxt
        out.extend(pieces)
    return union(out)


def measure(ivs, lo, hi):
    return sum(max(0, min(e, hi) - max(s, lo)) for s, e in union(ivs))


def covers(ivs, t):
    return any(s <= t < e for s, e in ivs)


def long_enough(ivs, min_len):
    return [iv for iv in union(ivs) if iv[1] - iv[0] >= min_len]


FOREVER = 10**12        # stands for "no bound" in service windows


def buckets_touching(ivs, lo, hi, size):
    """Indices of the clock buckets [lo + k size, lo + (k+1) size) that `ivs` touch inside [lo, hi)."""
    out = set()
    for s, e in union(ivs):
        s, e = max(s, lo), min(e, hi)
        if e > s:
            out.update(range((s - lo) // size, (e - 1 - lo) // size + 1))
    return sorted(out)


# --- calendar --------------------------------------------------------------------------

def month_start(year, month, zone):
    return int(datetime(year, month, 1, tzinfo=ZoneInfo(zone)).timestamp())


def month_of(t, zone):
    d = datetime.fromtimestamp(t, ZoneInfo(zone))
    y, m = d.year, d.month
    ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
    return (y, m), month_start(y, m, zone), month_start(ny, nm, zone)


# --- the computation -------------------------------------------------------------------

def _topology(spec):
    node_rack, rack_cluster, cluster_site = {}, {}, {}
    for site, clusters in spec["sites"].items():
        for cl, racks in clusters.items():
            cluster_site[cl] = site
            for rk, nodes in racks.items():
                rack_cluster[rk] = cl
                for n in nodes:
                    node_rack[n] = rk
    return node_rack, rack_cluster, cluster_site


def _chain(scope, unit, topo):
    """The unit itself and every unit above it, as (scope, id)."""
    node_rack, rack_cluster, cluster_site = topo
    out = [(scope, unit)]
    if scope == "node":
        unit = node_rack[unit]
        scope = "rack"
        out.append((scope, unit))
    if scope == "rack":
        unit = rack_cluster[unit]
        scope = "cluster"
        out.append((scope, unit))
    if scope == "cluster":
        out.append(("site", cluster_site[unit]))
    return out


def reference(spec, incidents, periods, as_of):
    """periods: [(label, start, end)]. Returns {label: {...figures...}}."""
    zone = spec["zone"]
    topo = _topology(spec)
    node_rack, rack_cluster, cluster_site = topo
    nodes = list(node_rack)
    racks = list(rack_cluster)
    clusters = list(cluster_site)
    sites = list(spec["sites"])
    mo = spec["min_outage"]
    windows = spec.get("windows") or {}

    # 8.1: service time of each unit: a node's window, the union of its nodes' windows above it
    def window(n):
        a, b = windows.get(n, (None, None))
        return [(-FOREVER if a is None else a, FOREVER if b is None else b)]

    # 1. rows with their counted and excluded parts
    rows = []
    for inc in incidents:
        end = as_of if inc["end"] is None else inc["end"]
        if spec.get("counts_from") == "report":       # 8.2: the clock starts at the report
            if inc.get("reported_at") is None:
                continue
            inc = {**inc, "start": max(inc["start"], inc["reported_at"])}
        if end <= inc["start"]:
            continue
        degraded = inc.get("impact") == "degraded"
        if degraded and spec["degraded"] == "ignore":
            continue
        lost = None
        if degraded and spec["degraded"] == "proportional":
            lost = inc.get("gpus_affected")
            lost = spec["gpus"] if lost is None else min(lost, spec["gpus"])
        rows.append({**inc, "end": end, "lost": lost, "counted": [], "excluded": []})

    capped_groups = {}
    for r in rows:
        cat = r.get("category") or "unplanned"
        iv = [(r["start"], r["end"])]
        if cat == "unplanned" or cat not in spec["exclusions"]:
            r["counted"] = iv
            continue
        notice, cap = spec["exclusions"][cat]
        if notice is not None and (r.get("notice_at") is None or r["notice_at"] > r["start"] - notice):
            r["counted"] = iv
            continue
        if cap is None:
            r["excluded"] = iv
            continue
        capped_groups.setdefault((cat, r["scope"], r["target"]), []).append(r)
    for (cat, _, _), group in capped_groups.items():
        cap = spec["exclusions"][cat][1]
        used = {}
        excl, over = [], []
        for s, e in union([(r["start"], r["end"]) for r in group]):
            t = s
            while t < e:
                key, _, m_end = month_of(t, zone)
                piece_end = min(e, m_end)
                left = max(0, cap - used.get(key, 0))
                take = min(left, piece_end - t)
                used[key] = used.get(key, 0) + take
                if take:
                    excl.append((t, t + take))
                if t + take < piece_end:
                    over.append((t + take, piece_end))
                t = piece_end
        for r in group:
            r["counted"] = intersect([(r["start"], r["end"])], over)
            r["excluded"] = intersect([(r["start"], r["end"])], excl)

    members_of = {"node": lambda u: [u], "rack": lambda u: [n for n in nodes if node_rack[n] == u],
                  "cluster": lambda u: [n for n in nodes if rack_cluster[node_rack[n]] == u],
                  "site": lambda u: [n for n in nodes if cluster_site[rack_cluster[node_rack[n]]] == u]}
    service = {(scope, u): union([w for n in members_of[scope](u) for w in window(n)])
               for scope, units in (("node", nodes), ("rack", racks), ("cluster", clusters), ("site", sites))
               for u in units}

    def parts(scope, unit, kind, down_only):
        out = []
        for r in rows:
            if (r["scope"], r["target"]) in _chain(scope, unit, topo):
                if down_only and r["lost"] is not None:
                    continue
                out.extend(r[kind])
        return intersect(out, service[(scope, unit)]) if windows else out

    # 3-4. nodes
    node_down = {n: long_enough(parts("node", n, "counted", True), mo) for n in nodes}

    def count_rule(members, intervals_of, test):
        """Times where test(number of members down) holds, from elementary segments."""
        points = sorted({t for m in members for iv in intervals_of[m] for t in iv})
        out = []
        for a, b in zip(points, points[1:]):
            down = sum(1 for m in members if covers(intervals_of[m], a))
            if test(down):
                out.append((a, b))
        return out

    # 5. racks
    rack_down = {}
    for rk in racks:
        own = parts("rack", rk, "counted", True)
        rule = []
        if spec["rack"] is not None:
            k = spec["rack"][0]
            rule = count_rule([n for n in nodes if node_rack[n] == rk], node_down, lambda d: d >= k)
        rack_down[rk] = long_enough(own + rule, mo)
    node_after_rack = {n: union(node_down[n] + (intersect(rack_down[node_rack[n]], window(n))
                                                  if spec["rack"] and spec["rack"][1] else [])) for n in nodes}

    def in_service_rule(members, intervals_of, service_of, test):
        """Times where test(members down, members in service) holds, from elementary segments."""
        points = sorted({t for m in members for iv in intervals_of[m] + service_of(m) for t in iv
                         if -FOREVER < t < FOREVER})
        out = []
        for a, b in zip(points, points[1:]):
            total = sum(1 for m in members if covers(service_of(m), a))
            down = sum(1 for m in members if covers(intervals_of[m], a))
            if total and test(down, total):
                out.append((a, b))
        return out
    # 6. clusters
    cluster_down = {}
    for cl in clusters:
        own = parts("cluster", cl, "counted", True)
        rule = []
        if spec["cluster"] is not None:
            pct = Fraction(spec["cluster"][0])
            members = [n for n in nodes if rack_cluster[node_rack[n]] == cl]
            total = len(members)
            if windows:      # 8.1: the share of in-service nodes that are up
                rule = in_service_rule(members, node_after_rack, window,
                                       lambda d, t: Fraction(t - d, t) * 100 < pct)
            else:
                rule = count_rule(members, node_after_rack, lambda d: Fraction(total - d, total) * 100 < pct)
        cluster_down[cl] = long_enough(own + rule, mo)
    node_final = {n: union(node_after_rack[n] + (intersect(cluster_down[rack_cluster[node_rack[n]]], window(n))
                                                 if spec["cluster"] and spec["cluster"][1] else []))
                  for n in nodes}
    # 7. sites
    site_down = {}
    for st in sites:
        own = parts("site", st, "counted", True)
        members = [c for c in clusters if cluster_site[c] == st]
        if windows:          # all of its clusters in service are down
            rule = in_service_rule(members, cluster_down, lambda c: service[("cluster", c)], lambda d, t: d == t)
        else:
            rule = count_rule(members, cluster_down, lambda d: d == len(members))
        site_down[st] = long_enough(own + rule, mo)

    # degraded pieces (proportional) per node: blocks shorter than min_outage dropped
    degraded = {}
    for n in nodes:
        pieces = []
        for r in rows:
            if r["lost"] is not None and (r["scope"], r["target"]) in _chain("node", n, topo):
                pieces.extend((s, e, r["lost"]) for s, e in intersect(r["counted"], window(n)))
        blocks = long_enough([(s, e) for s, e, _ in pieces], mo)
        degraded[n] = [p for p in pieces if any(bs <= p[0] and p[1] <= be for bs, be in blocks)]

    final = {"node": node_final, "rack": rack_down, "cluster": cluster_down, "site": site_down}
    units_of = {"node": nodes, "rack": racks, "cluster": clusters, "site": sites}
    g = spec["gpus"]
    price = Fraction(Decimal(spec["price"]))

    measure_rule = spec.get("measure")
    nc_rule = spec.get("not_charged")

    def bucketed(down, serv, ps, pe):
        """8.3: the sum of the in-service parts of the buckets that count."""
        size, mode = measure_rule
        total = 0
        for k in buckets_touching(down, ps, pe, size):
            bucket = [(ps + k * size, min(ps + (k + 1) * size, pe))]
            part = intersect(bucket, serv)
            length = measure(part, ps, pe)
            downed = measure(intersect(down, part), ps, pe)
            if length and (downed == length if mode == "full" else downed > 0):
                total += length
        return total

    out = {}
    for label, ps, pe in periods:
        M = pe - ps
        serv_s = {key: measure(iv, ps, pe) for key, iv in service.items()}
        # 8.1 and 8.5: each node's fee over its service time, less the buckets not charged
        fee, not_charged, charged = {}, {}, {}
        for n in nodes:
            fee[n] = price * g * Fraction(serv_s[("node", n)], 3600)
            nc_s = 0
            if nc_rule is not None:
                size, over = nc_rule
                for k in buckets_touching(node_final[n], ps, pe, size):
                    bucket = [(ps + k * size, min(ps + (k + 1) * size, pe))]
                    if measure(intersect(node_final[n], bucket), ps, pe) > over:
                        nc_s += measure(intersect(bucket, window(n)), ps, pe)
            not_charged[n] = price * g * Fraction(nc_s, 3600)
            charged[n] = fee[n] - not_charged[n]
        figures = {}
        shares = {n: [] for n in nodes}
        for scope, level in spec["levels"].items():
            for u in units_of[scope]:
                S = serv_s[(scope, u)]
                if S == 0:              # no service time this month: no unit-month
                    continue
                down = final[scope][u]
                if scope == "node" and spec["degraded"] == "proportional":
                    points = sorted({ps, pe} | {t for iv in down for t in iv}
                                    | {t for p in degraded[u] for t in p[:2]})
                    gpu_s = 0
                    for a, b in zip(points, points[1:]):
                        if a < ps or b > pe:
                            continue
                        if covers(down, a):
                            gpu_s += g * (b - a)
                        else:
                            active = [p[2] for p in degraded[u] if p[0] <= a < p[1]]
                            gpu_s += max(active, default=0) * (b - a)
                    loss = Fraction(gpu_s, g)
                elif measure_rule is not None:
                    loss = Fraction(bucketed(down, service[(scope, u)], ps, pe))
                else:
                    loss = Fraction(measure(down, ps, pe))
                avail = 1 - loss / S
                excluded = measure(subtract(parts(scope, u, "excluded",
                                                  scope != "node" and spec["degraded"] == "proportional"),
                                            down), ps, pe)
                kind, target, detail = level[:3]
                met = not avail * 100 < Fraction(Decimal(target))
                if kind == "tiers":
                    hits = [Fraction(Decimal(c)) for b, c in detail if avail * 100 < Fraction(Decimal(b))]
                    share = max(hits, default=Fraction(0)) / 100
                else:
                    share = min(Fraction(1), loss / S * Fraction(Decimal(detail)))
                    if len(level) > 3 and level[3] and met:       # 8.4
                        share = Fraction(0)
                unit_charged = sum((charged[n] for n in members_of[scope](u)), Fraction(0))
                figures[(scope, u)] = {"loss": loss, "excluded": excluded, "met": met, "service": S,
                                       "credit": _cents(share * unit_charged)}
                for n in members_of[scope](u):
                    shares[n].append(share)
        node_credit = {}
        for n in nodes:
            s = shares[n]
            share = max(s, default=Fraction(0)) if spec["stacking"] == "max" else min(Fraction(1), sum(s))
            node_credit[n] = _cents(share * charged[n])
        fee_total = sum(fee.values(), Fraction(0))
        uncapped = sum(node_credit.values())
        total = uncapped
        cap_applied = False
        if spec["cap"] is not None:
            charged_total = sum(charged.values(), Fraction(0))
            cap_cents = int(Fraction(Decimal(spec["cap"])) / 100 * charged_total * 100)   # floor (>= 0)
            cap_applied = uncapped > cap_cents
            total = min(total, cap_cents)
        minimum = Fraction(Decimal(spec["minimum"]))
        if spec.get("minimum_strict"):          # 8.6: issued only if more than the minimum
            minimum_applied = 0 < total and Fraction(total, 100) <= minimum
        else:
            minimum_applied = 0 < total and Fraction(total, 100) < minimum
        if minimum_applied:
            total = 0
        nc_cents = {n: _cents(x) for n, x in not_charged.items()}
        out[label] = {"units": figures, "node_credit": node_credit, "uncapped": uncapped, "total": total,
                      "cap_applied": cap_applied, "minimum_applied": minimum_applied,
                      "fee_total": _cents(fee_total), "not_charged": nc_cents,
                      "not_charged_total": sum(nc_cents.values()),
                      "node_service": {n: serv_s[("node", n)] for n in nodes}}
    return out


def _cents(amount: Fraction) -> int:
    """Round half-up to whole cents."""
    x = amount * 100
    return int((x + Fraction(1, 2)).__floor__())
