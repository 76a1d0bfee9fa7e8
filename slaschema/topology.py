"""The resolved node -> rack -> cluster -> site map that every calculator uses.

Hostlist expressions and inventory CSVs are expanded once, here, into flat tuples of
indices (so pandas/numpy code can gather by position) plus name -> index dicts.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from slaschema import hostlist
from slaschema.errors import Problem
from pydantic_core import PydanticCustomError

from slaschema.models import SCOPES, NodeEntry, Topology
from slaschema.types import instant_epoch, parse_date_or_instant


@dataclass(frozen=True)
class ResolvedTopology:
    nodes: tuple[str, ...]
    node_gpus: tuple[int, ...]
    node_rack: tuple[int, ...]            # index into racks
    racks: tuple[str, ...]
    rack_cluster: tuple[int, ...]         # index into clusters
    clusters: tuple[str, ...]
    cluster_site: tuple[int, ...]         # index into sites
    sites: tuple[str, ...]
    gpu_model: str | None = None
    architecture: str = "custom"
    node_service: tuple[tuple[Any, Any], ...] | None = None
    """Revision 1.1: per node its service window `(from, to)` as written (a `date`, an aware
    `datetime` or None); None when no node has one. Dates become local midnight in the
    contract's zone where the engine uses them (`slaschema.types.instant_epoch`)."""

    # -- lookups ------------------------------------------------------------------
    @cached_property
    def node_index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.nodes)}

    @cached_property
    def rack_index(self) -> dict[str, int]:
        return {r: i for i, r in enumerate(self.racks)}

    @cached_property
    def cluster_index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.clusters)}

    @cached_property
    def site_index(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self.sites)}

    def index_of(self, scope: str) -> dict[str, int]:
        return {"node": self.node_index, "rack": self.rack_index,
                "cluster": self.cluster_index, "site": self.site_index}[scope]

    def units(self, scope: str) -> tuple[str, ...]:
        return {"node": self.nodes, "rack": self.racks, "cluster": self.clusters, "site": self.sites}[scope]

    @cached_property
    def node_cluster(self) -> tuple[int, ...]:
        return tuple(self.rack_cluster[r] for r in self.node_rack)

    @cached_property
    def node_site(self) -> tuple[int, ...]:
        return tuple(self.cluster_site[c] for c in self.node_cluster)

    @cached_property
    def rack_nodes(self) -> tuple[tuple[int, ...], ...]:
        out: list[list[int]] = [[] for _ in self.racks]
        for i, r in enumerate(self.node_rack):
            out[r].append(i)
        return tuple(tuple(x) for x in out)

    def nodes_of(self, scope: str, unit: str) -> list[str]:
        """Names of the nodes a unit covers."""
        if scope == "node":
            return [unit]
        idx = self.index_of(scope)[unit]
        owner = {"rack": self.node_rack, "cluster": self.node_cluster, "site": self.node_site}[scope]
        return [n for n, o in zip(self.nodes, owner) if o == idx]

    def parent(self, scope: str, unit: str) -> dict[str, str]:
        """The rack/cluster/site a unit belongs to."""
        out: dict[str, str] = {}
        if scope == "node":
            i = self.node_index[unit]
            out["rack"] = self.racks[self.node_rack[i]]
            scope, unit = "rack", out["rack"]
        if scope == "rack":
            c = self.rack_cluster[self.rack_index[unit]]
            out["cluster"] = self.clusters[c]
            scope, unit = "cluster", out["cluster"]
        if scope == "cluster":
            out["site"] = self.sites[self.cluster_site[self.cluster_index[unit]]]
        return out

    @property
    def gpu_count(self) -> int:
        return sum(self.node_gpus)

    def counts(self) -> dict[str, int]:
        return {"sites": len(self.sites), "clusters": len(self.clusters), "racks": len(self.racks),
                "nodes": len(self.nodes), "gpus": self.gpu_count}

    def nodes_per_rack(self) -> list[int]:
        return [len(x) for x in self.rack_nodes]


