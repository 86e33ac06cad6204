"""`--format bcf`: the clashes of a scan of IFC models as a BCF 2.1 file (BIM Collaboration
Format, buildingSMART), which BIM tools (Solibri, BIMcollab, Revit's BCF managers, Bonsai,
Navisworks through plug-ins) open as a list of issues next to the model.

Findings in, the bytes of a ``.bcfzip`` out; nothing here prints, reads files or runs the engine.
The standard library writes the XML (zipfile, xml.etree) against buildingSMART's BCF 2.1 schemas
(version.xsd, markup.xsd, visinfo.xsd), in their element order:

- ``bcf.version``: VersionId "2.1";
- one folder per topic, named by the topic's Guid, holding ``markup.bcf`` and ``viewpoint.bcfv``;
- a topic per violation that no rule allows (`Finding.violation` and not `Finding.allowed`: a
  collision, a pair closer than its clearance, touching under --fail-on touching, undecided;
  a baseline's known pairs too, as they are still there): TopicType "Clash", TopicStatus "Open",
  a Label with the status, a Title naming both elements by class and Name, a Description with
  the numbers (depth or distance in the file's unit, the overlap volume, the GlobalIds, the
  files), and the file(s) in the Header;
- the topic's Guid is a UUID made from the pair (files, GlobalIds or names, status), so a rerun
  gives the same Guids and a BCF tool can match the issues of two runs;
- grouped clashes (`gjkcli.pipeline.grouping`: --group-within) are one topic per group: its
  Title counts the clashes and names the first elements, its Description lists every pair with
  its numbers and every element with its GlobalId, its viewpoint selects every element and
  looks at the group's centre from far enough to see every contact; its Guid is made from the
  group's elements and clash set;
- a pair of a clash set (a named manifest [[check]]) carries the set's name as a second Label,
  and `bcf_files` makes one BCF per clash set;
- an element whose Name is blank is named by its class and GlobalId;
- its viewpoint selects and colours the two elements (their GlobalIds as Components; an object
  that is not an IFC element has none and is named in the Description only) and puts a
  perspective camera looking at the contact: the midpoint of the pair's witness points (the
  centroid of the overlap solid for a collision that has one), from above at 45 degrees, at a
  distance that frames the smaller element. BCF positions are in metres: the run's length unit
  (`Findings.units`, which every object shares once the run has converted them) is converted
  with gjkcli.units ("mm" -> 0.001).
"""
from __future__ import annotations

import io
import math
import uuid
import zipfile
from datetime import datetime, timezone
from xml.etree import ElementTree as ET

from gjkcli.engine.results import Status
from gjkcli.pipeline.findings import Finding, Findings
from gjkcli.units import METRES, canonical

__all__ = ["bcf_zip", "bcf_files", "topics", "BCF_VERSION", "needs_ifc"]

BCF_VERSION = "2.1"

# The UUID namespace of gjk's topic Guids (uuid5 over the pair's key).
_TOPIC_NAMESPACE = uuid.UUID("5f0c2f6e-8a0e-4d8c-9a51-6a6b0f1c2d16")

# How the camera looks at a contact: from above at 45 degrees (view direction down and
# diagonal in plan), with the field of view BCF 2.1 allows (45 to 60 degrees).
_VIEW = (1.0, 1.0, -math.sqrt(2.0))
_FIELD_OF_VIEW = 60.0
_RED, _ORANGE = "FFFF0000", "FFFF8000"


def needs_ifc(found: Findings) -> str | None:
    """Why the findings cannot be BCF (no object is an IFC element), or None."""
    if any(o.global_id for o in found.objects):
        return None
    return ("BCF names elements by their IFC GlobalId, and no object of this run is an IFC "
            "element; scan .ifc models, or choose another --format")


def topics(found: Findings) -> list[Finding]:
    """The pairs that become topics: violations no rule allows, most severe first."""
    return [p for p in found.pairs if p.violation and not p.allowed]


_EVERY_SET = object()


def bcf_files(found: Findings, *, now: datetime | None = None) -> list:
    """One BCF per clash set: [(clash set name, or None for pairs of no named set; the bytes of
    its .bcfzip)], the sets in the order of their first topic; [(None, bytes)] without sets."""
    names = list(dict.fromkeys(p.clash_set for p in topics(found)))
    if len(names) <= 1:
        return [(names[0] if names else None, bcf_zip(found, now=now))]
    return [(name, bcf_zip(found, now=now, clash_set=name)) for name in names]


