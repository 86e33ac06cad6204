"""Length units: the one table of their names and sizes, and lengths with a unit as users write
them (`--clearance 0.1mm`, `0.004in`, `2um`, `1e-3m`).

A bottom layer (beside `gjkcli.tolerances`): the CLI parses options with it, the readers name
their files' units with it, the pipeline converts with it. Standard library only.

- `canonical(name)`: a unit's short name ("mm", "in", ...) from any spelling a file or a user
  uses ("millimetre", "INCH", "µm"), or None for a name not in the table.
- `Length`: a value and the unit it was written in (None: the model's unit, whatever that is).
- `parse_length(text)`: "0.1mm" -> Length(0.1, "mm"); "0.1" -> Length(0.1, None).
- `factor(src, dst)`: how many `dst` one `src` is (25.4 for "in" -> "mm").
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["METRES", "ALIASES", "Length", "canonical", "factor", "parse_length", "scaled_unit",
           "UnitError"]

# The size of each unit in metres. Inch and foot are exact by definition (1959).
METRES = {
    "nm": 1e-9, "um": 1e-6, "mm": 1e-3, "cm": 1e-2, "dm": 1e-1, "m": 1.0, "km": 1e3,
    "mil": 25.4e-6, "in": 25.4e-3, "ft": 0.3048, "yd": 0.9144,
    # CSS's absolute units, as SVG states them: 96 px, 72 pt and 6 pc to the inch
    "px": 25.4e-3 / 96, "pt": 25.4e-3 / 72, "pc": 25.4e-3 / 6,
}

# Other spellings of the units above, lower case, as files (STEP's SI_UNIT prefixes, trimesh's
# `units`, glTF extras) and people write them.
ALIASES = {
    "nanometer": "nm", "nanometers": "nm", "nanometre": "nm", "nanometres": "nm",
    "micron": "um", "microns": "um", "micrometer": "um", "micrometers": "um",
    "micrometre": "um", "micrometres": "um", "µm": "um", "μm": "um",
    "millimeter": "mm", "millimeters": "mm", "millimetre": "mm", "millimetres": "mm",
    "centimeter": "cm", "centimeters": "cm", "centimetre": "cm", "centimetres": "cm",
    "decimeter": "dm", "decimeters": "dm", "decimetre": "dm", "decimetres": "dm",
    "meter": "m", "meters": "m", "metre": "m", "metres": "m",
    "kilometer": "km", "kilometers": "km", "kilometre": "km", "kilometres": "km",
    "thou": "mil", "mils": "mil",
    "inch": "in", "inches": "in", '"': "in",
    "foot": "ft", "feet": "ft", "'": "ft",
    "yard": "yd", "yards": "yd",
    "pixel": "px", "pixels": "px", "point": "pt", "points": "pt", "pica": "pc", "picas": "pc",
}

# A number, then optionally a unit: "0.1mm", "1e-3 m", "2 um", ".5in".
_LENGTH = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\d\s].*?)?\s*")


class UnitError(ValueError):
    """A unit name not in the table, or a length that is not a number with a unit."""


def canonical(name: str | None) -> str | None:
    """The table's short name of a unit spelled any way ("Millimetre" -> "mm"), else None."""
    if name is None:
        return None
    key = str(name).strip().lower()
    if key in METRES:
        return key
    return ALIASES.get(key)


def scaled_unit(name: str | None) -> tuple[float, str] | None:
    """(s, unit) for a unit that is s of a unit of the table, as an SVG states its user unit
    ("0.264583 mm": its viewBox maps one user unit to that much of the width's unit); (1, unit)
    for a plain unit; None for anything else."""
    short = canonical(name)
    if short is not None:
        return 1.0, short
    if name is None:
        return None
    m = _LENGTH.fullmatch(str(name))
    if m is None or not m.group(2) or canonical(m.group(2)) is None:
        return None
    s = float(m.group(1))
    return (s, canonical(m.group(2))) if s > 0 and math.isfinite(s) else None


def factor(src: str, dst: str) -> float:
    """How many `dst` make one `src`: a length in `src` times this is the length in `dst`.

    Raises UnitError when either unit is not in the table.
    """
    a, b = canonical(src), canonical(dst)
    if a is None or b is None:
        raise UnitError(f"unknown length unit {src if a is None else dst!r}; "
                        f"use one of {', '.join(METRES)}")
    if a == b:
        return 1.0
    return METRES[a] / METRES[b]


@dataclass(frozen=True)
class Length:
    """A length as written: `value` in `unit`, or in the model's unit when `unit` is None."""

    value: float
    unit: str | None = None

    def to(self, unit: str | None) -> float:
        """The value in `unit` (a scene's unit). A length without a unit is the model's already;
        a length with one needs a scene that states its unit (UnitError otherwise)."""
        if self.unit is None:
            return self.value
        if unit is None or canonical(unit) is None:
            raise UnitError(f"{self} has a unit, and the inputs state none gjk knows "
                            f"({unit or 'no unit'}): give the number without a unit, in the "
                            f"model's units, or declare the unit of inputs that state none "
                            f"(--units mm)")
        return self.value * factor(self.unit, unit)

    def __str__(self) -> str:
        return f"{self.value:g}{self.unit or ''}"


def written_unit(values) -> str | None:
    """The unit of the first length of `values` written with one (canonical), or None: a run
    that loaded nothing (every input refused) takes the lengths in it, no object stating
    another (`gjkcli.pipeline.stages.Run.one_unit`)."""
    return next((canonical(v.unit) for v in values if isinstance(v, Length) and v.unit is not None), None)


def parse_length(text) -> Length:
    """A length as a user writes it: a finite number >= 0, optionally followed by a unit of the
    table ("0.1mm", "0.004 in", "2um", "1e-3m", "5e-3"). A float passes through without a unit.

    Raises UnitError with a sentence saying what is wrong.
    """
    if isinstance(text, (int, float)):
        value, unit = float(text), None
    else:
        m = _LENGTH.fullmatch(str(text))
        if m is None:
            raise UnitError(f"{text!r} is not a length: write a number, optionally with a unit "
                            f"(0.1, 0.1mm, 0.004in, 2um)")
        value = float(m.group(1))
        unit = None
        if m.group(2):
            unit = canonical(m.group(2))
            if unit is None:
                raise UnitError(f"{text!r}: unknown unit {m.group(2)!r}; use one of "
                                f"{', '.join(METRES)}")
    if not (value >= 0.0 and math.isfinite(value)):
        raise UnitError(f"must be a finite number >= 0, got {text}")
    return Length(value, unit)
