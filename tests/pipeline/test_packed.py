"""`worktasks.Packed`: a Dask task's answer of many small objects, sent by columns where it is
a dict or list of dataclass instances, opens as the very objects unpickling would give: the same
classes, fields in the same order, equal values (NaN, -0.0 and None kept), arrays of the same
dtype and shape, each row's array its own. Anything else travels as a plain pickle."""
from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest

from gjkcli.engine.exact import ExactResult
from gjkcli.engine.results import PlaneCertificate, PointCertificate, Result, Status
from gjkcli.pipeline.worktasks import ColumnResults, Packed, _Columns


def _same(a, b) -> bool:
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return (type(a) is type(b) and list(vars(a)) == list(vars(b))
                and all(_same(x, y) for x, y in zip(vars(a).values(), vars(b).values())))
    if isinstance(a, np.ndarray):
        return (type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=True))
    if isinstance(a, float) and isinstance(b, float):
        return type(a) is type(b) and (math.copysign(1, a) == math.copysign(1, b) and a == b
                                       or math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def _results(seed: int, count: int) -> dict:
    """{pair: a Result or ExactResult} of random fields, with either certificate kind, NaN,
    -0.0 and None among the values."""
    rng = np.random.default_rng(seed)
    out = {}
    for k in range(count):
        v = rng.normal(size=(4, 3))
        cert = PointCertificate(point=v[3].copy()) if k % 3 else \
            PlaneCertificate(normal=v[0] / np.linalg.norm(v[0]), offset=float(rng.normal()))
        fields = dict(status=Status.COLLISION if k % 2 else Status.CLEAR,
                      distance=-0.0 if k % 5 == 0 else float(abs(rng.normal())),
                      distance_lower=math.nan if k % 7 == 0 else float(rng.normal()),
                      depth=None if k % 2 == 0 else float(rng.normal()),
                      normal=v[0], point_a=v[1], point_b=v[2], certificate=cert if k % 11 else None,
                      iterations=int(rng.integers(40)), epa_iterations=0, exit="a reason",
                      epa_exit=None, tolerance=1e-6, elapsed=float(rng.random()))
        if k % 4 == 0:
            out[(k, k + 1)] = Result(**fields)
        else:
            out[(k, k + 1)] = ExactResult(**fields, solid_a=True, solid_b=bool(k % 8), contained="",
                                          note="", triangle_a=k, triangle_b=-1, triangle_pairs=k % 6,
                                          depth_upper=None if k % 3 else 0.25)
    return out


def test_a_dict_of_results_travels_by_columns_and_opens_as_unpickling_would():
    results = _results(46, 300)
    packed = Packed.of(results)
    assert isinstance(pickle.loads(packed.data), _Columns)
    got = packed.open()
    expected = pickle.loads(pickle.dumps(results, protocol=4))
    assert list(got) == list(expected)
    assert all(_same(expected[k], got[k]) for k in expected)
    assert len(packed.data) < len(pickle.dumps(results, protocol=4))


@dataclasses.dataclass
class Labelled:
    label: object
    x: float


def test_a_field_of_few_strings_enums_and_flags_travels_as_codes_and_opens_with_its_types():
    """A status, a stop reason, a note: one byte a row and a table of the distinct values, each
    value opened as the very type it was (a str-valued Status is not its string, True is not
    "True"); a field of other values (numbers, or too many distinct strings) is not coded."""
    labels = [Status.CLEAR, "clear", True, "True", None, False, "", Status.COLLISION] * 40
    rows = [Labelled(v, float(k)) for k, v in enumerate(labels)]
    columns = pickle.loads(Packed.of(rows).data)
    kind, (codes, table) = columns.groups[0][3][0]
    assert kind == "c" and codes.dtype == np.uint8 and len(table) == 8
    assert all(_same(a, b) for a, b in zip(rows, Packed.of(rows).open()))
    assert all(_same(a, b) for a, b in zip(rows[5:9], columns.some(np.arange(5, 9))))
    assert columns.field("label") == labels
    many = [Labelled(f"reason {k}", 0.0) for k in range(300)] + [Labelled(1, 0.0)]
    assert pickle.loads(Packed.of(many[:300]).data).groups[0][3][0][0] == "l"  # 300 distinct strings
    assert pickle.loads(Packed.of(many[299:]).data).groups[0][3][0][0] == "l"  # an int among them
    results = _results(3, 50)
    columns = pickle.loads(Packed.of(results).data)
    kinds = {name: column[0] for _, _, names, cols in columns.groups for name, column in zip(names, cols)}
    assert kinds["status"] == kinds["exit"] == kinds["epa_exit"] == "c"


def test_each_row_owns_its_vectors():
    got = Packed.of(list(_results(7, 20).values())).open()
    before = got[1].normal.copy()
    got[0].normal[:] = 99.0  # a report never writes into a Result's vectors; were it to, one row
    assert np.array_equal(got[1].normal, before)


@dataclasses.dataclass
class Reduced:
    """A dataclass that pickles itself its own way: never sent by columns."""

    x: float

    def __reduce__(self):
        return Reduced, (self.x * 1.0,)


@dataclasses.dataclass(slots=True)
class Slotted:
    x: float


@dataclasses.dataclass
class SlottedChild(Slotted):
    """Its own __dict__ is absent too: its parent's slots hold x."""

    __slots__ = ()


def test_anything_else_is_a_plain_pickle():
    for value in ([(1.0, "not computed", None)], {1: 2.0}, [], {}, [Reduced(1.0)], [Result, 1],
                  [Slotted(1.0)], {0: SlottedChild(2.0)}):
        packed = Packed.of(value)
        assert not isinstance(pickle.loads(packed.data), _Columns)
        assert packed.open() == value


@dataclasses.dataclass
class Scalars:
    zero_d: np.ndarray
    value: float


def test_a_field_of_0_d_arrays_opens_as_arrays():
    got = Packed.of([Scalars(np.array(1.5), 1.0), Scalars(np.array(-0.0), 2.0)]).open()
    assert all(type(g.zero_d) is np.ndarray and g.zero_d.shape == () for g in got)
    assert [float(g.zero_d) for g in got] == [1.5, -0.0] and math.copysign(1, float(got[1].zero_d)) == -1


def test_fields_set_in_another_order_are_pickled_as_they_are():
    a = Result(Status.CLEAR, 1.0, 1.0, None, np.zeros(3), np.zeros(3), np.ones(3), None, 1, 0, "x", None, 0.0)
    b = Result.__new__(Result)
    b.__dict__.update(reversed(list(vars(a).items())))
    packed = Packed.of([a, b])
    assert not isinstance(pickle.loads(packed.data), _Columns)
    got = packed.open()
    assert list(vars(got[1])) == list(vars(b)) and _same(got[0], a)


def test_answers_kept_by_columns_are_made_one_by_one_as_unpickling_would(monkeypatch):
    """`ColumnResults`: the answers of several tasks, kept as they travelled, read by pair index
    one at a time (in any order, before and after `open`) are the objects unpickling gives;
    their statuses, distances and depths read from the columns as arrays (no answer made) are
    theirs."""
    results = _results(12, 400)
    tasks = [dict(list(results.items())[n::3]) for n in range(3)]
    kept = ColumnResults()
    expected = {}
    for t, answer in enumerate(tasks):
        local = {m: r for m, r in enumerate(answer.values())}  # a task's answer: {its own pair: Result}
        pairs = np.arange(len(local), dtype=np.int64) * 3 + t  # the run's pair of each
        unpacked = Packed.of(local).unpacked()
        assert isinstance(unpacked, _Columns) and unpacked.keys.dtype == np.int64  # no int object a key
        assert [type(k) for k in Packed.of(local).open()] == [int] * len(local)  # opened as ints again
        kept.add(unpacked, pairs)
        expected.update((int(pairs[m]), r) for m, r in pickle.loads(pickle.dumps(local, protocol=4)).items())
    assert sorted(expected) == list(kept) and len(kept) == 400
    rng = np.random.default_rng(3)
    for k in rng.permutation(400).tolist() + [0, 399]:
        assert _same(expected[k], kept[k])
    asked = np.concatenate([[5, 0, 398], rng.permutation(400)]).astype(np.int64)

    def made(*args):
        raise AssertionError("an answer made to read its facts")

    monkeypatch.setattr(_Columns, "one", made)
    monkeypatch.setattr(_Columns, "some", made)
    status, distance, depth, has = kept.facts(asked)
    for n, k in enumerate(asked.tolist()):
        r = expected[k]
        assert status[n] == r.status.value and _same(float(distance[n]), r.distance)
        assert has[n] == (r.depth is not None) and (r.depth is None or depth[n] == r.depth)
    monkeypatch.undo()
    assert 400 not in kept and -1 not in kept and "x" not in kept
    with pytest.raises(KeyError):
        kept[400]
    with pytest.raises(KeyError):
        kept.facts(np.array([1, 401], dtype=np.int64))


def test_ints_floats_or_nones_and_certificates_of_several_kinds_travel_by_columns():
    """Ints as an int column (past int64's range, as a list), a field None in some rows as the
    column of the others, certificates of two classes as one nested column: each opens as
    unpickling would, whole or one by one."""
    results = list(_results(5, 60).values())
    columns = Packed.of(results).unpacked()
    kinds = {name: column for _, _, names, cols in columns.groups for name, column in zip(names, cols)}
    assert kinds["iterations"][0] == "i" and kinds["depth"][0] == "o"
    certificates = kinds["certificate"]  # None in some rows, of two classes in the others
    assert certificates[0] == "o" and certificates[1][2][0] == "d" and len(certificates[1][2][1].groups) == 2
    big = [Scalars(np.array(1.0), 1.0) for _ in range(3)]
    for s, v in zip(big, (1, 2 ** 70, -3)):
        s.value = v
    got = Packed.of(big).open()
    assert [g.value for g in got] == [1, 2 ** 70, -3] and all(type(g.value) is int for g in got)
    whole = Packed.of(results).open()
    one = Packed.of(results).unpacked()
    assert all(_same(w, one.one(n)) and _same(w, r) for n, (w, r) in enumerate(zip(whole, results)))


def test_answers_read_ahead_are_made_together_as_one_by_one():
    """`ColumnResults.read_ahead`: the answers of a block of pairs in any order (some it does
    not hold, some of another task's plain dict) made together are those made one by one; each
    is kept until it is read once, the block before let go by the next."""
    results = _results(21, 300)
    tasks = [dict(list(results.items())[n::3]) for n in range(3)]
    kept = ColumnResults()
    expected = {}
    for t, answer in enumerate(tasks):
        local = {m: r for m, r in enumerate(answer.values())}
        pairs = np.arange(len(local), dtype=np.int64) * 3 + t
        kept.add(Packed.of(local).unpacked() if t < 2 else pickle.loads(pickle.dumps(local, protocol=4)), pairs)
        expected.update((int(pairs[m]), r) for m, r in pickle.loads(pickle.dumps(local, protocol=4)).items())
    rng = np.random.default_rng(8)
    order = rng.permutation(300)
    for start in range(0, 300, 64):
        block = order[start:start + 64]
        kept.read_ahead(np.concatenate([block, [300, 1000, -5]]))
        assert len(kept._near) == len(block)
        for k in block.tolist():
            assert _same(expected[k], kept[k])
        assert not kept._near
    kept.read_ahead(order[:10])
    kept.read_ahead(order[10:12])  # the first block let go unread
    assert sorted(kept._near) == sorted(order[10:12].tolist())
    assert _same(expected[int(order[0])], kept[int(order[0])])
    columns = Packed.of(list(results.values())).unpacked()
    some = columns.some(np.array([5, 0, 299, 5], dtype=np.int64))
    assert all(_same(columns.one(r), s) for r, s in zip((5, 0, 299, 5), some))


def test_positions_and_small_ints_travel_as_int32_and_one_class_needs_no_index():
    """A group's rows, a field's "where present" positions and ints within int32's range are
    int32 (4 bytes a row, not 8), wider ints int64; values of one class are found by their
    position alone (no index of groups is made), of several by an int32 index; and the
    answers of tasks kept together hold one index of them, not each task's beside it. Each
    opens as unpickling would."""
    results = list(_results(9, 90).values())
    exact = [r for r in results if type(r) is ExactResult]
    for rows in (results, exact):
        columns = Packed.of(rows).unpacked()
        kinds = {name: column for _, _, names, cols in columns.groups for name, column in zip(names, cols)}
        assert all(g[1].dtype == np.int32 for g in columns.groups)
        assert kinds["iterations"][1].dtype == np.int32 and kinds["depth"][1][1].dtype == np.int32
        assert all(_same(r, columns.one(n)) for n, r in enumerate(rows))
        assert (columns._where is None) == (rows is exact)
        assert columns._where is None or columns._where.dtype == np.int32
    wide = [Scalars(np.array(1.0), 1.0) for _ in range(2)]
    wide[0].value, wide[1].value = 2 ** 40, 1
    assert Packed.of(wide).unpacked().groups[0][3][1][1].dtype == np.int64
    assert [w.value for w in Packed.of(wide).open()] == [2 ** 40, 1]
    kept = ColumnResults()
    for t in range(3):
        kept.add(Packed.of(dict(enumerate(exact[t::3]))).unpacked(), np.arange(len(exact[t::3])) * 3 + t)
    assert len(kept) == len(exact) and len(kept._pieces) == 1
    assert kept._block.dtype == kept._at.dtype == np.int32
    assert all(_same(exact[k], kept[k]) for k in range(len(exact)))
