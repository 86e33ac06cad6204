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
- its viewpoint selects and colours the two elements (their GlobalIds as Components; an object
  that is not an IFC element has none and is named in the Description only) and puts a
  perspective camera looking at the contact: the midpoint of the pair's witness points (the mean
  of the overlap solid's vertices for a collision that has one), from above at 45 degrees, at a
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

__all__ = ["bcf_zip", "topics", "BCF_VERSION", "needs_ifc"]

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


def bcf_zip(found: Findings, *, now: datetime | None = None) -> bytes:
    """The findings as the bytes of a BCF 2.1 zip (``.bcfzip``).

    now : the topics' CreationDate (default: the current time, UTC)
    """
    stamp = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bcf.version", _xml(_version()))
        for pair in topics(found):
            a, b = found.object(pair.a), found.object(pair.b)
            guid = _topic_guid(pair, a, b)
            viewpoint = str(uuid.uuid5(_TOPIC_NAMESPACE, guid + "/viewpoint"))
            z.writestr(f"{guid}/markup.bcf", _xml(_markup(pair, a, b, guid, viewpoint, stamp, found)))
            z.writestr(f"{guid}/viewpoint.bcfv", _xml(_visinfo(pair, a, b, viewpoint, found.units)))
    return buffer.getvalue()


# -- documents -------------------------------------------------------------------------------------


def _version() -> ET.Element:
    root = ET.Element("Version", VersionId=BCF_VERSION)
    ET.SubElement(root, "DetailedVersion").text = BCF_VERSION
    return root


def _markup(pair: Finding, a, b, guid: str, viewpoint: str, stamp: str, found: Findings) -> ET.Element:
    root = ET.Element("Markup")
    header = ET.SubElement(root, "Header")
    for file in dict.fromkeys((pair.file_a, pair.file_b)):
        entry = ET.SubElement(header, "File", isExternal="true")
        ET.SubElement(entry, "Filename").text = file.replace("\\", "/").rsplit("/", 1)[-1]
        ET.SubElement(entry, "Reference").text = file
    topic = ET.SubElement(root, "Topic", Guid=guid, TopicType="Clash", TopicStatus="Open")
    ET.SubElement(topic, "Title").text = _title(pair, a, b)
    ET.SubElement(topic, "Labels").text = Status(pair.status).value
    ET.SubElement(topic, "CreationDate").text = stamp
    ET.SubElement(topic, "CreationAuthor").text = f"gjk {found.version}"
    ET.SubElement(topic, "Description").text = _description(pair, a, b, found.units)
    views = ET.SubElement(root, "Viewpoints", Guid=viewpoint)
    ET.SubElement(views, "Viewpoint").text = "viewpoint.bcfv"
    return root


def _visinfo(pair: Finding, a, b, guid: str, units: str | None) -> ET.Element:
    root = ET.Element("VisualizationInfo", Guid=guid)
    components = ET.SubElement(root, "Components")
    ids = [o.global_id for o in (a, b) if o is not None and o.global_id]
    selection = ET.SubElement(components, "Selection")
    for gid in ids:
        ET.SubElement(selection, "Component", IfcGuid=gid)
    ET.SubElement(components, "Visibility", DefaultVisibility="true")
    coloring = ET.SubElement(components, "Coloring")
    for gid, colour in zip(ids, (_RED, _ORANGE)):
        ET.SubElement(ET.SubElement(coloring, "Color", Color=colour), "Component", IfcGuid=gid)
    position, direction, up = _camera(pair, a, b, units)
    camera = ET.SubElement(root, "PerspectiveCamera")
    for tag, v in (("CameraViewPoint", position), ("CameraDirection", direction), ("CameraUpVector", up)):
        node = ET.SubElement(camera, tag)
        for axis, x in zip("XYZ", v):
            ET.SubElement(node, axis).text = repr(float(x))
    ET.SubElement(camera, "FieldOfView").text = repr(_FIELD_OF_VIEW)
    return root


def _xml(root: ET.Element) -> bytes:
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


# -- words and numbers --------------------------------------------------------------------------------


def _who(name: str, o) -> str:
    """An element as a title names it: class and Name ("IfcBeam 'B-12'"), else the object's name."""
    if o is None or not o.ifc_class:
        return name
    return f"{o.ifc_class} '{o.ifc_name}'" if o.ifc_name else o.ifc_class


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
    units = units or (a.units if a else None) or (b.units if b else None)
    scale = METRES.get(canonical(units) or "m", 1.0)
    contact = _contact(pair)
    sizes = [math.dist(o.bounds[0], o.bounds[1]) for o in (a, b) if o is not None]
    reach = min(sizes) if sizes else 1.0
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
    """The point the clash is at (file units): the mean of the overlap solid's vertices when
    there is one (inside the solid for a convex overlap), else the midpoint of the witness points."""
    if pair.overlap_mesh is not None:
        vertices = pair.overlap_mesh[0]
        if len(vertices):
            return [float(x) for x in vertices.mean(axis=0)]
    r = pair.result
    return [(float(p) + float(q)) / 2.0 for p, q in zip(r.point_a, r.point_b)]


def _topic_guid(pair: Finding, a, b) -> str:
    ids = sorted(f"{file}|{o.global_id if o is not None and o.global_id else name}"
                 for name, o, file in ((pair.a, a, pair.file_a), (pair.b, b, pair.file_b)))
    key = "|".join(ids) + f"|{Status(pair.status).value}|{pair.waypoint}"
    return str(uuid.uuid5(_TOPIC_NAMESPACE, key))
