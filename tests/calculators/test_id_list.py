"""`engine.IdList` (a table's units' incident ids, read lazily) answers every operation of a
tuple as the tuple of the same ids answers it: the same value, or the same kind of error."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from calculators.engine import IdList

NAMES = np.array(["INC-4", "INC-1", "INC-9", "INC-2", "INC-7"], dtype=object)
CODES = np.array([3, 0, 4, 1], dtype=np.int64)
WANT = ("INC-2", "INC-4", "INC-7", "INC-1")

OPERATIONS = {
    "equal": lambda x: x == WANT, "equal, reversed": lambda x: WANT == x, "not equal": lambda x: x != WANT,
    "equal to a list": lambda x: x == list(WANT), "hash": hash, "len": len, "bool": bool,
    "index 0": lambda x: x[0], "index -1": lambda x: x[-1], "index -4": lambda x: x[-4],
    "index True": lambda x: x[True], "index numpy int": lambda x: x[np.int64(2)],
    "index 4": lambda x: x[4], "index -5": lambda x: x[-5], "index 1.0": lambda x: x[1.0],
    "index '1'": lambda x: x["1"], "index None": lambda x: x[None],
    "slice": lambda x: x[1:3], "slice reversed": lambda x: x[::-1], "slice past the end": lambda x: x[7:9],
    "in": lambda x: "INC-7" in x, "not in": lambda x: "INC-9" in x, "iterate": list, "reversed": lambda x: list(reversed(x)),
    "repr": repr, "str": str, "index of": lambda x: x.index("INC-7"), "count": lambda x: x.count("INC-4"),
    "index of a missing id": lambda x: x.index("INC-9"),
    "less than": lambda x: x < ("INC-3",), "less than, reversed": lambda x: ("INC-3",) < x,
    "at most": lambda x: x <= WANT, "greater than": lambda x: x > ("INC-2",), "at least": lambda x: x >= WANT,
    "less than a list": lambda x: x < ["INC-3"], "sorted with tuples": lambda x: sorted([("INC-3",), x, ()]),
    "plus a tuple": lambda x: x + ("INC-5",), "a tuple plus": lambda x: ("INC-5",) + x, "plus itself": lambda x: x + x,
    "plus a list": lambda x: x + ["INC-5"], "times 2": lambda x: x * 2, "2 times": lambda x: 2 * x,
    "times a float": lambda x: x * 1.5, "pickled": lambda x: pickle.loads(pickle.dumps(x)) == WANT,
    "a set with the tuple": lambda x: len({x, WANT}), "a dict key": lambda x: {WANT: 1}[x],
}


def _outcome(fn, value):
    try:
        return "value", fn(value)
    except Exception as e:                  # the kind of error is what is compared
        return "error", type(e)


@pytest.mark.parametrize("lazy_first", [True, False], ids=["lazy", "after reading all"])
@pytest.mark.parametrize("name", list(OPERATIONS))
def test_id_list_answers_as_the_tuple(name, lazy_first):
    ids = IdList(CODES, NAMES)
    if not lazy_first:
        list(ids)                                       # the ids made strings: answered from the tuple
    got, want = _outcome(OPERATIONS[name], ids), _outcome(OPERATIONS[name], WANT)
    assert got == want, f"{name}: {got} != {want}"


def test_an_empty_id_list_is_the_empty_tuple():
    ids = IdList(np.zeros(0, dtype=np.int64), NAMES)
    assert ids == () and not ids and len(ids) == 0 and ids[:3] == () and hash(ids) == hash(())
    with pytest.raises(IndexError):
        ids[0]


def test_a_pickled_id_list_is_its_tuple_without_the_logs_other_ids():
    """A record of a table's unit pickled (sent to another process) carries that unit's ids,
    not the log's table of every id that its codes index."""
    names = np.array([f"INC-{k}" for k in range(100_000)], dtype=object)
    ids = IdList(np.array([99_999, 5, 7], dtype=np.int64), names)
    data = pickle.dumps(ids)
    back = pickle.loads(data)
    assert back == ("INC-99999", "INC-5", "INC-7") == ids and type(back) is tuple
    assert len(data) < 2 * len(pickle.dumps(("INC-99999", "INC-5", "INC-7")))


def test_records_take_negative_indices_as_a_list_does():
    """`ScopeMonth.records(pr, [-1])` is the last unit's record, with its incident ids (as
    `records(pr, [n - 1])` gives them); an index out of range is an IndexError."""
    import pytest

    from calculators.engine import compute
    from calculators.incidents import IncidentLog
    from calculators.periods import parse_periods
    from tests.calculators.helpers import EXAMPLE_CONTRACT, contract

    lc = contract(EXAMPLE_CONTRACT)
    last = lc.topology.units("node")[-1]
    import pandas as pd

    log = IncidentLog.from_records(pd.DataFrame({"id": ["A"], "scope": ["node"], "target": [last],
                                                 "start": ["2027-02-01T10:00:00Z"], "end": ["2027-02-01T12:00:00Z"]}),
                                   lc.topology)
    result = compute(lc, log, parse_periods(["2027-02"], lc.model.contract.timezone), support=False)
    pr = result.periods[0]
    sm = pr.scopes["node"]
    n = len(sm.ids)
    (by_end,), (by_start,) = sm.records(pr, [-1]), sm.records(pr, [n - 1])
    assert by_end == by_start and by_end.id == last and by_end.incidents == ("A",)
    with pytest.raises(IndexError):
        sm.records(pr, [n])
    with pytest.raises(IndexError):
        sm.records(pr, [-n - 1])
