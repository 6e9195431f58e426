"""Declared game arguments: types, defaults, bounds and allowed values, checked strictly.

Every game declares its keyword arguments in its ``env.py`` as ``PARAMS = (Param(...), ...)`` and
its ``make_bundle`` calls :func:`validate_kwargs` on what it is given, so a bad argument fails at
construction with an error that names the argument and what is allowed, whoever passed it
(Python, ``--kw`` on the command line, a study file, or a browser through ``tom-envs serve``).

Parsing is strict:

* ``int``: an int (never a bool, never ``1.5``) or a string of decimal digits (``"12"``; not
  ``"1e9"``, not ``"1.0"``);
* ``float``: an int or float or a numeric string, finite (no ``nan``/``inf``);
* ``bool``: a bool or the strings ``"true"``/``"false"`` (any case); never ``1``, ``"yes"`` or
  ``"0"``: a truthy value is not a boolean;
* ``str`` and ``choice``: a string (a choice one of :attr:`Param.choices`);
* ``int_list``/``bool_list``/``str_list``: a list or tuple, or a comma-separated string (as the
  command line gives them), with a bounded length; each item parsed as above;
* ``str_lists``: a list of lists of strings, or ``"a+b,c+d"``;
* ``object``: a Python object (for instance an injected task), never accepted over HTTP.

``low``/``high`` bound numbers (the items of a list), ``min_len``/``max_len`` bound lists and
strings; every game sets upper bounds that keep memory and time bounded (horizons, grid sizes,
player counts). Values that came over HTTP (``source="http"``) are also checked against
:attr:`Param.http_choices` where a parameter has them: Overcooked layouts are accepted by name
only over HTTP, while Python and the command line may give a layout file path. Values read from a
file (``source="file"``: an eval config, a study file) may give such a path only inside the current
folder (relative, no ``..``: :func:`tom_envs.core.trust.inside_folder`).

:func:`params_table` renders the declarations as a Markdown table for the game's docs page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Source = Literal["python", "file", "http"]
SOURCES = ("python", "file", "http")

TYPES = ("int", "float", "bool", "str", "choice", "int_list", "bool_list", "str_list",
         "str_lists", "object")  # fmt: skip

_INT = re.compile(r"[+-]?[0-9]{1,19}")
_MAX_STR = 200  # the default length bound of a string argument


@dataclass(frozen=True)
class Param:
    """One keyword argument of a game.

    Attributes:
        name: the keyword.
        type: one of :data:`TYPES`.
        default: the value used when the argument is not given (documentation only; the game's
            config dataclass holds the actual default).
        doc: one line on what it does.
        low: inclusive lower bound (numbers, or each item of a number list).
        high: inclusive upper bound (numbers, or each item of a number list).
        choices: the allowed values (``choice``, or each item of a ``str_list``).
        optional: ``None`` is allowed.
        min_len: the fewest items (lists) or characters (strings).
        max_len: the most items (lists) or characters (strings; each item of a string list).
        item_len: the most characters of each string item of a list.
        http_choices: over HTTP the value must be one of these (e.g. layout names only); from a
            file any other value is a path, which must stay inside the current folder.
        error: an opening phrase for this argument's errors (e.g. ``"unknown matrix game"``).
        instance_of: an ``object`` argument must be an instance of one of these classes.
        allowed_text: what is allowed, in words, where the type's own description says too
            little (a ``str`` of a fixed form, such as ``skin``'s ``canonical`` or ``s<k>``).
    """

    name: str
    type: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] = ()
    optional: bool = False
    min_len: int | None = None
    max_len: int | None = None
    item_len: int = 40
    http_choices: tuple[Any, ...] | None = None
    error: str = ""
    instance_of: tuple[type, ...] = ()
    allowed_text: str = ""

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"Param {self.name!r}: type must be one of {TYPES}, got {self.type!r}")
        if self.type == "choice" and not self.choices:
            raise ValueError(f"Param {self.name!r}: a choice needs choices")

    # ------------------------------------------------------------------ description
    def allowed(self) -> str:
        """What values are allowed, in words (used in errors and the docs table)."""
        if self.allowed_text:
            return self.allowed_text
        t = self.type
        parts: list[str] = []
        if t == "choice" or (t == "str_list" and self.choices):
            parts.append("one of " + ", ".join(repr(c) for c in self.choices))
        elif t == "bool":
            parts.append("true or false")
        elif t == "object":
            kinds = " or ".join(f"{c.__module__}.{c.__qualname__}" for c in self.instance_of)
            parts.append(f"{'a ' + kinds if kinds else 'a Python object'} (Python only)")
        elif t in ("int", "float", "int_list"):
            lo = "-inf" if self.low is None else _num(self.low)
            hi = "inf" if self.high is None else _num(self.high)
            parts.append(f"{'integer' if t != 'float' else 'number'} in [{lo}, {hi}]")
        elif t == "str":
            parts.append(f"text of at most {self.max_len or _MAX_STR} characters")
        if t.endswith("_list") or t == "str_lists":
            lo, hi = self.min_len or 0, self.max_len
            n = f"{lo}" if lo == hi else f"{lo} to {hi}"
            kind = {"int_list": "integers", "bool_list": "booleans"}.get(t, "names")
            if t == "str_lists":
                kind = "lists of names joined by '+'"
            parts.insert(0, f"{n} {kind}" + (": each" if parts else ""))
        if self.optional:
            parts.append("or none")
        if self.http_choices is not None:
            parts.append("over HTTP only " + ", ".join(repr(c) for c in self.http_choices))
        return "; ".join(parts) if parts else t

    # ------------------------------------------------------------------ parsing
    def parse(self, value: Any, source: Source = "python") -> Any:
        """The parsed value, or ``ValueError`` naming this argument and what is allowed."""
        if value is None or (isinstance(value, str) and value.lower() == "none" and self.optional):
            if self.optional:
                return None
            self._fail(value, "none is not allowed")
        t = self.type
        if t == "object":
            if source != "python":
                self._fail(value, "it can only be given from Python")
            if self.instance_of and not isinstance(value, self.instance_of):
                self._fail(value)
            return value
        if t == "int":
            out: Any = self._number(_int(value, self), whole=True)
        elif t == "float":
            out = self._number(_float(value, self), whole=False)
        elif t == "bool":
            out = _bool(value, self)
        elif t in ("str", "choice"):
            out = self._text(value)
            if t == "choice" and out not in self.choices:
                self._fail(value)
        elif t == "str_lists":
            out = self._lists(value)
        else:
            out = self._list(value)
        if self.http_choices is not None and out not in self.http_choices:
            if source == "http":
                self._fail(value, "over HTTP only " + ", ".join(repr(c) for c in self.http_choices))
            if source == "file":  # any other value names a file: kept inside the current folder
                from tom_envs.core.trust import inside_folder

                inside_folder(out, f"argument {self.name!r} (a file path)", kind="file")
        return out

    def _fail(self, value: Any, why: str | None = None) -> None:
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        lead = f"{self.error}: " if self.error else ""
        raise ValueError(
            f"{lead}argument {self.name!r}: got {shown}; allowed: {why or self.allowed()}"
        )

    def _number(self, x: float, whole: bool) -> Any:
        if (self.low is not None and x < self.low) or (self.high is not None and x > self.high):
            self._fail(x)
        return int(x) if whole else float(x)

    def _text(self, value: Any, limit: int | None = None, least: int | None = None) -> str:
        """Text of ``least`` to ``limit`` characters (default: this parameter's own bounds; a
        list's items pass their own, since ``min_len``/``max_len`` then count items)."""
        if not isinstance(value, str):
            self._fail(value, "text" if self.type == "str" else None)
        limit = limit or self.max_len or _MAX_STR
        least = self.min_len if least is None else least
        if len(value) > limit or (least is not None and len(value) < least):
            self._fail(value, f"text of {least or 0} to {limit} characters")
        if any(not ch.isprintable() for ch in value):
            self._fail(value, "printable text (no control characters)")
        return value

    def _items(self, value: Any, sep: str = ",") -> list[Any]:
        if isinstance(value, str):
            items: list[Any] = [v.strip() for v in value.split(sep)] if value.strip() else []
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            self._fail(value)
        if self.max_len is not None and len(items) > self.max_len:
            self._fail(value)
        if self.min_len is not None and len(items) < self.min_len:
            self._fail(value)
        return items

    def _list(self, value: Any) -> tuple[Any, ...]:
        items = self._items(value)
        out: list[Any] = []
        for item in items:
            if self.type == "int_list":
                out.append(self._number(_int(item, self), whole=True))
            elif self.type == "bool_list":
                out.append(_bool(item, self))
            else:
                text = self._text(item, self.item_len, least=1)
                if self.choices and text not in self.choices:
                    self._fail(item)
                out.append(text)
        return tuple(out)

    def _lists(self, value: Any) -> tuple[tuple[str, ...], ...]:
        groups = self._items(value)
        out = []
        for group in groups:
            parts = group.split("+") if isinstance(group, str) else group
            if not isinstance(parts, (list, tuple)) or not parts or len(parts) > 16:
                self._fail(value)
            out.append(tuple(self._text(p.strip() if isinstance(p, str) else p, self.item_len, least=1)
                             for p in parts))  # fmt: skip
        return tuple(out)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _int(value: Any, p: Param) -> int:
    if isinstance(value, bool):
        p._fail(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        return int(value.strip())
    p._fail(value)
    raise AssertionError  # unreachable


def _float(value: Any, p: Param) -> float:
    if isinstance(value, bool):
        p._fail(value)
    x: float
    if isinstance(value, (int, float)):
        x = float(value)
    elif isinstance(value, str) and len(value) <= 40:
        try:
            x = float(value)
        except ValueError:
            p._fail(value)
            raise
    else:
        p._fail(value)
        raise AssertionError  # unreachable
    if not math.isfinite(x):
        p._fail(value)
    return x


def _bool(value: Any, p: Param) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    p._fail(value)
    raise AssertionError  # unreachable


def validate_kwargs(
    params: Iterable[Param], kwargs: Mapping[str, Any], *, source: Source = "python"
) -> dict[str, Any]:
    """``kwargs`` parsed against the declarations; ``ValueError`` names the first bad argument.

    Unknown keys are rejected with the list of allowed names. Returns a new dict holding only the
    given keys, parsed (``"true"`` -> ``True``, ``"a,b"`` -> ``("a", "b")``, ...).
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    by_name = {p.name: p for p in params}
    if not isinstance(kwargs, Mapping):
        raise ValueError("game arguments must be a mapping of names to values")
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        p = by_name.get(key) if isinstance(key, str) else None
        if p is None or (source != "python" and p.type == "object"):
            allowed = sorted(
                n for n, q in by_name.items() if source == "python" or q.type != "object"
            )
            shown = repr(key)[:60]
            raise ValueError(f"unknown game argument {shown}; allowed: {', '.join(allowed)}")
        out[key] = p.parse(value, source)
    return out


def _default(value: Any) -> str:
    if isinstance(value, tuple):
        return ", ".join(_default(v) if not isinstance(v, str) else v for v in value) or "()"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def params_table(params: Sequence[Param]) -> str:
    """The declarations as a Markdown table (argument, type, default, allowed, description)."""
    rows = ["| argument | type | default | allowed | description |", "|---|---|---|---|---|"]
    for p in params:
        cells = (f"`{p.name}`", p.type, f"`{_default(p.default)}`", p.allowed(), p.doc)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


__all__ = ["SOURCES", "TYPES", "Param", "Source", "params_table", "validate_kwargs"]