def resolve(topology: Topology, base_dir: Path | None = None, file: str | None = None,
            path_prefix: str = "topology", zone: str = "UTC") -> tuple[ResolvedTopology | None, list[Problem]]:
    """Expand a topology section; returns the map and every problem found. `zone` (the
    contract's) places dates of service windows when their order is checked."""
    if topology.inventory is not None:
        return _from_inventory(topology, base_dir or Path("."), path_prefix, zone)
    problems: list[Problem] = []
    nodes: list[str] = []
    gpus: list[int] = []
    node_rack: list[int] = []
    racks: list[str] = []
    rack_cluster: list[int] = []
    clusters: list[str] = []
    cluster_site: list[int] = []
    sites: list[str] = []
    node_where: list[str] = []
    windows: list[tuple[Any, Any]] = []
    any_window = False
    default = topology.default_gpus
    budget = hostlist.Budget(what="one topology")     # every rack of the contract shares it
    total = 0
    for site in topology.sites or []:                 # counted before any rack is expanded
        for cl in site.clusters:
            for rack in cl.racks:
                for entry in ([rack.nodes] if isinstance(rack.nodes, str) else rack.nodes):
                    try:
                        total += hostlist.count(entry.name if isinstance(entry, NodeEntry) else entry)
                    except hostlist.HostlistError:
                        pass                          # reported with its rack below
    if total > budget.limit:
        return None, [Problem("hostlist_too_large", f"the racks name {total:,} nodes together; one topology may "
                              f"name at most {budget.limit:,}", file=file, path=f"{path_prefix}.sites",
                              value=total, fix=_hostlist_fix("hostlist_too_large"))]
    for si, site in enumerate(topology.sites or []):
        sites.append(site.id)
        for ci, cl in enumerate(site.clusters):
            cluster_site.append(len(sites) - 1)
            clusters.append(cl.id)
            for ri, rack in enumerate(cl.racks):
                rack_cluster.append(len(clusters) - 1)
                racks.append(rack.id)
                where = f"{path_prefix}.sites[{si}].clusters[{ci}].racks[{ri}].nodes"
                rack_window = ((rack.in_service.from_, rack.in_service.to) if rack.in_service is not None
                               else (None, None))
                if rack_window[0] is not None and rack_window[1] is not None and \
                        not window_ordered(rack_window[0], rack_window[1], zone):
                    problems.append(_order_problem(file, f"{path_prefix}.sites[{si}].clusters[{ci}].racks[{ri}]"
                                                         ".in_service.to", rack_window[1]))
                entries = [rack.nodes] if isinstance(rack.nodes, str) else rack.nodes
                names = []
                rack_windows: list[tuple[Any, Any]] = []
                failed = False
                for k, entry in enumerate(entries):
                    expr = entry.name if isinstance(entry, NodeEntry) else entry
                    own = entry.in_service if isinstance(entry, NodeEntry) else None
                    try:
                        got = budget.expand(expr)
                    except hostlist.HostlistError as e:
                        at = where if isinstance(rack.nodes, str) else f"{where}[{k}]"
                        problems.append(Problem(e.code, str(e), file=file, path=at, value=e.expr,
                                                fix=_hostlist_fix(e.code)))
                        failed = True
                        continue
                    names.extend(got)
                    w = (own.from_, own.to) if own is not None else rack_window
                    if own is not None and own.from_ is not None and own.to is not None and \
                            not window_ordered(own.from_, own.to, zone):
                        problems.append(_order_problem(file, f"{where}[{k}].in_service.to", own.to))
                    rack_windows.extend([w] * len(got))
                if failed:
                    continue
                any_window = any_window or any(w != (None, None) for w in rack_windows)
                windows.extend(rack_windows)
                if not names:
                    problems.append(Problem("rack_empty", "rack has no nodes", file=file, path=where))
                g = rack.gpus_per_node or default
                node_where.extend([where] * len(names))
                nodes.extend(names)
                gpus.extend([g] * len(names))
                node_rack.extend([len(racks) - 1] * len(names))
    problems.extend(_duplicates(nodes, racks, clusters, sites, file, path_prefix, node_where))
    if problems:
        return None, problems
    return ResolvedTopology(tuple(nodes), tuple(gpus), tuple(node_rack), tuple(racks), tuple(rack_cluster),
                            tuple(clusters), tuple(cluster_site), tuple(sites), topology.gpu_model,
                            topology.architecture, tuple(windows) if any_window else None), []


def _hostlist_fix(code: str) -> str:
    if code == "hostlist_too_large":
        return ("check the ranges; a larger cluster needs `slakit --max-nodes N` "
                f"(default {hostlist.DEFAULT_MAX_NODES:,}) or an inventory CSV")
    return "write e.g. r01-n[01-18] or gpu-[001-004,010]"


