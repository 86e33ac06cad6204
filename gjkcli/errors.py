"""The exception family. The CLI maps every `GjkError` to one line on stderr and exit code 2."""


class GjkError(Exception):
    """Base of every error gjk reports to a user."""


class InputError(GjkError):
    """A file or value the user gave cannot be used: names the file and what is wrong with it."""

    def __init__(self, source, message):
        self.source = str(source)
        self.message = message
        super().__init__(f"{self.source}: {message}")


class ShapeError(GjkError):
    """Geometry that cannot form a shape (no points, NaN or infinite coordinates)."""