def bcf_zip(found: Findings, *, now: datetime | None = None, clash_set=_EVERY_SET) -> bytes:
    """The findings as the bytes of a BCF 2.1 zip (``.bcfzip``): a topic per group of clashes
    and per violation that is in no group.

    now : the topics' CreationDate (default: the current time, UTC)
    clash_set : only the topics of this clash set (a name, or None for pairs of no named set;
        default: every topic)
    """
    stamp = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat()
    chosen = [p for p in topics(found) if clash_set is _EVERY_SET or p.clash_set == clash_set]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bcf.version", _xml(_version()))
        grouped: dict = {}
        for pair in chosen:
            if pair.group is not None:
                grouped.setdefault(pair.group, []).append(pair)
                continue
            a, b = found.object(pair.a), found.object(pair.b)
            guid = _topic_guid(pair, a, b)
            viewpoint = str(uuid.uuid5(_TOPIC_NAMESPACE, guid + "/viewpoint"))
            z.writestr(f"{guid}/markup.bcf", _xml(_markup(pair, a, b, guid, viewpoint, stamp, found)))
            z.writestr(f"{guid}/viewpoint.bcfv", _xml(_visinfo(pair, a, b, viewpoint, found.units)))
        for number, pairs in grouped.items():
            guid = _group_guid(pairs, found)
            viewpoint = str(uuid.uuid5(_TOPIC_NAMESPACE, guid + "/viewpoint"))
            z.writestr(f"{guid}/markup.bcf", _xml(_group_markup(number, pairs, guid, viewpoint, stamp, found)))
            z.writestr(f"{guid}/viewpoint.bcfv", _xml(_group_visinfo(pairs, viewpoint, found)))
    return buffer.getvalue()


# -- documents -------------------------------------------------------------------------------------


def _version() -> ET.Element:
    root = ET.Element("Version", VersionId=BCF_VERSION)
    ET.SubElement(root, "DetailedVersion").text = BCF_VERSION
    return root


def _markup(pair: Finding, a, b, guid: str, viewpoint: str, stamp: str, found: Findings) -> ET.Element:
    root = _header((pair.file_a, pair.file_b))
    topic = ET.SubElement(root, "Topic", Guid=guid, TopicType="Clash", TopicStatus="Open")
    ET.SubElement(topic, "Title").text = _title(pair, a, b)
    for label in _labels([pair]):
        ET.SubElement(topic, "Labels").text = label
    ET.SubElement(topic, "CreationDate").text = stamp
    ET.SubElement(topic, "CreationAuthor").text = f"gjk {found.version}"
    ET.SubElement(topic, "Description").text = _description(pair, a, b, found.units)
    views = ET.SubElement(root, "Viewpoints", Guid=viewpoint)
    ET.SubElement(views, "Viewpoint").text = "viewpoint.bcfv"
    return root


def _header(files) -> ET.Element:
    """A Markup with its Header: each file once."""
    root = ET.Element("Markup")
    header = ET.SubElement(root, "Header")
    for file in dict.fromkeys(files):
        entry = ET.SubElement(header, "File", isExternal="true")
        ET.SubElement(entry, "Filename").text = file.replace("\\", "/").rsplit("/", 1)[-1]
        ET.SubElement(entry, "Reference").text = file
    return root


def _labels(pairs) -> list:
    """A topic's Labels: the most severe status of its pairs, then its clash set when it has one."""
    worst = min((Status(p.status) for p in pairs), key=lambda s: _SEVERITY_ORDER.index(s))
    return [worst.value] + ([pairs[0].clash_set] if pairs[0].clash_set else [])


_SEVERITY_ORDER = [Status.UNDECIDED, Status.COLLISION, Status.CLEARANCE, Status.TOUCHING, Status.CLEAR]


