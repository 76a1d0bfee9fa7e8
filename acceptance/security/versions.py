"""Version ordering for each scheme the security table uses, and which line a version is on.

Schemes:
- `dotted`: NVIDIA driver (`570.211.01`), CUDA (`13.0.88`), virtio-net (`25.10.6`). Numeric
  components compared as integers; missing trailing components count as zero.
- `firmware`: ConnectX/BlueField firmware `TRAIN.MINOR.SUBMINOR` as devices report it
  (`28.47.2526`). Tables also write a floor condensed as `TRAIN.MMSS` (`28.4702`): the two-digit
  minor followed by the leading digits of the four-digit sub-minor, i.e. `28.47.0200`. So
  `28.47.2526` >= `28.4702` > `28.41.1000`, and a three-field `28.4702.1000` (minor 4702) is above it.
- `semver`: runc, Docker, containerd, DCGM, dcgm-exporter, NVIDIA Container Toolkit. A
  leading `v` and `+build` metadata are ignored; a pre-release (`1.2.0-rc.1`) sorts before
  its release, identifiers compared as in semver 2.0.
- `debian`: Debian/Ubuntu package versions (`1:6.8.0-137.137~22.04.1`), ordered by
  python-debian's `debian.debian_support.Version` (epochs, `~` sorting before anything).

A line (branch, train, minor line) is the part of a version that a vendor patches
separately: NVIDIA driver branch = major (`570`), runc = `major.minor` (`1.2`), Docker
and containerd = major, firmware train = major (`28`), kernel = upstream version (`6.8.0`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import total_ordering

from debian.debian_support import Version as DebianVersion
from debian.debian_support import version_compare as debian_compare


class Scheme(StrEnum):
    DOTTED = "dotted"
    SEMVER = "semver"
    DEBIAN = "debian"
    FIRMWARE = "firmware"


class LineRule(StrEnum):
    NONE = "none"              # one minimum for every version
    MAJOR = "major"            # driver branch, Docker/containerd major, firmware train
    MAJOR_MINOR = "major_minor"  # runc minor line
    LTS_YEAR = "lts_year"      # virtio-net: LTS<major> when the table has it, else GA
    UPSTREAM = "upstream"      # Debian kernel package: upstream part before the revision


@dataclass(frozen=True)
class ComponentKind:
    scheme: Scheme
    line_rule: LineRule
    title: str


# Components the security table knows; a loaded table may carry others (kept, not judged).
COMPONENTS: dict[str, ComponentKind] = {
    "nvidia_driver": ComponentKind(Scheme.DOTTED, LineRule.MAJOR, "NVIDIA driver"),
    "cuda_toolkit": ComponentKind(Scheme.DOTTED, LineRule.NONE, "CUDA toolkit"),
    "nvidia_container_toolkit": ComponentKind(Scheme.SEMVER, LineRule.NONE, "NVIDIA Container Toolkit"),
    "runc": ComponentKind(Scheme.SEMVER, LineRule.MAJOR_MINOR, "runc"),
    "docker_engine": ComponentKind(Scheme.SEMVER, LineRule.MAJOR, "Docker Engine"),
    "containerd": ComponentKind(Scheme.SEMVER, LineRule.MAJOR_MINOR, "containerd"),
    "dcgm": ComponentKind(Scheme.SEMVER, LineRule.NONE, "DCGM"),
    "dcgm_exporter": ComponentKind(Scheme.SEMVER, LineRule.NONE, "dcgm-exporter"),
    "connectx_firmware": ComponentKind(Scheme.FIRMWARE, LineRule.MAJOR, "ConnectX/BlueField firmware"),
    "virtio_net_bluefield": ComponentKind(Scheme.DOTTED, LineRule.LTS_YEAR, "BlueField virtio-net"),
}
KERNEL_PREFIX = "linux_kernel_"   # linux_kernel_<distro>_<codename>, e.g. linux_kernel_ubuntu_noble


def component_kind(component: str) -> ComponentKind | None:
    if component in COMPONENTS:
        return COMPONENTS[component]
    if component.startswith(KERNEL_PREFIX):
        return ComponentKind(Scheme.DEBIAN, LineRule.UPSTREAM, "Linux kernel package")
    return None


class VersionError(ValueError):
    """A version string that does not fit its scheme."""

    def __init__(self, text: str, scheme: Scheme, why: str) -> None:
        super().__init__(f"{text!r} is not a {scheme} version: {why}")
        self.text = text
        self.scheme = scheme


_DOTTED = re.compile(r"^\s*[vV]?(\d+(?:\.\d+)*)\s*$")
_SEMVER = re.compile(
    r"^\s*[vV]?(?P<rel>\d+(?:\.\d+)*)(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+(?P<build>[0-9A-Za-z.-]+))?\s*$"
)

_DEBIAN = re.compile(r"^(?:\d+:)?\d[A-Za-z0-9.+~:-]*?(?:-[A-Za-z0-9.+~]+)?$")


def _release_key(release: str) -> tuple[int, ...]:
    parts = [int(p) for p in release.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _pre_key(pre: str | None) -> tuple:
    # A release sorts after all of its pre-releases: (1,) > (0, ...).
    if pre is None:
        return (1,)
    idents = []
    for ident in pre.split("."):
        # Numeric identifiers sort before alphanumeric ones (semver 2.0, rule 11).
        idents.append((0, int(ident), "") if ident.isdigit() else (1, 0, ident))
    return (0, tuple(idents))


@total_ordering
@dataclass(frozen=True, eq=False)
class ParsedVersion:
    """A version in one scheme; only versions of the same scheme compare."""

    text: str
    scheme: Scheme
    release: tuple[int, ...]      # numeric release part (upstream part for Debian)
    _key: tuple | None = None     # comparison key for dotted/semver; None for Debian

    def _check(self, other: object) -> ParsedVersion:
        if not isinstance(other, ParsedVersion):
            return NotImplemented  # type: ignore[return-value]
        if other.scheme is not self.scheme:
            raise TypeError(f"cannot compare a {self.scheme} version with a {other.scheme} version")
        return other

    def _cmp(self, other: ParsedVersion) -> int:
        if self.scheme is Scheme.DEBIAN:
            return debian_compare(self.text, other.text)
        assert self._key is not None and other._key is not None
        return (self._key > other._key) - (self._key < other._key)

    def __eq__(self, other: object) -> bool:
        o = self._check(other)
        if o is NotImplemented:
            return NotImplemented
        return self._cmp(o) == 0

    def __lt__(self, other: object) -> bool:
        o = self._check(other)
        if o is NotImplemented:
            return NotImplemented
        return self._cmp(o) < 0

    def __hash__(self) -> int:
        if self.scheme is Scheme.DEBIAN:
            # Equal Debian versions can differ in text (`1.0` vs `1.00`); hash the scheme only.
            return hash(self.scheme)
        return hash((self.scheme, self._key))

    def __str__(self) -> str:
        return self.text


def parse_version(text: str, scheme: Scheme | str) -> ParsedVersion:
    """Parse `text` in `scheme`; raises VersionError when it does not fit."""
    scheme = Scheme(scheme)
    raw = text.strip() if isinstance(text, str) else str(text)
    if not raw:
        raise VersionError(raw, scheme, "empty")
    if scheme is Scheme.DOTTED:
        m = _DOTTED.match(raw)
        if not m:
            raise VersionError(raw, scheme, "expected numbers separated by dots")
        rel = _release_key(m.group(1))
        return ParsedVersion(raw, scheme, tuple(int(p) for p in m.group(1).split(".")), (rel,))
    if scheme is Scheme.FIRMWARE:
        m = _DOTTED.match(raw)
        if not m:
            raise VersionError(raw, scheme, "expected TRAIN.MINOR.SUBMINOR or TRAIN.MMSS")
        fields = m.group(1).split(".")
        if len(fields) == 2 and len(fields[1]) > 2:
            condensed = fields[1]
            fields = [fields[0], condensed[:2], condensed[2:].ljust(4, "0")[:4] if condensed[2:] else "0"]
        nums = tuple(int(p) for p in fields)
        return ParsedVersion(raw, scheme, nums, (_release_key(".".join(map(str, nums))),))
    if scheme is Scheme.SEMVER:
        m = _SEMVER.match(raw)
        if not m:
            raise VersionError(raw, scheme, "expected MAJOR.MINOR.PATCH[-PRE][+BUILD]")
        pre = m.group("pre")
        if pre is not None and any(p == "" for p in pre.split(".")):
            raise VersionError(raw, scheme, "empty pre-release identifier")
        rel_parts = tuple(int(p) for p in m.group("rel").split("."))
        return ParsedVersion(raw, scheme, rel_parts, (_release_key(m.group("rel")), _pre_key(pre)))
    # Debian policy: [epoch:]upstream[-revision]; upstream starts with a digit.
    if not _DEBIAN.match(raw) or raw.endswith("-"):
        raise VersionError(raw, scheme, "expected [epoch:]upstream[-revision], upstream starting with a digit")
    try:
        dv = DebianVersion(raw)
    except ValueError as exc:
        raise VersionError(raw, scheme, str(exc)) from exc
    upstream = dv.upstream_version or ""
    m = re.match(r"\d+(?:\.\d+)*", upstream)
    return ParsedVersion(raw, scheme, tuple(int(p) for p in m.group(0).split(".")) if m else ())


def compare_versions(a: str, b: str, scheme: Scheme | str) -> int:
    """-1, 0 or 1 as `a` sorts before, equal to, or after `b` in `scheme`."""
    pa, pb = parse_version(a, scheme), parse_version(b, scheme)
    return -1 if pa < pb else (1 if pb < pa else 0)


def line_of(component: str, version: str, known_lines: frozenset[str] | set[str] = frozenset()) -> str:
    """The line (branch/train/minor line) `version` of `component` belongs to; "" for none."""
    kind = component_kind(component)
    if kind is None or kind.line_rule is LineRule.NONE:
        return ""
    pv = parse_version(version, kind.scheme)
    if kind.line_rule is LineRule.MAJOR:
        return str(pv.release[0])
    if kind.line_rule is LineRule.MAJOR_MINOR:
        minor = pv.release[1] if len(pv.release) > 1 else 0
        return f"{pv.release[0]}.{minor}"
    if kind.line_rule is LineRule.LTS_YEAR:
        lts = f"LTS{pv.release[0]}"
        return lts if lts in known_lines or not known_lines else "GA"
    # UPSTREAM: Debian kernel package `6.8.0-137.137` -> `6.8.0`
    dv = DebianVersion(pv.text)
    return dv.upstream_version or ""


def line_sort_key(line: str) -> tuple:
    """Orders lines numerically where they are numeric (`1.10` after `1.9`, `570` after `535`)."""
    m = re.fullmatch(r"[A-Za-z]*(\d+(?:\.\d+)*)", line)
    if m:
        return (0, tuple(int(p) for p in m.group(1).split(".")), line)
    return (1, (), line)
