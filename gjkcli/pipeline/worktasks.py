"""The tasks a Dask scan (`gjkcli.pipeline.distributed`) runs on its workers, and the flat
arrays its parts travel in between them.

Parts (meshes, hulls, triangle hierarchies, exact solids) live here, on the workers: a load
task's answer (`Loaded`) stays on the worker that read the file, and what the client receives of
it is its `Summary` (names, boxes, hull gaps, counts: no vertex). A task that needs parts of
several files takes `pick`s of the load answers as arguments, so Dask moves them from worker to
worker; the client never holds them. Each task rebuilds the parts it was given as a
`gjkcli.pipeline.stages.Parts` of its own (`local_parts`) and runs the one process's code on
them: the hulls' batch call (`tile`), the triangle test and the fit-thickness rule
(`refine_pairs`), STEP's bounds and exact solids (`bounded_pairs`: the worker reads the STEP
file), the overlap volumes (`overlap_pairs`) and the convexity reasons a report lists
(`reasons`).

Nothing here is imported unless a scan asks for a cluster.
"""
from __future__ import annotations

import dataclasses
import enum
import pickle
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gjkcli import limits
from gjkcli.errors import Problem, ShapeError
from gjkcli.pipeline.stages import PAIR_CHUNK, Parts, Run, hulls

__all__ = ["Packed", "SortedKeys", "Ragged", "PackedShapes", "Loaded", "Summary", "HullFacts", "load", "summary",
           "held", "pick_hulls", "pick", "tile", "TILE_FACTS", "tile_facts", "tile_rest", "refine_pairs",
           "refined_facts", "refined_rows", "bounded_pairs", "overlap_pairs", "overlap_fields", "reasons",
           "triangles", "trace_pair", "local_parts", "sub_batch", "pose_runs", "pose_records"]


# -- tasks ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Packed:
    """A task's answer of many small objects (a `Result` a pair, each with its arrays) as one
    pickle, opened by the client (`Packed.open`).

    Dask's own serialization sends every NumPy array inside an answer as a frame of its own: the
    Great Court roof's 25,000 refined pairs were 100,000 frames, gathered in 2.0 s; packed, 0.65 s
    (most of it unpickling). Protocol 4, not 5: protocol 5 rebuilds each small array as a view
    of a buffer (two array objects, 3.6 KB a Result on the client), protocol 4 as one array (1.8
    KB). Large arrays (a tile's verdicts, a pick's meshes) stay unpacked: Dask sends them without
    a copy.

    A dict or list of dataclass instances (the refined pairs' Results) travels by columns
    (`_Columns`): each field of a class as one array where every value is a float or an array
    of one shape, else as a list; the client makes the instances again as unpickling would (the
    same class, the same fields in the same order, each row's vectors its own view of one
    block). The roof's 25,000 Results: 0.43 s to pickle and 0.19 s to unpickle one by one, 0.22
    s and 0.09 s by columns (9.1 MB against 5.7 MB). Anything else is pickled as it is."""

    data: bytes

    @classmethod
    def of(cls, value) -> "Packed":
        return cls(pickle.dumps(_Columns.of(value) or value, protocol=4))

    def open(self):
        value = self.unpacked()
        if not isinstance(value, _Columns):
            return value
        from gjkcli.collector import no_gc

        with no_gc():  # 100,000 objects made: collections walking the client's findings, for nothing
            return value.open()

    def unpacked(self):
        """The answer as it travelled: its `_Columns` (made into objects by `open`, or one by
        one: `ColumnResults`) or the value itself."""
        return pickle.loads(self.data)  # noqa: S301 - a task's answer on this run's own cluster


