"""A STEP file's assembly read from its text, without OpenCASCADE: which solid each instance
places and where, and a digest of each solid's entities, so that a re-scan of a file whose
placements alone changed can tell so (issue 45).

Reading: the DATA section's records (`#id = NAME(args);` or a complex entity
`#id = (NAME(args) NAME(args) ...);`, strings with '' escapes) are split by one regular
expression (`records`); only the few kinds the placements need are parsed into values
(`parse`): numbers, strings, references, enumerations, lists, typed values.

Placements (`instances`), as OpenCASCADE's XCAF reader composes them (`gjkcli.mesh.cad`):
a product (PRODUCT_DEFINITION) has its shapes through SHAPE_DEFINITION_REPRESENTATION ->
PRODUCT_DEFINITION_SHAPE, and the representations those link by a SHAPE_REPRESENTATION_
RELATIONSHIP without a transformation; a representation's items are solids
(MANIFOLD_SOLID_BREP, BREP_WITH_VOIDS, FACETED_BREP), placements (ignored), or MAPPED_ITEMs
(REPRESENTATION_MAP(origin, representation), target: the representation moved from origin onto
target). An assembly's component is a NEXT_ASSEMBLY_USAGE_OCCURRENCE(relating = the assembly,
related = the component), placed by the CONTEXT_DEPENDENT_SHAPE_REPRESENTATION whose
PRODUCT_DEFINITION_SHAPE defines that occurrence: its REPRESENTATION_RELATIONSHIP_WITH_
TRANSFORMATION's ITEM_DEFINED_TRANSFORMATION(item 1, item 2) moves AXIS2_PLACEMENT_3D item 1 of
the component's representation onto item 2 of the assembly's, T = A2 A1^-1. Lengths are
converted into millimetres, OpenCASCADE's unit, by each representation's context's length unit.
Anything else (another item or transformation kind, a unit not understood, a cycle) raises
`Unsupported`: the caller reads the file with OpenCASCADE.

Solid digests (`solid_digests`): a Merkle hash over the entity graph, each entity's digest the
BLAKE2b of its kind, its arguments' text with the references cut out and its referents'
digests in order; entity ids do not count, so a solid whose entities are renumbered keeps its
digest and any changed number, name or structure changes it.
"""
from __future__ import annotations

import math
import re

import numpy as np

from gjkcli.digests import blake2b

__all__ = ["Unsupported", "Assembly", "records", "parse", "solid_digests", "instances", "read_text",
           "SOLID_KINDS"]

SOLID_KINDS = frozenset({"MANIFOLD_SOLID_BREP", "BREP_WITH_VOIDS", "FACETED_BREP"})
# Items of a representation that place nothing gjk reads
_IGNORED_ITEMS = frozenset({"AXIS2_PLACEMENT_3D", "CARTESIAN_POINT", "GEOMETRIC_CURVE_SET",
                            "GEOMETRIC_SET", "DIRECTION", "TEXT_LITERAL",
                            "TEXT_LITERAL_WITH_EXTENT"})
# SI prefixes -> metres per unit, as OpenCASCADE converts them (STEPConstruct_UnitContext)
_SI_PREFIX_M = {None: 1.0, "MILLI": 1e-3, "CENTI": 1e-2, "DECI": 1e-1, "KILO": 1e3,
                "MICRO": 1e-6, "NANO": 1e-9}
# OpenCASCADE's length unit as it reads STEP, in metres
_MM = 1e-3

# a record of the DATA section: its id and its text (strings may hold ';'); possessive, so that
# a record a damaged file leaves without its ';' fails at once instead of trying every way of
# cutting its strings (exponential: a few flipped bytes held the reader for minutes)
_RECORD = re.compile(rb"#(\d+)\s*=\s*((?:'(?:[^']++|'')*+'|[^;']++)*+);")
# a string, a reference or white space: `_canonical` cuts the references out, drops the space
_PIECE = re.compile(rb"'(?:[^']|'')*'|#(\d+)|\s+")
# what `_PIECE` cuts from a record whose strings hold neither: its references and its white space
_REF = re.compile(rb"#(\d+)")
_SPACE = re.compile(rb"\s+")
_STRING = re.compile(rb"'(?:[^']|'')*'")
_SPACE_OR_HASH = re.compile(rb"[\s#]")
_COMMENT = re.compile(rb"'(?:[^']|'')*'|/\*.*?\*/", re.S)
_KIND = re.compile(rb"\s*\(?\s*([A-Z_][A-Z0-9_]*)")


