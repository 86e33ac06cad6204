# Type stub of the compiled module gjkcli/engine/_mesh.pyx (triangle hierarchies).
from typing import Any

def __getattr__(name: str) -> Any: ...