@dataclass
class _Columns:
    """A dict or list of dataclass instances by columns (`Packed`).

    keys : the dict's keys in order (int64 where they are ints), or None for a list; count :
    how many values; groups :
    [(class, (r,) the positions of its instances, field names, columns)], a column being
    ("f", float64 array), ("i", int32 or int64 array), ("a", the rows' arrays stacked), ("d", a nested
    `_Columns` of a field whose values are all dataclass instances, of one class or several),
    ("o", (which rows have a value, each row's place among those, the column of the values):
    a field that is None in some rows), ("c", (uint8 codes, the values they stand for): a field
    of a few strings, enum members, booleans or None, `_coded`) or ("l", the values as a
    list). Positions are int32 where they fit (`_positions`). `one` finds a value's group by
    `_where`, made when first asked where the values are of several classes."""

    keys: list | None
    count: int
    groups: list
    _where: np.ndarray | None = None
    _plans: list | None = None

    @classmethod
    def of(cls, value) -> "_Columns | None":
        """`value` by columns, or None where it is not a dict or list of plain dataclass instances
        (those pickle restores from their fields alone)."""
        if isinstance(value, dict):
            keys, objs = list(value), list(value.values())
        elif isinstance(value, list):
            keys, objs = None, value
        else:
            return None
        if not objs or not all(_plain_dataclass(kind) for kind in set(map(type, objs))):
            return None
        if keys is not None and all(type(k) is int for k in keys) and -(1 << 62) < min(keys) and max(keys) < 1 << 62:
            keys = np.array(keys, dtype=np.int64)  # a task's pair numbers: 8 bytes each, not an int object
        at: dict = {}
        for k, o in enumerate(objs):
            at.setdefault(type(o), []).append(k)
        groups = []
        for kind, rows in at.items():
            try:
                states = [vars(objs[k]) for k in rows]
            except TypeError:  # no __dict__ (slots inherited): pickled as they are
                return None
            names = list(states[0])
            if any(list(state) != names for state in states):
                return None  # fields set in another order (or an extra one): pickled as they are
            columns = [_column(list(values)) for values in zip(*[state.values() for state in states])]
            groups.append((kind, _positions(rows), names, columns))
        return cls(keys, len(objs), groups)

    def _planned(self) -> None:
        if self._plans is None:
            if len(self.groups) > 1:  # one class: value r is its group's r-th
                self._where = np.empty((self.count, 2), dtype=_positions([self.count]).dtype)
                for g, (_, rows, _, _) in enumerate(self.groups):
                    self._where[rows, 0], self._where[rows, 1] = g, np.arange(len(rows))
            self._plans = [self._plan(g) for g in range(len(self.groups))]

    def _located(self, rs: np.ndarray) -> tuple:
        """(group, position in it) of each value rs."""
        if self._where is None:
            return np.zeros(len(rs), dtype=np.int64), rs
        return self._where[rs, 0], self._where[rs, 1]

    def one(self, r: int):
        """Value r of the list (r-th of the dict) alone, as `open` makes it."""
        self._planned()
        g, w = (0, int(r)) if self._where is None else self._where[r].tolist()
        kind, names, numbers, rows, others = self._plans[g]
        values = [None] * len(names)
        for places, block in numbers:  # a group's floats (its ints) a row at once
            for n, v in zip(places, block[w].tolist()):
                values[n] = v
        for n, column in rows:  # lists, and arrays' rows (each a view of its block)
            values[n] = column[w]
        for n, column in others:
            values[n] = _value(column, w)
        o = kind.__new__(kind)
        o.__dict__.update(zip(names, values))
        return o

    def some(self, rs) -> list:
        """Values rs (positions of the list, any order) as `one` makes each, made together: a
        column read once for all of them."""
        self._planned()
        rs = np.asarray(rs, dtype=np.int64)
        out: list = [None] * len(rs)
        groups, ws = self._located(rs)
        for g in np.unique(groups).tolist():
            mine = np.flatnonzero(groups == g)
            w = ws[mine]
            kind, names, numbers, rows, others = self._plans[g]
            values: list = [None] * len(names)
            for places, block in numbers:
                for n, column in zip(places, block[w].T.tolist()):
                    values[n] = column
            listed = w.tolist()
            for n, column in rows:
                values[n] = [column[x] for x in listed]
            for n, column in others:
                values[n] = _values(column, w)
            new = kind.__new__
            for s, row in zip(mine.tolist(), zip(*values)):
                o = new(kind)
                o.__dict__.update(zip(names, row))
                out[s] = o
        return out

    def _plan(self, g: int) -> tuple:
        """How `one` makes a value of group g: (class, field names, [(the places of the
        group's float (int) fields, those columns side by side)], [(place, a list or an
        array's rows: a value its item)], [(place, another column)]). The side-by-side block
        replaces the columns it joins (each then a view of it)."""
        kind, rows, names, columns = self.groups[g]
        numbers = []
        for code in ("f", "i"):
            places = [n for n, c in enumerate(columns) if c[0] == code]
            if places:
                dtype = np.result_type(*[columns[n][1] for n in places])
                block = np.empty((len(rows), len(places)), dtype=dtype)
                for m, n in enumerate(places):
                    block[:, m] = columns[n][1]
                    columns[n] = (code, block[:, m])
                numbers.append((places, block))
        rows = [(n, c[1]) for n, c in enumerate(columns) if c[0] in ("a", "l")]
        others = [(n, c) for n, c in enumerate(columns) if c[0] in ("d", "o", "c")]
        return kind, names, numbers, rows, others

    def field(self, name: str, fill=None) -> list:
        """The field `name` of every value, in order (`fill` where a value has none)."""
        out = [fill] * self.count
        for _, rows, names, columns in self.groups:
            if name in names:
                for r, v in zip(rows.tolist(), _values(columns[names.index(name)])):
                    out[r] = v
        return out

    def numbers(self, name: str, rs) -> tuple | None:
        """(float64 values, whether there is one) of the field `name` of values rs, read from
        its columns as arrays, no value made; None where a group's column of it is not of
        numbers (floats or ints, either of them None in some rows, or None in all) or the group
        has no such field."""
        rs = np.asarray(rs, dtype=np.int64)
        values, present = np.zeros(len(rs)), np.zeros(len(rs), dtype=bool)
        for mine, w, column in self._columns_at(name, rs):
            kind, data = column
            if kind in ("f", "i"):
                values[mine], present[mine] = data[w], True
            elif kind == "o" and data[2][0] in ("f", "i"):
                mask, at, (_, inner) = data
                there = mask[w]
                values[mine[there]], present[mine[there]] = inner[at[w[there]]], True
            elif not (kind == "c" and all(v is None for v in data[1])):  # None in every row: no value
                return None
        return values, present

    def coded(self, name: str, rs, of=lambda v: v) -> np.ndarray | None:
        """`of` each value of the field `name` of values rs, as an object array read from its
        coded columns (`_coded`; `of` called once a distinct value); None where a group's
        column of it is not coded or has no such field."""
        rs = np.asarray(rs, dtype=np.int64)
        out = np.empty(len(rs), dtype=object)
        for mine, w, column in self._columns_at(name, rs):
            if column[0] != "c":
                return None
            codes, table = column[1]
            made = np.empty(len(table), dtype=object)
            made[:] = [of(v) for v in table]
            out[mine] = made[codes[w]]
        return out

    def _columns_at(self, name: str, rs: np.ndarray):
        """(positions among rs, positions in its group, the group's column of `name`, or ("-",
        None) where the group has no such field) per group of the values rs."""
        if self._where is None and len(self.groups) > 1:
            self._planned()
        groups, ws = self._located(rs)
        for g in np.unique(groups).tolist():
            mine = np.flatnonzero(groups == g)
            _, _, names, columns = self.groups[g]
            yield mine, ws[mine], columns[names.index(name)] if name in names else ("-", None)

    def open(self):
        """The dict or list again."""
        out: list = [None] * self.count
        for kind, rows, names, columns in self.groups:
            values = [_values(column) for column in columns]
            new = kind.__new__
            for r, row in zip(rows.tolist(), zip(*values)):
                o = new(kind)
                o.__dict__.update(zip(names, row))
                out[r] = o
        if self.keys is None:
            return out
        return dict(zip(self.keys.tolist() if isinstance(self.keys, np.ndarray) else self.keys, out))


def _plain_dataclass(kind) -> bool:
    """Whether instances of `kind` are dataclasses that pickle saves as their fields' dict and
    restores by setting it (no __reduce__, __setstate__ or __slots__ of their own)."""
    return (dataclasses.is_dataclass(kind) and kind.__reduce_ex__ is object.__reduce_ex__
            and kind.__reduce__ is object.__reduce__ and getattr(kind, "__setstate__", None) is None
            and kind.__getstate__ is object.__getstate__ and "__slots__" not in vars(kind))


