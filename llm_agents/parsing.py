"""From a model's reply to named fields and an action text: JSON (constrained) or plain text.

With constrained decoding the reply is a JSON object whose ``"action"`` is one of the legal actions
(a JSON-schema ``enum``), preceded by any reasoning fields the strategy asks for. Without it, the
reply is read line by line (``Reasoning: …``, ``Message: …``, ``Action: …``). Either way the action
text then goes through the game's own parser (``Turn.parse``), so the game's feedback on an invalid
answer is what the agent is re-prompted with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Longest reasoning-like field allowed under constrained decoding (characters).
DEFAULT_FIELD_CHARS = 400
#: Longest chat message allowed under constrained decoding (characters).
DEFAULT_MESSAGE_CHARS = 200


def answer_schema(
    fields: Mapping[str, str],
    options: Sequence[str],
    key: str = "action",
    message: bool = False,
    field_chars: int = DEFAULT_FIELD_CHARS,
) -> dict[str, Any]:
    """A JSON schema: the free-text ``fields`` in order, an optional ``message``, then ``key``
    restricted to ``options`` (an ``enum``)."""
    props: dict[str, Any] = {name: {"type": "string", "maxLength": field_chars} for name in fields}
    if message:
        props["message"] = {"type": "string", "maxLength": DEFAULT_MESSAGE_CHARS}
    props[key] = {"type": "string", "enum": list(dict.fromkeys(options))}
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text`` (the whole text, or its first ``{…}`` span), else ``None``."""
    text = text.strip()
    for candidate in (text, _braced(text)):
        if not candidate:
            continue
        try:
            obj = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _braced(text: str) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


@dataclass
class Reply:
    """A reply read into parts.

    Attributes:
        fields: the strategy's free-text fields (reasoning, plan, ...), empty when missing.
        action_text: what the model named as its action (``None`` when nothing was found).
        message: chat text for teammates, if any.
        structured: the reply was a JSON object.
    """

    fields: dict[str, str] = field(default_factory=dict)
    action_text: str | None = None
    message: str | None = None
    structured: bool = False


def read_reply(text: str, names: Sequence[str], key: str = "action", labels: Any = None) -> Reply:
    """Split a reply into fields, message and action text (JSON first, then labelled lines).

    ``labels`` is a templates module (:mod:`tom_llm_agents.prompting.templates` or its Chinese
    version): its ``LABELS``, ``ACTION_LABEL`` and ``MESSAGE_LABEL`` are accepted beside the
    English labels. The *last* action line wins (a model that restates its answer means the last).
    """
    if not isinstance(text, str):
        text = str(text)
    obj = json_object(text)
    if obj is not None:
        value = obj.get(key)
        msg = obj.get("message")
        return Reply(
            fields={n: str(obj.get(n, "") or "") for n in names},
            action_text=None if value is None else str(value),
            message=str(msg).strip() or None if msg is not None else None,
            structured=True,
        )
    out = Reply(fields=dict.fromkeys(names, ""))
    field_labels = {_label(n).lower(): n for n in names}
    extra_labels = getattr(labels, "LABELS", {}) or {}
    for n in names:
        if n in extra_labels:
            field_labels[extra_labels[n].lower()] = n
    message_labels = {"message", str(getattr(labels, "MESSAGE_LABEL", "message")).lower()}
    action_labels = {key, "final action", "answer", "action selection"}
    if key == "action":
        action_labels.add(str(getattr(labels, "ACTION_LABEL", "action")).lower())
    current: str | None = None
    for line in text.splitlines()[:2000]:
        m = re.match(r"\s*[#*]*\s*([^\W\d_][\w _-]{0,40}?)\s*[*]*\s*[:：]\s*(.*)$", line)
        label = m.group(1).strip().lower().replace("-", " ") if m else None
        if m and label in field_labels:
            current = field_labels[label]
            out.fields[current] = m.group(2).strip()
        elif m and label in message_labels:
            current = None
            out.message = m.group(2).strip().strip('"“”') or None
        elif m and label in action_labels:
            current = None
            out.action_text = m.group(2).strip()
        elif current is not None and line.strip():
            out.fields[current] = (out.fields[current] + " " + line.strip()).strip()
    return out


def format_lines(names: Sequence[str], message: bool) -> str:
    """The ``Label: <…>`` lines of the plain-text answer format (fields, then message)."""
    lines = "".join(f"{_label(n)}: <{n.replace('_', ' ')}>\n" for n in names)
    if message:
        lines += 'Message: "<a short message to the other players, or nothing>"\n'
    return lines


def json_keys(keys: Sequence[str]) -> str:
    """``the key "action"`` / ``the keys "reasoning" and "action"`` for a format line."""
    quoted = [f'"{k}"' for k in keys]
    if len(quoted) == 1:
        return f"the key {quoted[0]}"
    return "the keys " + ", ".join(quoted[:-1]) + f" and {quoted[-1]}"