def _group_markup(number: int, pairs: list, guid: str, viewpoint: str, stamp: str,
                  found: Findings) -> ET.Element:
    root = _header(f for p in pairs for f in (p.file_a, p.file_b))
    topic = ET.SubElement(root, "Topic", Guid=guid, TopicType="Clash", TopicStatus="Open")
    names = list(dict.fromkeys(n for p in pairs for n in (p.a, p.b)))
    who = [_who(n, found.object(n)) for n in names]
    more = f" and {len(who) - 3} more" if len(who) > 3 else ""
    clashes = f"{len(pairs)} clash{'es' if len(pairs) != 1 else ''}"
    ET.SubElement(topic, "Title").text = f"Group {number}: {clashes} of {', '.join(who[:3])}{more}"
    for label in _labels(pairs):
        ET.SubElement(topic, "Labels").text = label
    ET.SubElement(topic, "CreationDate").text = stamp
    ET.SubElement(topic, "CreationAuthor").text = f"gjk {found.version}"
    lines = [f"{clashes} at one place" + (f" in clash set {pairs[0].clash_set!r}" if pairs[0].clash_set
                                          else "") + "."]
    for k, p in enumerate(pairs, start=1):
        a, b = found.object(p.a), found.object(p.b)
        lines.append(f"{k}. {_title(p, a, b)}: {_description(p, a, b, found.units)}")
    elements = []
    for n in names:
        o = found.object(n)
        gid = f"GlobalId {o.global_id}" if o is not None and o.global_id else "not an IFC element"
        elements.append(f"{_who(n, o)} ({gid})")
    lines.append(f"Elements: {'; '.join(elements)}.")
    ET.SubElement(topic, "Description").text = "\n".join(lines)
    views = ET.SubElement(root, "Viewpoints", Guid=viewpoint)
    ET.SubElement(views, "Viewpoint").text = "viewpoint.bcfv"
    return root


def _group_visinfo(pairs: list, guid: str, found: Findings) -> ET.Element:
    """Every element of the group selected and red, the camera at the mean of its contacts,
    backed off to see the farthest contact and the smallest element."""
    from gjkcli.pipeline.groups import contact

    objects = [found.object(n) for n in dict.fromkeys(n for p in pairs for n in (p.a, p.b))]
    ids = list(dict.fromkeys(o.global_id for o in objects if o is not None and o.global_id))
    root = ET.Element("VisualizationInfo", Guid=guid)
    _components(root, ids, [_RED] * len(ids))
    points = [contact(p) for p in pairs]
    centre = [sum(float(q[i]) for q in points) / len(points) for i in range(3)]
    spread = 2.0 * max(math.dist(centre, [float(x) for x in q]) for q in points)
    sizes = [math.dist(o.bounds[0], o.bounds[1]) for o in objects if o is not None]
    _perspective(root, centre, max([spread] + ([min(sizes)] if sizes else [])), _units(found.units, objects))
    return root


def _components(root: ET.Element, ids: list, colours: list) -> None:
    components = ET.SubElement(root, "Components")
    selection = ET.SubElement(components, "Selection")
    for gid in ids:
        ET.SubElement(selection, "Component", IfcGuid=gid)
    ET.SubElement(components, "Visibility", DefaultVisibility="true")
    coloring = ET.SubElement(components, "Coloring")
    for gid, colour in zip(ids, colours):
        ET.SubElement(ET.SubElement(coloring, "Color", Color=colour), "Component", IfcGuid=gid)


def _visinfo(pair: Finding, a, b, guid: str, units: str | None) -> ET.Element:
    root = ET.Element("VisualizationInfo", Guid=guid)
    ids = [o.global_id for o in (a, b) if o is not None and o.global_id]
    _components(root, ids, [_RED, _ORANGE])
    position, direction, up = _camera(pair, a, b, units)
    _camera_element(root, position, direction, up)
    return root


def _perspective(root: ET.Element, target, reach: float, scale: float) -> None:
    _camera_element(root, *_look_at(target, reach, scale))


def _camera_element(root: ET.Element, position, direction, up) -> None:
    camera = ET.SubElement(root, "PerspectiveCamera")
    for tag, v in (("CameraViewPoint", position), ("CameraDirection", direction), ("CameraUpVector", up)):
        node = ET.SubElement(camera, tag)
        for axis, x in zip("XYZ", v):
            ET.SubElement(node, axis).text = repr(float(x))
    ET.SubElement(camera, "FieldOfView").text = repr(_FIELD_OF_VIEW)


def _xml(root: ET.Element) -> bytes:
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


# -- words and numbers --------------------------------------------------------------------------------


def _who(name: str, o) -> str:
    """An element as a title names it: class and Name ("IfcBeam 'B-12'"), class and GlobalId
    when the Name is absent or blank, else the object's name."""
    if o is None or not o.ifc_class:
        return name
    if o.ifc_name and o.ifc_name.strip():
        return f"{o.ifc_class} '{o.ifc_name.strip()}'"
    return f"{o.ifc_class} {o.global_id}" if o.global_id else o.ifc_class