class Unsupported(ValueError):
    """The file holds what the text reader does not read as OpenCASCADE would: read it there."""


def records(data: bytes) -> dict:
    """{id: record text (bytes, from its first kind's name to the closing parenthesis)} of the
    DATA section of a STEP file's bytes."""
    start = data.find(b"DATA;")
    if start < 0:
        raise Unsupported("no DATA section")
    end = data.find(b"ENDSEC;", start)
    if b"/*" in data:  # comments, outside strings, read as a space
        data = _COMMENT.sub(lambda m: m.group() if m.group()[:1] == b"'" else b" ", data)
        start = data.find(b"DATA;")
        end = data.find(b"ENDSEC;", start)
    out = {}
    for m in _RECORD.finditer(data, start, end if end >= 0 else len(data)):
        out[int(m.group(1))] = m.group(2)
    return out


def kind(record: bytes) -> str:
    """The first entity name of a record (a complex entity's first part)."""
    m = _KIND.match(record)
    return m.group(1).decode() if m else ""


# -- values ------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""\s*(?:
    (?P<str>'(?:[^']|'')*')
  | \#(?P<ref>\d+)
  | (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | \.(?P<enum>[A-Z0-9_]+)\.
  | (?P<name>[A-Z_][A-Z0-9_]*)
  | (?P<punct>[(),$*])
  | (?P<bin>"[0-9A-F]*")
)""", re.X)


class Ref(int):
    """A reference `#id` among parsed values."""


class Enum(str):
    """An enumeration `.NAME.` among parsed values."""


def parse(record: bytes):
    """A record's values: a simple entity as (NAME, [args]); a complex one as
    [(NAME, [args]), ...]. Numbers are floats (an integer's text too: an `int` where it has no
    '.' or exponent), strings str (their '' as '), `$` None, `*` "*", lists Python lists, typed
    values (NAME, [args])."""
    text = record.decode("latin-1")
    tokens = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip() == "":
                break
            raise Unsupported(f"cannot read {text[pos:pos + 40]!r}")
        pos = m.end()
        tokens.append(m)
    k = 0

    def value():
        nonlocal k
        m = tokens[k]
        k += 1
        group = m.lastgroup
        if group == "str":
            return m.group("str")[1:-1].replace("''", "'")
        if group == "ref":
            return Ref(int(m.group("ref")))
        if group == "num":
            s = m.group("num")
            return float(s) if ("." in s or "e" in s or "E" in s) else int(s)
        if group == "enum":
            return Enum(m.group("enum"))
        if group == "bin":
            return m.group("bin")
        if group == "name":
            return m.group("name"), arguments()
        p = m.group("punct")
        if p == "$":
            return None
        if p == "*":
            return "*"
        if p == "(":
            k -= 1
            return arguments()
        raise Unsupported(f"unexpected {p!r}")

    def arguments():
        nonlocal k
        if tokens[k].group("punct") != "(":
            raise Unsupported("expected '('")
        k += 1
        out = []
        if tokens[k].group("punct") == ")":
            k += 1
            return out
        while True:
            out.append(value())
            p = tokens[k].group("punct")
            k += 1
            if p == ")":
                return out
            if p != ",":
                raise Unsupported("expected ',' or ')'")

    try:
        if tokens[0].group("punct") == "(":  # a complex entity
            k = 1
            parts = []
            while tokens[k].group("punct") != ")":
                name = tokens[k].group("name")
                if name is None:
                    raise Unsupported("a complex entity's part has no name")
                k += 1
                parts.append((name, arguments()))
            return parts
        name = tokens[0].group("name")
        if name is None:
            raise Unsupported("a record has no entity name")
        k = 1
        return name, arguments()
    except IndexError:
        raise Unsupported("a record ends early") from None


def _refs(values) -> list:
    out = []

    def walk(v):
        if isinstance(v, Ref):
            out.append(int(v))
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(values)
    return out


# -- solid digests -----------------------------------------------------------------------------


def _canonical(record: bytes) -> tuple:
    """(the record's text without white space outside strings and with each reference as '#',
    [referenced ids in order])."""
    if b"'" not in record or not any(_SPACE_OR_HASH.search(x) for x in _STRING.findall(record)):
        # no string holds white space or a '#' (most records: their names are ''): the same, cut
        # from the whole record with a few calls in C
        return _SPACE.sub(b"", _REF.sub(b"#", record)), [int(r) for r in _REF.findall(record)]
    return _by_pieces(record)


def _by_pieces(record: bytes) -> tuple:
    """`_canonical` of any record, a piece (a string, a reference, white space) at a time."""
    refs = []
    out = []
    last = 0
    for m in _PIECE.finditer(record):
        out.append(record[last:m.start()])
        piece = m.group()
        if m.group(1) is not None:
            refs.append(int(m.group(1)))
            out.append(b"#")
        elif piece[:1] == b"'":
            out.append(piece)
        last = m.end()
    out.append(record[last:])
    return b"".join(out), refs


def _refs_of(record: bytes) -> list:
    """`_canonical(record)[1]`, the ids the record refers to, in order: with one call in C
    where no string of the record holds a '#'."""
    if b"'" in record and any(b"#" in x for x in _STRING.findall(record)):
        return _canonical(record)[1]
    return [int(r) for r in _REF.findall(record)]


def solid_digests(recs: dict, ids) -> dict:
    """{id: hex digest} of the entities `ids` (solids), each a Merkle hash of everything it refers
    to, however deep (see the module's docstring). Unsupported for a reference to no record or
    a cycle."""
    done: dict = {}
    canonical: dict = {}  # id -> `_canonical` of its record: each record is visited twice
    for root in ids:
        stack = [(root, False)]
        on_path: set = set()
        while stack:
            i, expanded = stack.pop()
            if i in done:
                continue
            got = canonical.get(i)
            if got is None:
                record = recs.get(i)
                if record is None:
                    raise Unsupported(f"#{i} is referred to but not defined")
                got = canonical[i] = _canonical(record)
            text, refs = got
            if not expanded:
                if i in on_path:
                    raise Unsupported(f"#{i} refers to itself through others")
                on_path.add(i)
                stack.append((i, True))
                for r in refs:
                    if r not in done:
                        if r in on_path:
                            raise Unsupported(f"#{r} refers to itself through others")
                        stack.append((r, False))
                continue
            h = blake2b(digest_size=20)
            h.update(text)
            for r in refs:
                h.update(done[r])
            done[i] = h.digest()
            del canonical[i]
            on_path.discard(i)
    return {i: done[i].hex() for i in ids}


# -- placements --------------------------------------------------------------------------------


class Assembly:
    """A STEP file's text read as far as its placements: `instances` [(solid id, (4, 4) float64
    placement in mm)], `digests` {solid id: hex}, the file's `unit` factor (mm per unit of its
    first context)."""

    def __init__(self, data: bytes):
        self.recs = records(data)
        self.parsed: dict = {}
        by_kind: dict = {}
        for i, record in self.recs.items():
            by_kind.setdefault(kind(record), []).append(i)
        self.by_kind = by_kind
        self.instances = self._instances()
        solids = sorted({i for i, _ in self.instances})
        self.digests = solid_digests(self.recs, solids)

    # parsed records, each once
    def get(self, i: int):
        got = self.parsed.get(i)
        if got is None:
            record = self.recs.get(int(i))
            if record is None:
                raise Unsupported(f"#{i} is referred to but not defined")
            got = self.parsed[i] = parse(record)
        return got

    def simple(self, i: int, *names) -> list:
        """The arguments of simple entity #i, which must be one of `names`."""
        got = self.get(i)
        if not isinstance(got, tuple) or (names and got[0] not in names):
            raise Unsupported(f"#{i} is not {' or '.join(names)}")
        return got[1]

    def part(self, i: int, name: str):
        """The arguments of part `name` of entity #i (simple or complex), or None."""
        got = self.get(i)
        parts = [got] if isinstance(got, tuple) else got
        for n, args in parts:
            if n == name:
                return args
        return None

    # -- numbers

    def point(self, i: int, factor: float) -> tuple:
        args = self.simple(i, "CARTESIAN_POINT")
        xyz = [float(v) for v in args[1]]
        if len(xyz) != 3:
            raise Unsupported(f"#{i} is not a 3D point")
        return tuple(v * factor for v in xyz)

    def direction(self, i: int) -> tuple:
        """A DIRECTION made unit as gp_Dir makes it."""
        args = self.simple(i, "DIRECTION")
        d = [float(v) for v in args[1]]
        if len(d) != 3 or not any(d):
            raise Unsupported(f"#{i} is not a 3D direction")
        return _unit(*d)

    def axes(self, i: int, factor: float) -> tuple:
        """(origin, x, y, z) of AXIS2_PLACEMENT_3D #i, as OpenCASCADE's StepToGeom makes its
        gp_Ax2: the reference direction made normal to the axis by z x (ref x z), y = z x x."""
        _, location, axis, ref = self.simple(i, "AXIS2_PLACEMENT_3D")
        p = self.point(location, factor)
        z = (0.0, 0.0, 1.0) if axis is None else self.direction(axis)
        if ref is not None:
            r = self.direction(ref)
            if _cross(z, r) == (0.0, 0.0, 0.0):
                raise Unsupported(f"#{i} has its reference direction along its axis")
            x = _unit(*_cross(z, _cross(r, z)))  # gp_Dir::CrossCrossed(Vx, V): V x (Vx x V)
        else:  # gp_Ax2(P, V): a coordinate of X is 0, by the smallest of V's
            a, b, c = z
            A, B, C = abs(a), abs(b), abs(c)
            if B <= A and B <= C:
                x = (-c, 0.0, a) if A > C else (c, 0.0, -a)
            elif A <= B and A <= C:
                x = (0.0, -c, b) if B > C else (0.0, c, -b)
            else:
                x = (-b, a, 0.0) if A > B else (b, -a, 0.0)
            x = _unit(*x)
        # Geom_Axis2Placement keeps the axis and x, and makes its gp_Ax2 again from them
        # (Ax2()): x made normal to the axis once more, to the last bit
        x = _unit(*_cross(z, _cross(x, z)))
        y = _unit(*_cross(z, x))
        return p, x, y, z

    def length_factor(self, context: int) -> float:
        """mm per length unit of representation context #context."""
        args = self.part(context, "GLOBAL_UNIT_ASSIGNED_CONTEXT")
        if args is None:
            raise Unsupported(f"context #{context} assigns no units")
        for u in args[0]:
            if self.part(u, "LENGTH_UNIT") is not None:
                return self.unit_factor(u) / _MM
        raise Unsupported(f"context #{context} has no length unit")

    def unit_factor(self, u: int) -> float:
        """Metres per length unit #u."""
        si = self.part(u, "SI_UNIT")
        if si is not None:
            prefix, name = si
            if name != "METRE" or prefix not in _SI_PREFIX_M:
                raise Unsupported(f"#{u} is not a length unit read here")
            return _SI_PREFIX_M[prefix]
        conversion = self.part(u, "CONVERSION_BASED_UNIT")
        if conversion is not None:
            measure = self.get(conversion[1])
            parts = [measure] if isinstance(measure, tuple) else measure
            for name, args in parts:
                if name in ("LENGTH_MEASURE_WITH_UNIT", "MEASURE_WITH_UNIT"):
                    value, unit = args[0], args[1]
                    if not (isinstance(value, tuple) and value[0] in ("LENGTH_MEASURE", "POSITIVE_LENGTH_MEASURE")):
                        raise Unsupported(f"#{u}'s measure is not a length")
                    return float(value[1][0]) * self.unit_factor(unit)
        raise Unsupported(f"#{u} is not a length unit read here")

    # -- representations

    def representation(self, i: int):
        """(items, context) of representation #i (any kind of REPRESENTATION)."""
        got = self.get(i)
        parts = [got] if isinstance(got, tuple) else got
        for name, args in parts:
            if name.endswith("REPRESENTATION") and len(args) == 3 and isinstance(args[1], list):
                return [int(r) for r in args[1]], int(args[2])
        raise Unsupported(f"#{i} is not a representation")

    def _links(self):
        """{representation: [representations linked without a transformation]} both ways."""
        links: dict = {}
        for i in self.by_kind.get("SHAPE_REPRESENTATION_RELATIONSHIP", ()):
            args = self.simple(i, "SHAPE_REPRESENTATION_RELATIONSHIP")
            a, b = int(args[2]), int(args[3])
            links.setdefault(a, []).append(b)
            links.setdefault(b, []).append(a)
        return links

    def solids_of(self, rep: int, seen=None) -> list:
        """[(solid id, (4, 4) placement in mm within rep's frame)] of representation #rep and
        those linked to it without a transformation."""
        seen = set() if seen is None else seen
        if rep in seen:
            return []
        seen.add(rep)
        items, context = self.representation(rep)
        factor = self.length_factor(context)
        out = []
        for item in items:
            if item in self.consumed:  # an assembly's occurrence, placed by `_walk`
                continue
            k = self.get(item)
            name = k[0] if isinstance(k, tuple) else None
            if name in SOLID_KINDS:
                if self.factors.setdefault(item, factor) != factor:
                    raise Unsupported(f"#{item} is in representations of different units")
                out.append((item, None))
            elif name == "MAPPED_ITEM":
                _, source, target = k[1]
                origin, mapped = self.simple(source, "REPRESENTATION_MAP")
                inner_items, inner_context = self.representation(mapped)
                if int(origin) not in inner_items and self.get(origin)[0] != "AXIS2_PLACEMENT_3D":
                    raise Unsupported(f"#{source}'s origin is not a placement")
                T = _displacement(self.axes(origin, self.length_factor(inner_context)),
                                  self.axes(target, factor))
                out.extend((s, _product(T, M)) for s, M in self.solids_of(mapped, set(seen)))
            elif name in _IGNORED_ITEMS:
                continue
            else:
                raise Unsupported(f"#{item} is a {name or 'complex entity'}, an item not read here")
        for other in self._link_map.get(rep, ()):
            out.extend(self.solids_of(other, seen))
        return out

    def mapped_occurrence(self, parent: int, child: int, shapes: dict) -> np.ndarray:
        """(4, 4) in mm: the placement of an occurrence without a CONTEXT_DEPENDENT_SHAPE_
        REPRESENTATION, by the one MAPPED_ITEM of the parent's representation that maps the
        child's (which the parent's own solids then leave out)."""
        found = []
        for rep in shapes.get(parent, ()):
            items, context = self.representation(rep)
            for item in items:
                k = self.get(item)
                if not (isinstance(k, tuple) and k[0] == "MAPPED_ITEM") or item in self.consumed:
                    continue
                _, source, target = k[1]
                origin, mapped = self.simple(source, "REPRESENTATION_MAP")
                if int(mapped) in shapes.get(child, ()):
                    found.append((item, origin, mapped, target, context))
        if not found:
            raise Unsupported(f"an occurrence of #{child} in #{parent} has no placement")
        item, origin, mapped, target, context = found[0]
        self.consumed.add(item)
        return _displacement(self.axes(origin, self.length_factor(self.representation(mapped)[1])),
                             self.axes(target, self.length_factor(context)))

    def _instances(self) -> list:
        self.consumed: set = set()
        self.factors: dict = {}  # solid -> mm per unit of its representation's lengths
        self._link_map = self._links()
        # product definition -> its shape representations
        shapes: dict = {}
        pds_of: dict = {}
        for i in self.by_kind.get("PRODUCT_DEFINITION_SHAPE", ()):
            pds_of[i] = int(self.simple(i, "PRODUCT_DEFINITION_SHAPE")[2])
        for i in self.by_kind.get("SHAPE_DEFINITION_REPRESENTATION", ()):
            pds, rep = (int(r) for r in self.simple(i, "SHAPE_DEFINITION_REPRESENTATION"))
            shapes.setdefault(pds_of.get(pds), []).append(rep)
        # occurrence -> its placement
        placed: dict = {}
        for i in self.by_kind.get("CONTEXT_DEPENDENT_SHAPE_REPRESENTATION", ()):
            relation, pds = (int(r) for r in self.simple(i, "CONTEXT_DEPENDENT_SHAPE_REPRESENTATION"))
            occurrence = pds_of.get(pds)
            if occurrence is None or occurrence in placed:
                raise Unsupported(f"#{i} places no occurrence, or one placed twice")
            placed[occurrence] = relation
        children: dict = {}
        related = set()
        for i in self.by_kind.get("NEXT_ASSEMBLY_USAGE_OCCURRENCE", ()):
            args = self.simple(i, "NEXT_ASSEMBLY_USAGE_OCCURRENCE")
            parent, child = int(args[3]), int(args[4])
            if i not in placed:
                T = self.mapped_occurrence(parent, child, shapes)
            else:
                T = self.transformation(placed[i], shapes.get(parent, ()), shapes.get(child, ()))
            children.setdefault(parent, []).append((child, T))
            related.add(child)
        for kind_ in self.by_kind:
            if "ASSEMBLY" in kind_ and kind_ != "NEXT_ASSEMBLY_USAGE_OCCURRENCE":
                raise Unsupported(f"{kind_} is not read here")
        out = []
        products = [i for i in self.by_kind.get("PRODUCT_DEFINITION", ()) if i not in related]
        for root in products:
            self._walk(root, None, shapes, children, out, set())
        return [(s, np.eye(4) if T is None else T) for s, T in out]

    def _walk(self, pd, T, shapes, children, out, path) -> None:
        if pd in path:
            raise Unsupported(f"product #{pd} contains itself")
        path = path | {pd}
        if children.get(pd) and any(self.solids_of(r) for r in shapes.get(pd, ())):
            raise Unsupported(f"product #{pd} is an assembly with solids of its own")
        for rep in shapes.get(pd, ()):
            for solid, M in self.solids_of(rep):
                out.append((solid, _product(T, M)))
        for child, Tc in children.get(pd, ()):
            self._walk(child, _product(T, Tc), shapes, children, out, path)

    def structure(self) -> str:
        """A digest of everything in the file but its placements' values: every record outside
        the solids (a solid by its digest), each a Merkle hash as `solid_digests` makes them,
        with each AXIS2_PLACEMENT_3D as one token (its values are the composed placements';
        which placement a transformation names, its structure), in the file's order. Equal for
        two files whose assembly, names, units and solids are the same, in the same order, and
        whose placements may differ."""
        inside = set()
        for solid in self.digests:
            inside |= self.closure(solid)
        done: dict = {int(i): bytes.fromhex(d) for i, d in self.digests.items()}
        placement = blake2b(b"AXIS2_PLACEMENT_3D", digest_size=20).digest()
        for i in self.by_kind.get("AXIS2_PLACEMENT_3D", ()):
            if i not in inside:
                done[i] = placement

        def digest(root: int) -> bytes:
            stack = [(root, False)]
            while stack:
                i, expanded = stack.pop()
                if i in done:
                    continue
                record = self.recs.get(i)
                if record is None:
                    raise Unsupported(f"#{i} is referred to but not defined")
                text, refs = _canonical(record)
                if not expanded:
                    stack.append((i, True))
                    stack.extend((r, False) for r in refs if r not in done)
                    continue
                if any(r not in done for r in refs):
                    raise Unsupported(f"#{i} refers to itself through others")
                h = blake2b(digest_size=20)
                h.update(text)
                for r in refs:
                    h.update(done[r])
                done[i] = h.digest()
            return done[root]

        skipped = {"AXIS2_PLACEMENT_3D", "CARTESIAN_POINT", "DIRECTION"}
        # in the file's order, which is the order OpenCASCADE and `instances` meet the
        # products and occurrences in
        rows = [digest(i) for i, record in self.recs.items()
                if i not in inside and kind(record) not in skipped]
        h = blake2b(digest_size=20)
        for row in rows:
            h.update(row)
        return h.hexdigest()

    def closure(self, i: int) -> set:
        """The ids of every entity #i refers to, however deep, and #i."""
        seen, todo = set(), [int(i)]
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo.extend(_refs_of(self.recs[j]))
        return seen

    def vertices(self, solid: int) -> np.ndarray:
        """(n, 3) the points of the VERTEX_POINTs of a solid, in mm."""
        factor = self.factors[solid]
        points = [self.point(self.simple(j, "VERTEX_POINT")[1], factor)
                  for j in sorted(self.closure(solid)) if kind(self.recs[j]) == "VERTEX_POINT"]
        return np.array(points).reshape(-1, 3)

    def transformation(self, relation: int, parent_reps=(), child_reps=()) -> np.ndarray:
        """(4, 4) in mm of a REPRESENTATION_RELATIONSHIP_WITH_TRANSFORMATION (complex) #relation:
        the component's representation (rep 1) into the assembly's (rep 2); or the other way
        where rep 1 is the assembly's (`parent_reps`) or rep 2 the component's (`child_reps`),
        as some writers give them (OpenCASCADE's STEPConstruct_Assembly::CheckSRRReversesNAUO)."""
        base = self.part(relation, "REPRESENTATION_RELATIONSHIP")
        how = self.part(relation, "REPRESENTATION_RELATIONSHIP_WITH_TRANSFORMATION")
        if base is None or how is None:
            raise Unsupported(f"#{relation} is not a relationship with a transformation")
        rep1, rep2 = int(base[2]), int(base[3])
        idt = self.simple(how[0], "ITEM_DEFINED_TRANSFORMATION")
        item1, item2 = int(idt[2]), int(idt[3])
        # reversed: OpenCASCADE composes the transformation as given, then inverts it
        reversed_ = rep1 in parent_reps or rep2 in child_reps
        items1, context1 = self.representation(rep1)
        items2, context2 = self.representation(rep2)
        if item1 not in items1 and item1 in items2 and item2 in items1:
            item1, item2 = item2, item1
        T = _displacement(self.axes(item1, self.length_factor(context1)),
                          self.axes(item2, self.length_factor(context2)))
        return _inverse(T) if reversed_ else T


