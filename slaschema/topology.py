"""The resolved node -> rack -> cluster -> site map that every calculator uses.

Hostlist expressions and inventory CSVs are expanded once, here, into flat tuples of
indices (so pandas/numpy code can gather by position) plus name -> index dicts.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from slaschema import hostlist
from slaschema.errors import Problem
from slaschema.models import Topology


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
            path_prefix: str = "topology") -> tuple[ResolvedTopology | None, list[Problem]]:
    """Expand a topology section; returns the map and every problem found."""
    if topology.inventory is not None:
        return _from_inventory(topology, base_dir or Path("."), path_prefix)
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
    default = topology.default_gpus
    budget = hostlist.Budget(what="one topology")     # every rack of the contract shares it
    total = 0
    for site in topology.sites or []:                 # counted before any rack is expanded
        for cl in site.clusters:
            for rack in cl.racks:
                try:
                    total += hostlist.count(rack.nodes)
                except hostlist.HostlistError:
                    pass                              # reported with its rack below
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
                try:
                    names = budget.expand(rack.nodes)
                except hostlist.HostlistError as e:
                    problems.append(Problem(e.code, str(e), file=file, path=where, value=e.expr,
                                            fix=_hostlist_fix(e.code)))
                    continue
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
                            topology.architecture), []


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


def _from_inventory(topology: Topology, base_dir: Path, prefix: str) -> tuple[ResolvedTopology | None, list[Problem]]:
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
    return parse_inventory(text, str(path), topology.default_gpus, topology.gpu_model, topology.architecture)


def parse_inventory(text: str, file: str, default_gpus: int, gpu_model: str | None = None,
                    architecture: str = "custom") -> tuple[ResolvedTopology | None, list[Problem]]:
    try:
        return _parse_inventory(text, file, default_gpus, gpu_model, architecture)
    except csv.Error as exc:
        return None, [Problem("inventory_syntax", f"not a readable CSV ({exc})", file=file,
                              fix="header node,rack,cluster,site[,gpus], one node per line")]


def _parse_inventory(text: str, file: str, default_gpus: int, gpu_model: str | None,
                     architecture: str) -> tuple[ResolvedTopology | None, list[Problem]]:
    problems: list[Problem] = []
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("node", "rack", "cluster", "site") if c not in header]
    if missing:
        # the header is not echoed: a file that is no inventory must not be shown back
        return None, [Problem("inventory_columns", f"inventory lacks columns {missing}", file=file, line=1,
                              fix="header must be node,rack,cluster,site[,gpus]")]
    nodes, gpus, node_rack = [], [], []
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
        for col in ("node", "rack", "cluster", "site"):
            if not row.get(col):
                problems.append(Problem("inventory_value", f"{col} is empty", file=file, row=rowno, column=col))
                bad = True
        g = default_gpus
        if row.get("gpus"):
            if not row["gpus"].isdigit() or not 1 <= int(row["gpus"]) <= 64:
                problems.append(Problem("inventory_value", "gpus must be a whole number 1-64", file=file,
                                        row=rowno, column="gpus", value=row["gpus"]))
                bad = True
            else:
                g = int(row["gpus"])
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
    if not nodes and not problems:
        problems.append(Problem("inventory_empty", "inventory has no rows", file=file))
    problems.extend(_duplicates(nodes, list(racks), list(clusters), list(sites), file, "inventory"))
    if problems:
        return None, problems
    return ResolvedTopology(tuple(nodes), tuple(gpus), tuple(node_rack), tuple(racks), tuple(rack_cluster),
                            tuple(clusters), tuple(cluster_site), tuple(sites), gpu_model, architecture), []
