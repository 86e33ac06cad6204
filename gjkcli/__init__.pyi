# What `gjkcli/__init__.py` serves lazily, for type checkers (a stub, so that the import-linter
# graph sees no import from the package root up into the API).
from gjkcli.api.manager import CollisionManager as CollisionManager
from gjkcli.api.manager import ContactData as ContactData
from gjkcli.api.manager import DistanceData as DistanceData
from gjkcli.api.manager import scene_to_collision as scene_to_collision

__version__: str
__all__: list[str]
