"""Version ordering per scheme: known tricky pairs and order laws (hypothesis)."""

from __future__ import annotations

import pytest
from debian.debian_support import Version as DebianVersion
from hypothesis import given, settings
from hypothesis import strategies as s

from acceptance.security.versions import (
    Scheme,
    VersionError,
    compare_versions,
    line_of,
    line_sort_key,
    parse_version,
)

TRICKY = [
    # (scheme, lower, higher)
    ("dotted", "570.86.15", "570.211.01"),       # numeric, not lexical
    ("dotted", "570.211.01", "580.65.06"),
    ("dotted", "535.309.01", "535.309.2"),       # "01" is 1
    ("dotted", "13.0.88", "13.1"),                # CUDA toolkit V13.0.88 vs floor 13.1
    ("dotted", "9.2", "10.0"),
    ("semver", "1.2.8", "1.2.10"),                # runc minor line
    ("semver", "1.2.9", "1.2.10"),
    ("semver", "1.3.0-rc.1", "1.3.0"),            # pre-release before release
    ("semver", "1.3.0-rc.2", "1.3.0-rc.10"),
    ("semver", "1.3.0-alpha", "1.3.0-alpha.1"),
    ("semver", "1.3.0-1", "1.3.0-alpha"),         # numeric identifiers before alphanumeric
    ("semver", "v29.6.9", "29.7.0"),
    ("firmware", "28.41.1000", "28.4702"),        # condensed floor: 28.47.02xx
    ("firmware", "28.47.0100", "28.4702"),
    ("firmware", "28.4702", "28.47.2526"),
    ("firmware", "28.4702", "28.4702.1000"),
    ("debian", "6.8.0-124.124", "6.8.0-137.137"),
    ("debian", "6.8.0-137.137~22.04.1", "6.8.0-137.137"),  # ~ sorts before anything
    ("debian", "1.0~rc1", "1.0"),
    ("debian", "1.0~~", "1.0~"),
    ("debian", "1.0", "1.0+deb12u1"),
    ("debian", "9.9-1", "1:0.1-1"),               # epoch wins
    ("debian", "6.1.187-1", "6.1.1870-1"),
    ("debian", "2.30-1", "2.30a-1"),
]


@pytest.mark.parametrize("scheme,lo,hi", TRICKY)
def test_known_pairs(scheme, lo, hi):
    assert compare_versions(lo, hi, scheme) == -1
    assert compare_versions(hi, lo, scheme) == 1
    assert parse_version(lo, scheme) < parse_version(hi, scheme)


@pytest.mark.parametrize("scheme,a,b", [
    ("dotted", "28.4702", "28.4702.0"),
    ("dotted", "13.1", "13.1.0"),
    ("semver", "1.2.8", "v1.2.8+build.5"),
    ("firmware", "28.4702", "28.47.0200"),
    ("debian", "1.0", "0:1.0"),
])
def test_equal_spellings(scheme, a, b):
    assert compare_versions(a, b, scheme) == 0
    assert parse_version(a, scheme) == parse_version(b, scheme)
    assert hash(parse_version(a, scheme)) == hash(parse_version(b, scheme))


@pytest.mark.parametrize("scheme,text", [
    ("dotted", "570.x"), ("dotted", ""), ("semver", "1.2.8-"), ("semver", "1..2"),
    ("firmware", "fw-28"), ("debian", "1.0-"), ("debian", "abc"),
])
def test_malformed(scheme, text):
    with pytest.raises(VersionError):
        parse_version(text, scheme)


def test_schemes_do_not_mix():
    with pytest.raises(TypeError):
        parse_version("1.2.3", "dotted") < parse_version("1.2.3", "semver")  # noqa: B015


@pytest.mark.parametrize("component,version,line", [
    ("nvidia_driver", "570.211.01", "570"),
    ("runc", "1.2.10", "1.2"),
    ("runc", "1.3.0-rc.1", "1.3"),
    ("docker_engine", "29.7.0", "29"),
    ("connectx_firmware", "28.47.2526", "28"),
    ("connectx_firmware", "28.4702", "28"),
    ("linux_kernel_ubuntu_noble", "6.8.0-137.137", "6.8.0"),
    ("cuda_toolkit", "13.0.88", ""),
])
def test_lines(component, version, line):
    assert line_of(component, version) == line