# -- OpenCASCADE's arithmetic (gp_Dir, gp_Ax2, gp_Trsf), operation for operation, so that a
# placement composed here is the reader's to the bit where the compiled code rounds alike


def _unit(x: float, y: float, z: float) -> tuple:
    d = math.sqrt(x * x + y * y + z * z)
    return x / d, y / d, z / d


def _cross(a: tuple, b: tuple) -> tuple:
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


def _displacement(origin: tuple, target: tuple) -> np.ndarray:
    """(4, 4) gp_Trsf::SetTransformation(target, origin): a point's coordinates in `target`'s
    frame into `origin`'s, origin^-1 target (STEPControl_ActorRead's placement of a component
    whose transformation items are `origin` in the component, `target` in the assembly)."""
    (o, ox, oy, oz), (t, tx, ty, tz) = origin, target
    rows = (ox, oy, oz)  # origin's axes as rows: the inverse of its rotation
    loc = tuple(-(r[0] * o[0] + r[1] * o[1] + r[2] * o[2]) for r in rows)
    moved = tuple(r[0] * t[0] + r[1] * t[1] + r[2] * t[2] for r in rows)
    loc = tuple(a + b for a, b in zip(loc, moved))
    columns = (tx, ty, tz)
    T = np.eye(4)
    for i, r in enumerate(rows):
        for j, c in enumerate(columns):
            T[i, j] = r[0] * c[0] + r[1] * c[1] + r[2] * c[2]
        T[i, 3] = loc[i]
    return T