def _duplicates(nodes, racks, clusters, sites, file, prefix, node_where=None) -> list[Problem]:
    """Every id that repeats; node repeats point at the rack that lists the name again."""
    problems = []
    if node_where is not None and len(set(nodes)) != len(nodes):
        first: dict[str, str] = {}
        for name, where in zip(nodes, node_where):
            if name in first:
                problems.append(Problem(
                    "duplicate_unit", f"node {name!r} is already listed at {first[name]}", file=file,
                    path=where, value=name, fix="hostlists of different racks must not overlap"))
            else:
                first[name] = where
        nodes = list(dict.fromkeys(nodes))
    seen: dict[str, str] = {}
    for scope, names in (("site", sites), ("cluster", clusters), ("rack", racks), ("node", nodes)):
        counts = Counter(names)
        for name, n in counts.items():
            if n > 1:
                problems.append(Problem(
                    "duplicate_unit", f"{scope} id {name!r} is listed {n} times", file=file, path=prefix,
                    value=name, fix="every node, rack, cluster and site id must be unique (check overlapping hostlists)"))
            if name in seen and seen[name] != scope:
                problems.append(Problem(
                    "duplicate_unit", f"id {name!r} names both a {seen[name]} and a {scope}", file=file,
                    path=prefix, value=name, fix="use distinct ids so incident targets are unambiguous"))
            seen.setdefault(name, scope)
    return problems


_UNIT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z")    # slaschema.models: rack, cluster and site ids
_NODE_NAME = re.compile(r"^[A-Za-z0-9._-]+\Z")               # slaschema.hostlist: a host name
_ID_RULE = ("ids use letters, digits, '.', '_' and '-' and start with a letter or digit",
            "node names use letters, digits, '.', '_' and '-'")


def _from_inventory(topology: Topology, base_dir: Path, prefix: str,
                    zone: str = "UTC") -> tuple[ResolvedTopology | None, list[Problem]]:
    from slaschema.errors import InputError
    from slaschema.safefiles import decode_utf8, read_named

    fname = str(topology.inventory)
    field = f"{prefix}.inventory"
    try:
        data = read_named(fname, base_dir=base_dir, what="inventory", field=field)
        text = decode_utf8(data, shown=fname, what="inventory", field=field)
    except InputError as exc:
        problems = []
        for p in exc.problems:
            if p.code == "file_not_found":
                p = Problem("inventory_missing", f"inventory file {fname!r} not found next to the contract",
                            path=field, value=fname, fix="give a path relative to the contract file")
            problems.append(p)
        return None, problems
    path = (base_dir / fname).resolve()
    return parse_inventory(text, str(path), topology.default_gpus, topology.gpu_model, topology.architecture, zone)


def parse_inventory(text: str, file: str, default_gpus: int, gpu_model: str | None = None,
                    architecture: str = "custom", zone: str = "UTC") -> tuple[ResolvedTopology | None, list[Problem]]:
    """Rows of node,rack,cluster,site[,gpus][,in_service_from,in_service_to] (revision 1.1:
    the service window columns take a date, local midnight in `zone`, or a timestamp)."""
    try:
        return _parse_inventory(text, file, default_gpus, gpu_model, architecture, zone)
    except csv.Error as exc:
        return None, [Problem("inventory_syntax", f"not a readable CSV ({exc})", file=file,
                              fix="header node,rack,cluster,site[,gpus], one node per line")]


