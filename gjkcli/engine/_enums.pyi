# Type stub of the compiled module gjkcli/engine/_enums.pyx: the core's C enums (gjk.h, mesh.h, plane.h)
# as IntEnum classes, read by name.
from typing import Any

def __getattr__(name: str) -> Any: ...