def _column(values: list) -> tuple:
    kinds = set(map(type, values))
    first = type(values[0])
    coded = _coded(values, kinds)
    if coded is not None:
        return coded
    if len(kinds) == 1:
        if first is float:
            return "f", np.array(values, dtype=np.float64)
        if first is int and -(1 << 62) < min(values) and max(values) < 1 << 62:
            small = -(1 << 31) < min(values) and max(values) < 1 << 31
            return "i", np.array(values, dtype=np.int32 if small else np.int64)
        if first is np.ndarray:
            shape, dtype = values[0].shape, values[0].dtype
            if shape and not dtype.hasobject and len({(v.shape, v.dtype) for v in values}) == 1:
                return "a", np.stack(values)
        if _plain_dataclass(first):
            nested = _Columns.of(values)
            if nested is not None:
                return "d", nested
        return "l", values
    present = [v is not None for v in values]
    if not all(present) and any(present):  # a depth or a certificate where there is one
        inner = _column([v for v in values if v is not None])
        if inner[0] != "l":
            mask = np.array(present, dtype=bool)
            return "o", (mask, (np.cumsum(mask) - 1).astype(_positions([len(mask)]).dtype), inner)
    if all(_plain_dataclass(kind) for kind in kinds):  # certificates of several kinds
        nested = _Columns.of(values)
        if nested is not None:
            return "d", nested
    return "l", values


def _positions(values) -> np.ndarray:
    """Positions (non-negative ints) as an int32 array where they fit, else int64."""
    values = np.asarray(values, dtype=np.int64)
    return values.astype(np.int32) if not len(values) or values.max() < 1 << 31 else values


def _coded(values: list, kinds: set) -> tuple | None:
    """("c", (codes, table)) of a column whose values are strings, enum members, booleans or
    None, of at most 256 distinct ones (a status, a stop reason, a note), each row then a byte,
    not a reference (and one object to pickle each, not a memo's); else None. Values are told
    apart by type too (a str-valued enum member is not its string)."""
    if not all(kind in (str, bool, type(None)) or issubclass(kind, enum.Enum) for kind in kinds):
        return None
    table: dict = {}
    codes = [table.setdefault((type(v), v), len(table)) for v in values]
    if len(table) > 256:
        return None
    return "c", (np.array(codes, dtype=np.uint8), [v for _, v in table])


def _values(column: tuple, w: np.ndarray | None = None) -> list:
    """The values of a column (those at positions `w`, any order; default all), as `_value`
    gives each."""
    kind, data = column
    if kind in ("f", "i"):
        return (data if w is None else data[w]).tolist()
    if kind == "d":
        return data.open() if w is None else data.some(w)
    if kind == "o":
        mask, at, inner = data
        there = mask if w is None else mask[w]
        some = iter(_values(inner, None if w is None else at[w[there]]))
        return [next(some) if x else None for x in there.tolist()]
    if kind == "c":
        codes, table = data
        return [table[c] for c in (codes if w is None else codes[w]).tolist()]
    if w is None:  # "a": each row a view of the block (its own, as each array was; never 0-d)
        return list(data) if kind == "a" else data
    return [data[x] for x in w.tolist()]


def _value(column: tuple, w: int):
    """Value w of a column, as `_values` gives it."""
    kind, data = column
    if kind in ("f", "i"):
        return data[w].item()
    if kind == "d":
        return data.one(w)
    if kind == "o":
        mask, at, inner = data
        return _value(inner, int(at[w])) if mask[w] else None
    if kind == "c":
        return data[1][data[0][w]]
    return data[w]  # "a": a view of the block, as list(data) gives; "l": the value itself


class SortedKeys(Mapping):
    """A mapping whose keys (pair indices) are the int64 array `_keys`, ascending, which
    `_index` makes when it is None: their number, order and membership read from it."""

    _keys = None

    def _index(self) -> None:
        raise NotImplementedError

    def __contains__(self, k) -> bool:
        self._index()
        try:
            n = int(self._keys.searchsorted(k))
        except TypeError:
            return False
        return n < len(self._keys) and self._keys[n] == k

    def __iter__(self):
        self._index()
        return iter(self._keys.tolist())

    def __len__(self) -> int:
        self._index()
        return len(self._keys)