def _inverse(T: np.ndarray) -> np.ndarray:
    """gp_Trsf::Invert of a rigid placement: the rotation transposed, -R^T t."""
    out = np.eye(4)
    R = T[:3, :3].T.copy()
    out[:3, :3] = R
    for i in range(3):
        out[i, 3] = -(R[i, 0] * T[0, 3] + R[i, 1] * T[1, 3] + R[i, 2] * T[2, 3])
    return out


def _product(first, second):
    """first * second as TopLoc_Location composes placements (gp_Trsf::PreMultiply of second
    by first); None is the identity."""
    if first is None:
        return second
    if second is None:
        return first
    M, N = first, second
    T = np.eye(4)
    for i in range(3):
        v = M[i, 0] * N[0, 3] + M[i, 1] * N[1, 3] + M[i, 2] * N[2, 3]
        T[i, 3] = v + M[i, 3]
        for j in range(3):
            T[i, j] = M[i, 0] * N[0, j] + M[i, 1] * N[1, j] + M[i, 2] * N[2, j]
    return T


def instances(data: bytes) -> list:
    """[(solid id, (4, 4) placement in mm)] of a STEP file's bytes (`Assembly`)."""
    return Assembly(data).instances


def read_text(path) -> Assembly:
    from pathlib import Path

    return Assembly(Path(path).read_bytes())