def test_virtio_line_uses_the_table_lines():
    lines = {"LTS23", "LTS24", "LTS25", "GA"}
    assert line_of("virtio_net_bluefield", "24.10.50", lines) == "LTS24"
    assert line_of("virtio_net_bluefield", "26.4.1", lines) == "GA"


def test_line_sort_key_is_numeric():
    assert sorted(["1.10", "1.2", "1.9"], key=line_sort_key) == ["1.2", "1.9", "1.10"]
    assert sorted(["595", "535", "1000"], key=line_sort_key) == ["535", "595", "1000"]


# ---------------------------------------------------------------- order laws

nums = s.integers(min_value=0, max_value=300)
dotted = s.lists(nums, min_size=1, max_size=4).map(lambda xs: ".".join(map(str, xs)))
firmware = s.one_of(
    s.tuples(s.integers(10, 50), s.integers(10, 49), s.integers(0, 9999)).map(lambda t: f"{t[0]}.{t[1]}.{t[2]:04d}"),
    s.tuples(s.integers(10, 50), s.integers(10, 49), s.integers(0, 99)).map(lambda t: f"{t[0]}.{t[1]}{t[2]:02d}"),
)
ident = s.one_of(s.integers(0, 20).map(str), s.sampled_from(["alpha", "beta", "rc", "a1", "x-y"]))
semver = s.tuples(
    s.lists(nums, min_size=1, max_size=3).map(lambda xs: ".".join(map(str, xs))),
    s.one_of(s.none(), s.lists(ident, min_size=1, max_size=3).map(".".join)),
).map(lambda t: t[0] + (f"-{t[1]}" if t[1] else ""))
deb_chars = s.sampled_from(list("0123456789.+~") + ["a", "b", "z"])
debian = s.tuples(
    s.one_of(s.none(), s.integers(0, 3)),
    s.integers(0, 20).map(str),
    s.text(deb_chars, max_size=5),
    s.one_of(s.none(), s.text(s.sampled_from(list("0123456789.+~ab")), min_size=1, max_size=4)),
).map(lambda t: (f"{t[0]}:" if t[0] is not None else "") + t[1] + t[2] + (f"-{t[3]}" if t[3] else ""))

STRATEGIES = {"dotted": dotted, "firmware": firmware, "semver": semver, "debian": debian}


def _valid(scheme, text):
    try:
        return parse_version(text, scheme)
    except VersionError:
        return None


@pytest.mark.parametrize("scheme", list(STRATEGIES))
def test_order_laws(scheme):
    strat = STRATEGIES[scheme]

    @settings(max_examples=150, deadline=None)
    @given(strat, strat, strat)
    def laws(a, b, c):
        pa, pb, pc = (_valid(scheme, x) for x in (a, b, c))
        if None in (pa, pb, pc):
            return
        # totality: exactly one of <, ==, >
        assert [pa < pb, pa == pb, pb < pa].count(True) == 1
        # antisymmetry
        if pa <= pb and pb <= pa:
            assert pa == pb
        # transitivity
        if pa <= pb and pb <= pc:
            assert pa <= pc
        # sorting agrees with pairwise comparison
        ordered = sorted([pa, pb, pc])
        assert ordered[0] <= ordered[1] <= ordered[2]

    laws()


@settings(max_examples=200, deadline=None)
@given(debian, debian)
def test_debian_matches_python_debian(a, b):
    pa, pb = _valid("debian", a), _valid("debian", b)
    if pa is None or pb is None:
        return
    da, db = DebianVersion(a), DebianVersion(b)
    assert (pa < pb) == (da < db)
    assert (pa == pb) == (da == db)


@settings(max_examples=150, deadline=None)
@given(debian)
def test_tilde_sorts_before_anything(v):
    pv = _valid("debian", v)
    if pv is None or "-" in v.split(":", 1)[-1]:
        return
    # Appending ~X to the upstream part always gives an earlier version, appending anything else a later one.
    lower = _valid("debian", v + "~rc1")
    higher = _valid("debian", v + "+1")
    if lower is not None:
        assert lower < pv
    if higher is not None:
        assert pv < higher


@settings(max_examples=150, deadline=None)
@given(s.lists(nums, min_size=1, max_size=3), nums)
def test_semver_prerelease_before_release(rel, n):
    base = ".".join(map(str, rel))
    assert parse_version(f"{base}-rc.{n}", Scheme.SEMVER) < parse_version(base, Scheme.SEMVER)
