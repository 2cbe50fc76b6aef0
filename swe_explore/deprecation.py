"""Old spellings of renamed names: they still work, with a :class:`DeprecationWarning` naming the new one."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any


def renamed_attribute(module: str, name: str, renames: Mapping[str, str], namespace: Mapping[str, Any]) -> Any:
    """A module ``__getattr__`` body (PEP 562): the new name's value for an old name, with a warning.

    :param module: the module's ``__name__``.
    :param name: the attribute asked for.
    :param renames: old name -> new name.
    :param namespace: the module's ``globals()``.
    :return: the value of the new name.
    :raises AttributeError: for a name that was never renamed.
    """
    if name in renames:
        warnings.warn(f"{module}.{name} is deprecated; use {renames[name]}", DeprecationWarning, stacklevel=3)
        return namespace[renames[name]]
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