def _title(pair: Finding, a, b) -> str:
    what = {Status.COLLISION: "Clash", Status.CLEARANCE: "Clearance", Status.TOUCHING: "Touching",
            Status.UNDECIDED: "Undecided"}.get(Status(pair.status), Status(pair.status).value)
    return f"{what}: {_who(pair.a, a)} and {_who(pair.b, b)}"


def _description(pair: Finding, a, b, units: str | None = None) -> str:
    r = pair.result
    units = units or (a.units if a else None) or (b.units if b else None) or "model units"
    status = Status(pair.status)
    if status is Status.COLLISION:
        numbers = f"collision, depth {_num(r.depth)} {units}"
        if pair.overlap_volume is not None:
            numbers += f", overlap volume {_num(pair.overlap_volume)} {units}^3"
    elif status is Status.CLEARANCE:
        numbers = f"{_num(r.distance)} {units} apart, closer than the required {_num(pair.clearance)} {units}"
    elif status is Status.TOUCHING:
        numbers = "touching (within the touching band)"
    else:
        numbers = f"undecided: {_num(r.distance)} {units} apart at most"
    lines = [numbers + "."]
    for name, o, file in ((pair.a, a, pair.file_a), (pair.b, b, pair.file_b)):
        gid = f"GlobalId {o.global_id}" if o is not None and o.global_id else "not an IFC element"
        lines.append(f"{_who(name, o)} ({gid}) in {file}.")
    if pair.known:
        lines.append("Recorded in the baseline.")
    return " ".join(lines)


def _num(x) -> str:
    return "n/a" if x is None or not math.isfinite(float(x)) else f"{float(x):.6g}"


def _camera(pair: Finding, a, b, units: str | None):
    """(position, direction, up) in metres: the camera looks at the contact from above at 45
    degrees, far enough back that the smaller element's box fills about the view.

    units : the run's length unit (`Findings.units`), else the objects' own; metres when none
    is stated (IFC files always state one)."""
    scale = _units(units, (a, b))
    contact = _contact(pair)
    sizes = [math.dist(o.bounds[0], o.bounds[1]) for o in (a, b) if o is not None]
    return _look_at(contact, min(sizes) if sizes else 1.0, scale)


def _units(units: str | None, objects) -> float:
    """Metres per unit of the run (`Findings.units`), else of the objects; 1 when none says."""
    units = units or next((o.units for o in objects if o is not None and o.units), None)
    return METRES.get(canonical(units) or "m", 1.0)


def _look_at(contact, reach: float, scale: float):
    """(position, direction, up) in metres of a camera looking at `contact` (file units) from
    above at 45 degrees, far enough back that `reach` (file units) fills about the view."""
    distance = max(reach * scale, 0.5) / math.tan(math.radians(_FIELD_OF_VIEW) / 2)
    norm = math.sqrt(sum(v * v for v in _VIEW))
    direction = [v / norm for v in _VIEW]
    position = [c * scale - d * distance for c, d in zip(contact, direction)]
    # up: the world's z made perpendicular to the view direction
    dz = direction[2]
    up = [-dz * direction[0], -dz * direction[1], 1.0 - dz * direction[2]]
    up_norm = math.sqrt(sum(u * u for u in up))
    return position, direction, [u / up_norm for u in up]


def _contact(pair: Finding) -> list:
    """The point the clash is at (file units): `gjkcli.pipeline.grouping.contact`."""
    from gjkcli.pipeline.groups import contact

    return [float(x) for x in contact(pair)]


def _group_guid(pairs: list, found: Findings) -> str:
    """The same group (its elements, in its clash set) gets the same Guid in every run."""
    keys = sorted({f"{file}|{o.global_id if o is not None and o.global_id else name}"
                   for p in pairs for name, file in ((p.a, p.file_a), (p.b, p.file_b))
                   for o in (found.object(name),)})
    return str(uuid.uuid5(_TOPIC_NAMESPACE, "group|" + "|".join(keys) + f"|{pairs[0].clash_set}"))


def _topic_guid(pair: Finding, a, b) -> str:
    ids = sorted(f"{file}|{o.global_id if o is not None and o.global_id else name}"
                 for name, o, file in ((pair.a, a, pair.file_a), (pair.b, b, pair.file_b)))
    key = "|".join(ids) + f"|{Status(pair.status).value}|{pair.waypoint}"
    return str(uuid.uuid5(_TOPIC_NAMESPACE, key))
