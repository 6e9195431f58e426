"""What a file or a request may name: the rules that keep shared files from running code.

Config files, study files, QA suites, checkpoints and browser requests are *untrusted*: they travel
between labs like papers' code, and opening one must never run code, read a file outside the
working folder, or send anything to a host the file chose. The person running a command is
*trusted*: what they type on the command line, or pass from their own Python code with
``trusted=True``, may name anything. The permission is always an explicit argument
(``make_agent(..., trusted=True)``, the eval jobs' per-seat ``trusted`` flags), set only where a
spec comes from the command line; it is never inferred from the text of a spec.

An untrusted agent spec may name only:

* ``random`` (every game), the game's bots and ``population:NAME`` (the game's bot table);
* an installed ``tom_envs.agents`` plugin (``rmax``, ``llm``, ``checkpoint`` and any package's
  entry point), with plain options, except the options the plugin lists in its class attribute
  ``trusted_options`` (``{option: why}``; ``checkpoint``'s ``trusted``, ``llm``'s ``base_url``,
  ``api_key_env``) and with every option it lists in ``path_options`` checked by
  :func:`inside_folder`.

Anything else (``module:Class``, ``subprocess:Popen:args=...``, a dotted import path) is refused
with :class:`NotAllowed` before anything is imported. A path named by an untrusted source must hold
no ``..`` and resolve (symlinks followed) inside the current working folder; a file to read must be
a regular file.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["HOW_TO_NAME_CODE", "NotAllowed", "inside_folder"]

#: How a person names their own agent class, said in every refusal.
HOW_TO_NAME_CODE = (
    "name your own class on the command line (tom-envs run --agents module:Class, tom-envs eval "
    "CONFIG --agent LABEL=module:Class) or register it as a tom_envs.agents entry point "
    "(docs/quickstart.md, 'Your own agent')"
)


class NotAllowed(ValueError):
    """Something a file or request named that only the person running the command may name."""


def inside_folder(value: object, what: str, *, kind: str = "file", base: Path | None = None) -> Path:
    """``value`` as a path inside ``base`` (default: the current folder), or :class:`NotAllowed`.

    ``kind`` is ``"file"`` (an existing regular file to read), ``"dir"`` (a folder to read, which
    may not exist yet) or ``"out"`` (somewhere to write). The path must hold no ``..`` and resolve
    inside ``base`` with symlinks followed (an absolute path inside it is accepted).
    """
    if not isinstance(value, str) or not value or "\x00" in value or len(value) > 1000:
        raise NotAllowed(f"{what}: expected a path, got {str(value)[:80]!r}")
    path = Path(value)
    root = (base or Path.cwd()).resolve()
    real = (root / path).resolve()
    if ".." in path.parts or value.startswith("~") or (real != root and root not in real.parents):
        raise NotAllowed(
            f"{what}: {value[:200]!r} is outside the current folder ({root}); a path read from a "
            "file or a request must stay inside it (no '..', no link or absolute path leading "
            "out). Give it on the command line to use another place"
        )
    if kind == "file":
        if not real.exists():
            raise NotAllowed(f"{what}: {value[:200]!r} does not exist")
        if not real.is_file():
            raise NotAllowed(f"{what}: {value[:200]!r} is not a regular file")
    elif kind not in ("dir", "out"):
        raise ValueError(f"kind must be 'file', 'dir' or 'out', got {kind!r}")
    return path