def _parse_inventory(text: str, file: str, default_gpus: int, gpu_model: str | None,
                     architecture: str, zone: str) -> tuple[ResolvedTopology | None, list[Problem]]:
    problems: list[Problem] = []
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in SCOPES if c not in header]          # a column per scope
    if missing:
        # the header is not echoed: a file that is no inventory must not be shown back
        return None, [Problem("inventory_columns", f"inventory lacks columns {missing}", file=file, line=1,
                              fix="header must be node,rack,cluster,site[,gpus][,in_service_from,in_service_to]")]
    nodes, gpus, node_rack = [], [], []
    windows: list[tuple[Any, Any]] = []
    racks: dict[str, int] = {}
    rack_cluster: list[int] = []
    clusters: dict[str, int] = {}
    cluster_site: list[int] = []
    sites: dict[str, int] = {}
    rack_parent: dict[str, str] = {}
    cluster_parent: dict[str, str] = {}
    limit = hostlist.max_nodes()
    for rowno, raw in enumerate(reader, start=1):
        if rowno > limit:
            problems.append(Problem("hostlist_too_large", f"inventory lists more than {limit:,} nodes",
                                    file=file, row=rowno, fix=_hostlist_fix("hostlist_too_large")))
            break
        row = {k.strip(): (v or "").strip() for k, v in raw.items() if k}
        bad = False
        if raw.get(None):              # cells past the header's: DictReader kept them under None
            problems.append(Problem("inventory_syntax", f"the row has {len(reader.fieldnames) + len(raw[None])} "
                                    f"cells, the header has {len(reader.fieldnames)}", file=file, row=rowno,
                                    fix="quote a cell that holds a comma, or remove the extra cells"))
            bad = True
        for col in SCOPES:
            if not row.get(col):
                problems.append(Problem("inventory_value", f"{col} is empty", file=file, row=rowno, column=col))
                bad = True
            elif not (_NODE_NAME if col == "node" else _UNIT_ID).match(row[col]):
                # as the contract's own ids and hostlists: no spaces, controls, bidi or zero-width
                # characters that make two ids look alike
                problems.append(Problem("id_invalid", _ID_RULE[col == "node"], file=file, row=rowno, column=col,
                                        value=row[col], fix="remove spaces and invisible or control characters "
                                                            "(e.g. r01-n07, r01, c1)"))
                bad = True
        g = default_gpus
        if row.get("gpus"):
            if not row["gpus"].isdigit() or not 1 <= int(row["gpus"]) <= 64:
                problems.append(Problem("inventory_value", "gpus must be a whole number 1-64", file=file,
                                        row=rowno, column="gpus", value=row["gpus"]))
                bad = True
            else:
                g = int(row["gpus"])
        window = []
        for col in ("in_service_from", "in_service_to"):
            text = row.get(col) or ""
            if not text:
                window.append(None)
                continue
            try:
                window.append(parse_date_or_instant(text))
            except PydanticCustomError as e:
                problems.append(Problem(e.type, e.message(), file=file, row=rowno, column=col, value=text,
                                        fix="write a date YYYY-MM-DD or a timestamp with an offset, "
                                            "e.g. 2027-03-10T12:00:00-06:00"))
                bad = True
        if not bad and window[0] is not None and window[1] is not None and \
                not window_ordered(window[0], window[1], zone):
            problems.append(Problem("service_window_order", "in_service_to is not after in_service_from",
                                    file=file, row=rowno, column="in_service_to", value=row["in_service_to"],
                                    fix="the window is [from, to): give a `to` after `from`"))
            bad = True
        if bad:
            continue
        site, cl, rk = row["site"], row["cluster"], row["rack"]
        if cl in cluster_parent and cluster_parent[cl] != site:
            problems.append(Problem("inventory_parent", f"cluster {cl!r} is in two sites", file=file,
                                    row=rowno, column="site", value=site))
            continue
        if rk in rack_parent and rack_parent[rk] != cl:
            problems.append(Problem("inventory_parent", f"rack {rk!r} is in two clusters", file=file,
                                    row=rowno, column="cluster", value=cl))
            continue
        if site not in sites:
            sites[site] = len(sites)
        if cl not in clusters:
            clusters[cl] = len(clusters)
            cluster_site.append(sites[site])
            cluster_parent[cl] = site
        if rk not in racks:
            racks[rk] = len(racks)
            rack_cluster.append(clusters[cl])
            rack_parent[rk] = cl
        nodes.append(row["node"])
        gpus.append(g)
        node_rack.append(racks[rk])
        windows.append((window[0], window[1]))
    if not nodes and not problems:
        problems.append(Problem("inventory_empty", "inventory has no rows", file=file))
    problems.extend(_duplicates(nodes, list(racks), list(clusters), list(sites), file, "inventory"))
    if problems:
        return None, problems
    any_window = any(w != (None, None) for w in windows)
    return ResolvedTopology(tuple(nodes), tuple(gpus), tuple(node_rack), tuple(racks), tuple(rack_cluster),
                            tuple(clusters), tuple(cluster_site), tuple(sites), gpu_model, architecture,
                            tuple(windows) if any_window else None), []


def _order_problem(file, path: str, value) -> Problem:
    return Problem("service_window_order", "`to` is not after `from`: the service window would be empty",
                   file=file, path=path, value=value.isoformat(),
                   fix="the window is [from, to): give a `to` after `from` (a date means midnight)")


def window_ordered(start, end, zone: str) -> bool:
    """`end` after `start` (dates are midnight in `zone`)."""
    return instant_epoch(end, zone) > instant_epoch(start, zone)