class ColumnResults(SortedKeys):
    """{pair index: answer} of tasks whose answers stay as they travelled (`Packed.unpacked`),
    each answer made when it is read and never kept: a Dask scan's client holds the triangle
    test's answers (the Great Court roof's 25,000) as arrays of their fields, not as objects,
    and a report makes each one as it writes its pair (`gjkcli.pipeline.streamed`). Reads like
    the dict it stands for."""

    def __init__(self):
        self._blocks: list = []  # (_Columns, None) or (dict, its keys in order): a task's answer
        self._pieces: list = []  # (pair indices, block, position in the block)
        self._keys = self._block = self._at = None
        self._near: dict = {}  # pair index -> its answer, made ahead (`read_ahead`)

    def add(self, answer, pairs) -> None:
        """A task's answer (its `_Columns` of a dict or a list, or the dict or list) whose key
        (or position) k is pair pairs[k]."""
        b = len(self._blocks)
        if isinstance(answer, list):
            answer = dict(enumerate(answer))
        if isinstance(answer, _Columns):  # read by position: its keys not kept beside it
            self._blocks.append((answer, None))
            keys = np.arange(answer.count) if answer.keys is None else answer.keys  # a list's: its positions
        else:
            keys = list(answer)
            self._blocks.append((answer, keys))
        if not len(keys):
            return
        if isinstance(keys, np.ndarray):
            at = np.asarray(pairs, dtype=np.int64)[keys]
        else:
            at = np.asarray([pairs[k] for k in keys], dtype=np.int64)
        self._pieces.append((at, np.full(len(keys), b, dtype=np.int32), _positions(np.arange(len(keys)))))
        self._keys = None

    def _index(self) -> None:
        if self._keys is not None:
            return
        if self._pieces:
            keys, block, at = (np.concatenate(x) for x in zip(*self._pieces))
        else:
            keys = block = at = np.zeros(0, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        self._keys, self._block, self._at = keys[order], block[order], at[order]
        self._pieces = [(self._keys, self._block, self._at)]  # not each task's beside them
        if len(self._keys) > 1 and (self._keys[1:] == self._keys[:-1]).any():
            raise ValueError("a pair answered twice")

    def _find(self, k) -> int:
        self._index()
        n = int(self._keys.searchsorted(k))
        if n == len(self._keys) or self._keys[n] != k:
            raise KeyError(k)
        return n

    def __getitem__(self, k):
        got = self._near.pop(k, None) if self._near else None
        if got is not None:
            return got
        n = self._find(k)
        answer, local = self._blocks[int(self._block[n])]
        at = int(self._at[n])
        return answer.one(at) if isinstance(answer, _Columns) else answer[local[at]]

    def read_ahead(self, ks, then=None) -> None:
        """The answers of the pairs `ks` that it holds made together (a task's columns read
        once for all of them: `_Columns.some`), each kept until it is read; those made ahead
        before are let go. A report reads its rows a block at a time, in its order
        (`gjkcli.pipeline.findings.ListedPairs`), which mixes the tasks' answers: one by one,
        each answer is a search and a row of each of its columns. then : the pairs read next
        (unused here: the answers are at hand)."""
        self._near = {}
        self._index()
        ks = np.asarray(ks, dtype=np.int64)
        if not len(ks) or not len(self._keys):
            return
        n = np.minimum(np.searchsorted(self._keys, ks), len(self._keys) - 1)
        held = self._keys[n] == ks
        ks, n = ks[held], n[held]
        blocks, at = self._block[n], self._at[n]
        for b in np.unique(blocks).tolist():
            mine = blocks == b
            answer, local = self._blocks[b]
            made = answer.some(at[mine]) if isinstance(answer, _Columns) else \
                [answer[local[x]] for x in at[mine].tolist()]
            self._near.update(zip(ks[mine].tolist(), made))

    def facts(self, ks) -> tuple:
        """(status values (object), distance, depth, whether there is a depth) of the answers of
        the pairs `ks`, from their columns (`gjkcli.pipeline.streamed`)."""
        status = np.empty(len(ks), dtype=object)
        distance, depth = np.empty(len(ks)), np.zeros(len(ks))
        has = np.zeros(len(ks), dtype=bool)
        if not len(ks):
            return status, distance, depth, has
        self._index()
        n = np.searchsorted(self._keys, ks)
        if (n >= len(self._keys)).any() or (self._keys[np.minimum(n, len(self._keys) - 1)] != ks).any():
            raise KeyError("a pair without an answer")
        blocks = self._block[n]
        for b in np.unique(blocks).tolist():
            mine = np.flatnonzero(blocks == b)
            answer, local = self._blocks[b]
            at = self._at[n[mine]]
            if isinstance(answer, _Columns):  # read as arrays, no answer made
                got = (answer.coded("status", at, lambda s: s.value), answer.numbers("distance", at),
                       answer.numbers("depth", at))
                if all(x is not None for x in got):
                    status[mine], distance[mine] = got[0], got[1][0]
                    depth[mine], has[mine] = got[2][0], got[2][1]
                    continue
                values = [(r.status, r.distance, r.depth) for r in answer.some(at)]
            else:
                values = [(r.status, r.distance, r.depth) for r in (answer[local[x]] for x in at.tolist())]
            for m, (s, d, p) in zip(mine.tolist(), values):
                status[m], distance[m] = s.value, d
                if p is not None:
                    depth[m], has[m] = p, True
        return status, distance, depth, has


def load(source, strict: bool, lim) -> "Loaded":
    """One source read, its objects' hulls and hull gaps (`gjkcli.pipeline.stages.hulls`, the
    prepared scene's, as in one process): packed in flat arrays. A robot's primitive links
    (a box, cylinder or sphere in the URDF) travel as their shapes."""
    from gjkcli.scene.objects import read_source, split_problems

    with limits.active(lim):
        got = read_source(source, strict)
    if isinstance(got, Problem):
        return Loaded(problem=got)
    return _loaded(*split_problems(got))


def _loaded(got: list, skipped: list) -> "Loaded":
    """The objects `got` (`gjkcli.scene.objects.Geometry`) with their hulls, packed."""
    shapes, lo, hi, gap, inward = hulls(got)
    return Loaded(
        meta=[(g.name, g.file, g.units, g.watertight, g.bodies, g.element, g.owner, g.eps, g.brep,
               g.instance) for g in got],
        skipped=skipped,
        vertices=Ragged.pack([g.vertices for g in got]), faces=Ragged.pack([g.faces for g in got]),
        shapes=PackedShapes.pack(shapes), lo=lo, hi=hi, gap=gap, inward=inward,
        primitive=np.array([g.primitive is not None for g in got], dtype=bool))


def summary(loaded: "Loaded") -> "Summary":
    """What the client receives of a load task: its objects without their geometry."""
    return loaded.summary()


def held(loaded) -> None:
    """Nothing: run on a worker, that worker then holds the load task's answer `loaded` too."""


def pick_hulls(loaded: "Loaded", positions) -> "PackedShapes":
    """The hulls of some of a source's objects (for a tile's narrow phase), still packed."""
    return loaded.shapes.take(positions)


def pick(loaded: "Loaded", positions) -> "Loaded":
    """Some of a source's objects whole (meshes, hulls, what the reader knows), still packed."""
    return loaded.take(positions)


def picked_shapes(pick) -> list:
    """The Shapes of a task's pick: a `pick` or `pick_hulls` answer as it came, or (a load
    task's answer, positions) read at those positions, not packed again
    (`gjkcli.pipeline.distributed.WHOLE_LOADS_BYTES`)."""
    if isinstance(pick, tuple):
        loaded, positions = pick
        return loaded.shapes.unpack(positions)
    return (pick if isinstance(pick, PackedShapes) else pick.shapes).unpack()


def tile(grid, number: int, ids, glo, ghi, sets, tolerance, *packs, order=None):
    """A tile's pairs and their verdicts: (i, j) global indices, i < j, the tile's broad-phase
    pair count before selections, and the batch call's fields (name -> (m,) array).

    grid : `gjkcli.pipeline.distributed`'s grid of tiles; number : this tile's;
    ids : (k,) int64 the tile's objects, ascending; glo, ghi : (k, 3) their grown boxes;
    sets : [(in_a, in_b)] the manifest's [[check]] selections over the tile's objects;
    packs : PackedShapes of the objects, in the order of ids, or where their load tasks hold
    them in another (an IFC model's interleaved shares) in the order `order` puts back: the
    object ids[k] is the packs' order[k]-th shape.
    """
    from gjkcli.engine.query import batch
    from gjkcli.engine.shapes import ShapeSet
    from gjkcli.scene.broadphase import candidate_pairs, select_pairs

    li, lj = candidate_pairs(glo, ghi)  # the boxes are grown already
    # the pair's canonical point: the lower corner of the two grown boxes' intersection
    own = grid.tile_of(np.maximum(glo[li], glo[lj])) == number
    li, lj = li[own], lj[own]
    candidates = len(li)
    if sets:
        keep = select_pairs(li, lj, sets)
        li, lj = li[keep], lj[keep]
    fields: dict = {}
    if len(li):
        shapes = [s for p in packs for s in picked_shapes(p)]
        shapes = ShapeSet(shapes if order is None else [shapes[k] for k in order.tolist()])
        done = [batch(shapes, li[a:a + PAIR_CHUNK], lj[a:a + PAIR_CHUNK], tolerance=tolerance,
                      want="verdict") for a in range(0, len(li), PAIR_CHUNK)]
        fields = {f.name: np.concatenate([getattr(d, f.name) for d in done])
                  for f in dataclasses.fields(done[0])}
    return ids[li], ids[lj], candidates, fields


# The fields of a tile's verdicts the client reads for every pair: the policy's and the
# listing's order's. The others (the vectors, the certificates, the loops' counts: 3 of every 4
# bytes of a pair's answer) make a pair's Result, which the client reads only where the hulls'
# answer is a finding's, the triangles' answer the others' (`tile_rest`).
TILE_FACTS = ("status", "distance", "distance_lower", "depth", "tolerance")


def tile_facts(answer) -> tuple:
    """What the client receives of a tile's answer (`tile`): its pairs, its broad-phase count
    and its verdicts' TILE_FACTS; the answer itself stays on its worker."""
    i, j, candidates, fields = answer
    return i, j, candidates, {name: fields[name] for name in TILE_FACTS if name in fields}


def tile_rest(answer, rows) -> dict:
    """The fields of a tile's verdicts other than TILE_FACTS, at its pairs `rows` (positions in
    the tile's answer)."""
    return {name: values[rows] for name, values in answer[3].items() if name not in TILE_FACTS}


def refine_pairs(names, li, lj, tolerance, measure, *picks) -> dict:
    """{k: the triangle test's Result} of pairs (li[k], lj[k]) of the picked parts, the fits
    it leaves undecided judged by their common solid (`gjkcli.pipeline.refine`), as one process
    judges them. The answer stays on its worker as it is (made into columns only as a page of
    it travels: the refinement's tasks, which the client waits for, do not): the client
    receives its facts (`refined_facts`) and its answers as a report reads them
    (`refined_rows`). names : the client's names of the picked objects, in the picks' order."""
    from gjkcli.pipeline import refine

    parts = local_parts(names, picks)
    todo = np.arange(len(li))
    exact = refine.triangles(parts, li, lj, tolerance, measure, todo, jobs=1)
    return refine.by_thickness(parts, li, lj, exact, 1) if exact else exact


def refined_facts(answer: dict) -> tuple:
    """What the client receives of a refinement task's answer (`refine_pairs`) as it is made:
    (its keys in its order, the statuses' codes (uint8) and the values they stand for, distance,
    depth (0 where none), whether there is a depth), the facts the listing reads
    (`ColumnResults.facts`)."""
    results = list(answer.values())
    status = [r.status.value for r in results]
    table = sorted(set(status))
    code = {value: n for n, value in enumerate(table)}
    return (np.fromiter(answer, dtype=np.int64, count=len(answer)),
            np.array([code[value] for value in status], dtype=np.uint8), table,
            np.array([r.distance for r in results], dtype=np.float64),
            np.array([0.0 if r.depth is None else r.depth for r in results], dtype=np.float64),
            np.array([r.depth is not None for r in results], dtype=bool))


def refined_rows(wanted: list, *answers) -> Packed:
    """Of each refinement task's answer `answers[t]` (`refine_pairs`), its answers at the
    positions `wanted[t]`, in that order, one list of them all as it travels to the client (by
    columns: `Packed`): a report reads them a few hundred at a time, made from as few columns as
    may be."""
    out: list = []
    for rows, answer in zip(wanted, answers):
        values = list(answer.values())
        out.extend(values[x] for x in np.asarray(rows).tolist())
    return Packed.of(out)


def bounded_pairs(options, units, names, li, lj, fields, clearance, e, modes, scene, *picks) -> Packed:
    """{k: `gjkcli.pipeline.tessellated.Bounded`} of tessellated pairs (li[k], lj[k]): their
    triangles' bounds, then the exact solids the worker reads from the STEP file itself.

    fields : the pairs' hull answers (`sub_batch`); clearance, e : (m,) each pair's clearance
    and tessellation error; modes : (m,) each pair's mode where clash sets give their own, or
    None; scene : the exact solids of every group of the run's pairs (`Run.exact_groups`)."""
    from gjkcli.engine.results import BatchResult

    run = _WorkerRun(options, units, modes)
    run.exact_scene = scene
    return Packed.of(run.bounded(local_parts(names, picks), li, lj, BatchResult(**fields), clearance, e))


def overlap_pairs(options, units, volumes, names, pairs, *picks) -> list:
    """The listed collisions `pairs` with their overlap volumes (`Run`'s overlap stage on the
    picked parts); volumes : {(a, b): the exact solids' common volume} from the refinement."""
    run = _WorkerRun(options, units, None)
    run.volumes(volumes)
    return run.overlaps(local_parts(names, picks), pairs)


def overlap_fields(options, units, volumes, meshes: bool, names, pairs, *picks) -> Packed:
    """`overlap_pairs`' answer as what it changed of each pair: [(overlap_volume,
    overlap_reason, overlap_mesh)] in the pairs' order, the overlap solid None unless `meshes`
    (the client's run draws pictures or groups clashes). The client sets them on its own
    findings (`Finding.but`), instead of receiving a copy of every finding (its result, points
    and certificate) that it holds already."""
    return Packed.of([(p.overlap_volume, p.overlap_reason, p.overlap_mesh if meshes else None)
                      for p in overlap_pairs(options, units, volumes, names, pairs, *picks)])


def reasons(loaded: "Loaded", positions) -> list:
    """The convexity reason (`gjkcli.mesh.convexity.part_reasons`) of the source's objects at
    `positions`, in order: what a report lists of a part that is not its hull. Reads only
    those objects (a load's reasons are asked in many small tasks: `_ClusterRun.listed_known`)."""
    from gjkcli.engine.shapes import SHARED_HULL_POINTS
    from gjkcli.mesh.convexity import part_reasons
    from gjkcli.pipeline.stages import instance_uses

    which = np.asarray(positions, dtype=np.int64).tolist()
    instances = [None if primitive else m[9] for m, primitive in zip(loaded.meta, loaded.primitive.tolist())]
    # an object placing a mesh others place too: measured on the mesh in its own frame, as
    # `gjkcli.pipeline.stages.Parts.measure_reasons` measures it
    uses = instance_uses(instances)
    placed = {k for k in which if instances[k] is not None and instances[k].local is not None
              and uses[instances[k].key] > 1}
    vertices = {k: instances[k].local if k in placed else loaded.vertices[k] for k in which}
    faces = {k: loaded.faces[k] for k in which}
    watertight = {k: loaded.meta[k][3] for k in which}
    bodies = {k: loaded.meta[k][4] for k in which}
    out: dict = {}
    for points, mine in ((None, [k for k in which if k not in placed]),
                         (SHARED_HULL_POINTS, [k for k in which if k in placed])):
        if mine:
            out.update(zip(mine, part_reasons(loaded.gap, mine, vertices, faces, watertight, bodies, points)))
    return [out[k] for k in which]


def triangles(loaded: "Loaded", positions) -> list:
    """[((n, 3) world vertices, (m, 3) faces)] of the source's objects at `positions` (meshes,
    not primitives), in order: what the pictures of a scan draw of them."""
    return [(loaded.vertices[k], loaded.faces[k]) for k in np.asarray(positions).tolist()]


def trace_pair(tolerance, a: int, b: int, *picks):
    """GJK and EPA on the hulls of objects a and b of the picks, step by step (--trace)."""
    from gjkcli.engine.query import query

    shapes = [s for p in picks for s in picked_shapes(p)]
    return query(shapes[a], shapes[b], tolerance=tolerance, trace=True).trace


def pose_runs(source, srdf, options, poses):
    """(a Findings per pose of `poses`, the robot's allowed link pairs) of the robot prepared
    once (`gjkcli.pipeline.poses.Prepared`), or None where it cannot be prepared; the Findings
    without their pictures' geometry (a closure over the prepared robot, which stays here)."""
    from gjkcli.pipeline.poses import Prepared, Unprepared

    try:
        prepared = Prepared(source, srdf, options)
        runs = prepared.runs(poses)
    except Unprepared:
        return None
    return [dataclasses.replace(f, geometry=None) for f in runs], prepared.allowed_links


def pose_records(source, srdf, options, first, involved) -> tuple:
    """The robot's object records at the pose `first` (`Prepared.records`)."""
    from gjkcli.pipeline.poses import Prepared

    return Prepared(source, srdf, options).records(first, involved)


def local_parts(names, picks) -> Parts:
    """The picked objects as a run's `Parts`, under the client's names, in the picks' order (a
    pick of (a load's answer, positions) read at those positions, not copied)."""
    geoms, shapes, lo, hi, gap, inward = [], [], [], [], [], []
    for p in picks:
        loaded, at = p if isinstance(p, tuple) else (p, None)
        n = loaded.count if at is None else len(at)
        geoms.extend(loaded.geometries(at, names[len(geoms):len(geoms) + n]))
        shapes.extend(loaded.shapes.unpack(at))
        for out, values in ((lo, loaded.lo), (hi, loaded.hi), (gap, loaded.gap), (inward, loaded.inward)):
            out.append(values if at is None else values[at])
    parts, keep = Parts.assemble(geoms, shapes, np.concatenate(lo), np.concatenate(hi),
                                 np.concatenate(gap), np.concatenate(inward), [])
    assert len(keep) == len(geoms), "the client sent an object that makes no shape"
    return parts


def sub_batch(batch, at) -> dict:
    """The fields of `batch` (`gjkcli.engine.results.BatchResult`) at pair indices `at`."""
    return {f.name: getattr(batch, f.name)[at] for f in dataclasses.fields(batch)}


class _WorkerRun(Run):
    """The run's refinement and overlap stages on a worker's parts, with the client's options
    and unit (one core: the worker is the unit of parallelism)."""

    def __init__(self, options, units, modes):
        super().__init__(dataclasses.replace(options, jobs=1), "scan", None)
        self.units = units
        self.sets = None if modes is None else _Modes(modes)

    def bounded(self, parts, li, lj, batch, clearance, e) -> dict:
        return self._bounded(parts, li, lj, batch, clearance, e, np.arange(len(li)))

    def volumes(self, volumes: dict) -> None:
        self._volumes = dict(volumes)

    def overlaps(self, parts, pairs: list) -> list:
        return self._overlaps_of(parts, pairs, len(pairs))


@dataclass
class _Modes:
    """The clash sets' modes of a worker's pairs (what `Run._bounded` asks of its sets)."""

    of: np.ndarray

    def modes(self, default):
        return self.of


# -- objects as flat arrays --------------------------------------------------------------------------


@dataclass
class Ragged:
    """Arrays of one dtype and row shape end to end: item k is data[off[k]:off[k + 1]], or None
    where `none[k]`. Arrays of mixed dtypes or shapes stay a list."""

    data: object
    off: np.ndarray | None
    none: np.ndarray

    @classmethod
    def pack(cls, arrays) -> "Ragged":
        arrays = list(arrays)
        none = np.array([a is None for a in arrays], dtype=bool)
        real = [a for a in arrays if a is not None]
        if len({(a.dtype, a.shape[1:]) for a in real}) > 1:
            return cls(arrays, None, none)
        lengths = np.array([0 if a is None else len(a) for a in arrays], dtype=np.int64)
        off = np.concatenate([[0], np.cumsum(lengths)])
        data = np.concatenate(real) if real else np.zeros(0)
        return cls(data, off, none)

    def __len__(self) -> int:
        return len(self.none)

    def __getitem__(self, k: int):
        if self.off is None:
            return self.data[k]
        return None if self.none[k] else self.data[self.off[k]:self.off[k + 1]]

    def __sizeof__(self) -> int:  # Dask's `sizeof` (its memory accounting, the task stream's nbytes)
        return _nbytes(self.data) + self.none.nbytes + (0 if self.off is None else self.off.nbytes)

    def lengths(self) -> np.ndarray:
        """(n,) int64 each item's row count (0 for None)."""
        if self.off is None:
            return np.array([0 if a is None else len(a) for a in self.data], dtype=np.int64)
        return np.diff(self.off)

    def take(self, positions) -> "Ragged":
        return Ragged.pack([self[k] for k in np.asarray(positions).tolist()])


@dataclass
class PackedShapes:
    """Shapes (or the ShapeErrors that stand for them) as arrays: their kinds, hull vertices,
    CSR adjacency, hull faces, dimensions, inflation, poses and cold-start tables."""

    errors: list  # str where the shape is a ShapeError, else None
    kind: list
    vertices: Ragged
    adj_start: Ragged
    adj: Ragged
    faces: Ragged
    cube: Ragged
    dimension: np.ndarray
    dims: np.ndarray
    radius: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray
    extent: np.ndarray
    size: np.ndarray

    @classmethod
    def pack(cls, shapes) -> "PackedShapes":
        from gjkcli.engine.shapes import Shape

        shapes = list(shapes)
        stand_in = Shape.point((0.0, 0.0, 0.0))
        real = [stand_in if isinstance(s, ShapeError) else s for s in shapes]
        return cls(
            errors=[str(s) if isinstance(s, ShapeError) else None for s in shapes],
            kind=[s.kind for s in real],
            vertices=Ragged.pack([s.vertices for s in real]),
            adj_start=Ragged.pack([s.adj_start for s in real]),
            adj=Ragged.pack([s.adj for s in real]),
            faces=Ragged.pack([s.faces for s in real]),
            cube=Ragged.pack([s._cube for s in real]),
            dimension=np.array([s.dimension for s in real], dtype=np.int64),
            dims=np.array([s.dims for s in real], dtype=np.float64).reshape(-1, 3),
            radius=np.array([s.radius for s in real], dtype=np.float64),
            rotation=np.array([s.rotation for s in real], dtype=np.float64).reshape(-1, 3, 3),
            translation=np.array([s.translation for s in real], dtype=np.float64).reshape(-1, 3),
            extent=np.array([s._extent for s in real], dtype=np.float64),
            size=np.array([s._size for s in real], dtype=np.float64))

    def __len__(self) -> int:
        return len(self.kind)

    def __sizeof__(self) -> int:
        return sum(_nbytes(getattr(self, f.name)) for f in dataclasses.fields(self)) + 64 * len(self.kind)

    def unpack(self, positions=None) -> list:
        """The Shapes (those at `positions`, in order; default all), as they were packed (bit
        for bit)."""
        from gjkcli.engine.shapes import Shape

        out: list = []
        for k in range(len(self)) if positions is None else np.asarray(positions, dtype=np.int64).tolist():
            if self.errors[k] is not None:
                out.append(ShapeError(self.errors[k]))
                continue
            out.append(Shape(self.kind[k], self.vertices[k], self.adj_start[k], self.adj[k],
                             self.faces[k], int(self.dimension[k]), self.dims[k].copy(),
                             float(self.radius[k]), self.rotation[k].copy(), self.translation[k].copy(),
                             float(self.extent[k]), float(self.size[k]), self.cube[k]))
        return out

    def take(self, positions) -> "PackedShapes":
        at = np.asarray(positions, dtype=np.int64)
        listed = at.tolist()
        return PackedShapes(
            errors=[self.errors[k] for k in listed], kind=[self.kind[k] for k in listed],
            vertices=self.vertices.take(at), adj_start=self.adj_start.take(at),
            adj=self.adj.take(at), faces=self.faces.take(at), cube=self.cube.take(at),
            dimension=self.dimension[at], dims=self.dims[at], radius=self.radius[at],
            rotation=self.rotation[at], translation=self.translation[at], extent=self.extent[at],
            size=self.size[at])


@dataclass(frozen=True)
class HullFacts:
    """What the client knows of an object's hull (for its record): its kind, vertex count and
    dimension; the hull itself stays on the workers."""

    kind: str
    n_vertices: int
    dimension: int


class _PerObject:
    """A dataclass of per-object fields with `meta` (one entry per object): its object count,
    and its size as Dask weighs a task's result (its arrays' bytes, a little per object)."""

    @property
    def count(self) -> int:
        return len(self.meta)

    def __sizeof__(self) -> int:
        return sum(_nbytes(getattr(self, f.name)) for f in dataclasses.fields(self)) + 256 * len(self.meta)


@dataclass
class Summary(_PerObject):
    """What the client receives of a load task: a Problem, or per object its name and what its
    reader knows (an instance's key and pose: its shared mesh stays on the worker), its hull's
    box and gap, its vertex, face and hull vertex counts, and a primitive's own small shape.

    meta : [(name, file, units, watertight, bodies, IFC element, owner, eps, brep, instance)];
    shapes : per object a ShapeError, a primitive's Shape, or its HullFacts
    """

    problem: Problem | None = None
    meta: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    shapes: list = dataclasses.field(default_factory=list)
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    gap: np.ndarray | None = None
    inward: np.ndarray | None = None  # (n,) uint8 wound inwards (`stages.Parts.inward`)
    counts: np.ndarray | None = None  # (n, 2) int64 vertices and faces per object

    def geometries(self, source: int = 0) -> list:
        """The objects as `gjkcli.scene.objects.Geometry` without vertices or faces, of the
        scan's source `source` (made with it: `gjkcli.scene.objects.assemble` then keeps them,
        where it would copy each to set it)."""
        from gjkcli.engine.shapes import Shape
        from gjkcli.scene.objects import Geometry

        return [Geometry(name=name, file=file, units=units, watertight=watertight, bodies=bodies,
                         element=element, owner=owner, eps=eps, brep=brep, instance=instance,
                         primitive=shape if isinstance(shape, Shape) else None, source=source)
                for (name, file, units, watertight, bodies, element, owner, eps, brep, instance), shape
                in zip(self.meta, self.shapes)]


def _nbytes(value) -> int:
    """The bytes of the arrays in `value` (an array, a Ragged, a list of them), about."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, Ragged):
        return value.__sizeof__()
    if isinstance(value, PackedShapes):
        return value.__sizeof__()
    if isinstance(value, list):
        return sum(_nbytes(v) for v in value[:1000]) * max(1, len(value)) // max(1, min(len(value), 1000))
    return 0


def _pose_only(instance):
    """An instance's key and pose without its shared mesh (what the client needs to tell which
    pairs place the same two meshes alike: `gjkcli.pipeline.stages.placement_key`)."""
    if instance is None:
        return None
    from gjkcli.mesh.load import Instance

    return Instance(key=instance.key, local=None, pose=instance.pose)


@dataclass
class Loaded(_PerObject):
    """A load task's answer: a Problem, or the source's objects and their hulls as arrays.

    meta : [(name, file, units, watertight, bodies, IFC element, owner, eps, brep, instance)] per
    object (a STEP part's tessellation error, where its exact solids are and its product's shared
    mesh and pose: the workers refine its pairs on them as one process does); vertices,
    faces : their meshes (None for a primitive); shapes : their hulls (a primitive's own shape);
    lo, hi : (n, 3) hull bounds; gap : (n,) hull gaps; inward : (n,) uint8 its mesh wound
    inwards (`gjkcli.pipeline.stages.hulls`); primitive : (n,) bool the object is a
    primitive (a robot's box, cylinder or sphere link); skipped : a Problem per IFC element whose
    geometry failed
    """

    problem: Problem | None = None
    meta: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    vertices: Ragged | None = None
    faces: Ragged | None = None
    shapes: PackedShapes | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    gap: np.ndarray | None = None
    inward: np.ndarray | None = None
    primitive: np.ndarray | None = None

    def geometries(self, positions=None, names=None) -> list:
        """The objects (those at `positions`, in order; default all) as Geometry, named `names`
        (default the reader's names)."""
        from gjkcli.scene.objects import Geometry

        which = range(self.count) if positions is None else np.asarray(positions, dtype=np.int64).tolist()
        at = [k for k in which if self.primitive[k]]
        primitives = dict(zip(at, self.shapes.unpack(at))) if at else {}
        out = []
        for n, k in enumerate(which):
            name, file, units, watertight, bodies, element, owner, eps, brep, instance = self.meta[k]
            out.append(Geometry(name=name if names is None else names[n], file=file, vertices=self.vertices[k],
                                faces=self.faces[k], units=units, watertight=watertight, bodies=bodies,
                                element=element, owner=owner, primitive=primitives.get(k), eps=eps, brep=brep,
                                instance=instance))
        return out

    def take(self, positions) -> "Loaded":
        at = np.asarray(positions, dtype=np.int64)
        listed = at.tolist()
        return Loaded(meta=[self.meta[k] for k in listed], vertices=self.vertices.take(at),
                      faces=self.faces.take(at), shapes=self.shapes.take(at), lo=self.lo[at],
                      hi=self.hi[at], gap=self.gap[at], inward=self.inward[at], primitive=self.primitive[at])

    def summary(self) -> Summary:
        if self.problem is not None:
            return Summary(problem=self.problem)
        s = self.shapes
        at = np.flatnonzero(self.primitive).tolist()
        primitives = dict(zip(at, s.take(at).unpack())) if at else {}
        shapes: list = []
        facts: dict = {}  # equal facts are one object: pickled once, one object on the client
        lengths = s.vertices.lengths().tolist()
        dimension = s.dimension.tolist()
        for k in range(self.count):
            if s.errors[k] is not None:
                shapes.append(ShapeError(s.errors[k]))
            elif k in primitives:
                shapes.append(primitives[k])
            else:
                fact = (s.kind[k], lengths[k], dimension[k])
                shapes.append(facts.get(fact) or facts.setdefault(fact, HullFacts(*fact)))
        return Summary(meta=[m[:9] + (_pose_only(m[9]),) for m in self.meta], skipped=self.skipped, shapes=shapes,
                       lo=self.lo, hi=self.hi, gap=self.gap, inward=self.inward,
                       counts=np.column_stack([self.vertices.lengths(), self.faces.lengths()]))

    @classmethod
    def of_primitives(cls, geoms) -> "Loaded":
        """A manifest's primitives (`gjkcli.scene.objects.Geometry` with a `primitive`), packed
        as a load task packs a source's objects."""
        shapes = [g.primitive for g in geoms]
        n = len(geoms)
        bounds = np.array([s.bounds for s in shapes], dtype=np.float64).reshape(n, 2, 3)
        return cls(meta=[(g.name, g.file, g.units, g.watertight, g.bodies, g.element, g.owner,
                          g.eps, g.brep, g.instance) for g in geoms],
                   vertices=Ragged.pack([None] * n), faces=Ragged.pack([None] * n),
                   shapes=PackedShapes.pack(shapes), lo=bounds[:, 0], hi=bounds[:, 1],
                   gap=np.zeros(n), inward=np.zeros(n, dtype=np.uint8), primitive=np.ones(n, dtype=bool))
