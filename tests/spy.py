"""A function or method replaced for one test by itself plus a record of each call."""
from __future__ import annotations


def calls(monkeypatch, owner, name: str, measure) -> list:
    """The list of `measure(*args, **kwargs)` of each call of `owner.name` (a module's function or
    a class's method) while the test runs; the calls themselves go on as before."""
    real = getattr(owner, name)
    seen: list = []

    def spied(*args, **kwargs):
        seen.append(measure(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spied)
    return seen
