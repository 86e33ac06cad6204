"""`worktasks.Packed`: a Dask task's answer of many small objects, sent by columns where it is
a dict or list of dataclass instances, opens as the very objects unpickling would give: the same
classes, fields in the same order, equal values (NaN, -0.0 and None kept), arrays of the same
dtype and shape, each row's array its own. Anything else travels as a plain pickle."""
from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np

from gjkcli.engine.exact import ExactResult
from gjkcli.engine.results import PlaneCertificate, PointCertificate, Result, Status
from gjkcli.pipeline.worktasks import Packed, _Columns


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
