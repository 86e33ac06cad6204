"""gjkcli.units: the unit table, lengths as users write them, conversions."""
import math

import pytest

from gjkcli.units import METRES, Length, UnitError, canonical, factor, parse_length


@pytest.mark.parametrize("text, want", [
    ("0.1mm", Length(0.1, "mm")), ("0.004in", Length(0.004, "in")), ("2um", Length(2.0, "um")),
    ("1e-3m", Length(1e-3, "m")), ("5e-3", Length(5e-3, None)), (" 0.5 MM ", Length(0.5, "mm")),
    (".25 inch", Length(0.25, "in")), ("3µm", Length(3.0, "um")), ("0", Length(0.0, None)),
    ("1E2 millimetres", Length(100.0, "mm")), (0.5, Length(0.5, None)),
])
def test_parse_length(text, want):
    assert parse_length(text) == want


@pytest.mark.parametrize("text", ["", "mm", "-1mm", "1 parsec", "nan", "inf", "1e999", "1..2mm",
                                  "0.1 mm mm"])
def test_parse_length_refuses(text):
    with pytest.raises(UnitError):
        parse_length(text)


def test_factors_are_the_definitions():
    assert factor("in", "mm") == pytest.approx(25.4, rel=1e-15)
    assert factor("ft", "in") == pytest.approx(12.0, rel=1e-15)
    assert factor("mm", "m") == pytest.approx(1e-3, rel=1e-15)
    assert factor("um", "mm") == pytest.approx(1e-3, rel=1e-15)
    assert factor("mil", "in") == pytest.approx(1e-3, rel=1e-15)
    for a in METRES:  # a round trip through every unit is the identity
        for b in METRES:
            assert factor(a, b) * factor(b, a) == pytest.approx(1.0, rel=1e-14)
    with pytest.raises(UnitError):
        factor("furlong", "mm")


def test_canonical_spellings():
    assert canonical("Millimetre") == canonical("millimeters") == canonical("MM") == "mm"
    assert canonical("INCH") == canonical("inches") == "in"
    assert canonical("parsec") is None and canonical(None) is None


def test_length_to_a_scene_unit():
    assert Length(0.004, "in").to("mm") == pytest.approx(0.1016, rel=1e-15)
    assert Length(0.1, None).to("in") == 0.1  # no unit: the model's already
    assert Length(0.1, None).to(None) == 0.1
    with pytest.raises(UnitError, match="state none"):
        Length(0.1, "mm").to(None)
    assert math.isclose(Length(2, "um").to("m"), 2e-6, rel_tol=1e-15)
