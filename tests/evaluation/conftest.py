"""Every evaluation test runs in its own folder: a config file may only name paths (``out``,
learning-curve CSVs, layout files) inside the current folder (tom_envs.core.trust)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _in_tmp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
