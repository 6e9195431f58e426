"""No file runs code (issue #31): every payload class, on eval, eval --validate, reproduce, qa and serve.

A config file, a study file, a QA suite or a served request may name only the allow-list (random,
the game's bots and populations, installed agent plugins with the options a file may set) and
paths inside the current folder (:mod:`tom_envs.core.trust`). Each attack below must be refused
with a clear one-line error (exit 2, no traceback) and leave no trace: the marker file the payload would
create does not exist, a loopback listener the payload points at gets no request, no trajectory is
written. Positive controls show the payloads are live: given on the command line (trusted), the
same local module and the same checkpoint do run their code.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tom_envs.cli import main

EVIL_MODULE = """
from pathlib import Path
Path({marker!r}).write_text("imported")
from tom_envs.core.agents import RandomAgent
class Agent(RandomAgent):
    def __init__(self, **kw):
        Path({marker!r}).write_text("constructed")
        super().__init__()
"""


class _Pwn:
    def __init__(self, marker: Path) -> None:
        self.cmd = f"touch {marker}"

    def __reduce__(self):
        return (os.system, (self.cmd,))


def evil_zip(path: Path, marker: Path) -> Path:
    """An SB3-style model.zip whose ``data`` holds a pickle that runs ``touch marker`` when SB3's
    own loader reads it (the safe loader never unpickles it)."""
    blob = base64.b64encode(pickle.dumps(_Pwn(marker))).decode()
    data = {"policy_kwargs": {":type:": "<class 'dict'>", ":serialized:": blob}}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", json.dumps(data))
    return path


class Listener:
    """A loopback HTTP server recording every request (a host a payload points at)."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        self.hits = hits
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A working folder holding the adversary's files, on sys.path (the live worst case)."""
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = tmp_path / "pwned"
    (work / "evil.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    (work / "evilpkg").mkdir()
    (work / "evilpkg" / "__init__.py").write_text("")
    (work / "evilpkg" / "agents.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    evil_zip(work / "evil.zip", marker)
    evil_zip(outside / "model.zip", marker)
    (outside / "kitchen.txt").write_text("XXPXX\nO1 2O\nXDXSX\n")
    (outside / "curve.csv").write_text("global_step,return_mean\n1,2\n")
    (work / "link.zip").symlink_to(outside / "model.zip")
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    listener = Listener()
    yield {"work": work, "outside": outside, "marker": marker, "listener": listener}
    listener.close()
    for name in ("evil", "evilpkg", "evilpkg.agents"):
        sys.modules.pop(name, None)


def code_payloads(w: dict) -> dict[str, str]:
    """Specs that name code: module:callable, dotted import paths, shell arguments, ctypes."""
    m = w["marker"]
    return {
        "shell": f"subprocess:Popen:args=touch {m}:shell=true",
        "ctypes": f"ctypes._aix:Popen:args=touch {m}:shell=true",
        "callable": f"os:system:command=touch {m}",
        "builtin": f"builtins:exec:source=open('{m}','w')",
        "local module": "evil:Agent",
        "dotted import path": "evilpkg.agents:Agent",
        "the suite's own class": "tom_envs.core.agents:RandomAgent",
        "a plugin's class path": "tom_baselines.rmax:RMaxAgent",
    }


def option_payloads(w: dict) -> dict[str, str]:
    """Allowed plugins with options a file may not set, and paths leading out of the folder."""
    u, out = w["listener"].url, w["outside"]
    return {
        "unpickling checkpoint": "checkpoint:path=evil.zip:trusted=true",
        "checkpoint path traversal": "checkpoint:path=../outside/model.zip",
        "absolute checkpoint path": f"checkpoint:path={out / 'model.zip'}",
        "checkpoint through a link": "checkpoint:path=link.zip",
        "llm host": f"llm:model=x:base_url={u}/v1",
        "llm secret": "llm:model=x:api_key_env=HOME",
        "llm cache traversal": "llm:model=x:cache_dir=../outside/cache",
    }


REFUSALS = ("names Python code", "cannot set it", "outside the current folder", "expected key=value",
            "set only by the command line")


def assert_refused(code: int, err: str, w: dict) -> None:
    assert code == 2, err
    assert "Traceback" not in err and err.startswith("error: "), err
    assert len(err.strip().splitlines()) == 1, err  # one clear line
    assert any(r in err for r in REFUSALS), err
    assert not w["marker"].exists(), "the payload ran"
    assert not w["listener"].hits, w["listener"].hits
    assert not list(w["work"].rglob("*.jsonl")), "something was played"


def write_config(w: dict, agents: dict[str, str], **extra: object) -> Path:
    lines = ['name = "attack"', "episodes = 1", 'out = "run"', "[agents]"]
    lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in agents.items()]
    game = extra.pop("game", {"game": "RockPaperScissors", "kwargs": {"horizon": 2}})
    lines += ["[[games]]", f"game = {json.dumps(game['game'])}"]
    if game.get("kwargs"):
        kw = ", ".join(f"{k} = {json.dumps(v)}" for k, v in game["kwargs"].items())
        lines.append(f"kwargs = {{ {kw} }}")
    if game.get("others"):
        lines.append(f"others = {json.dumps(game['others'])}")
    for k, v in extra.items():
        lines.append(f"{k} = {json.dumps(v)}")
    seats = list(agents) + ["random"] * (2 - len(agents))
    lines += ["[[matchups]]", f"game = {json.dumps(game['game'])}", f"seats = {json.dumps(seats)}"]
    path = w["work"] / "attack.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("validate", [False, True], ids=["eval", "eval --validate"])
def test_eval_refuses_every_payload_in_a_config(world, capsys, validate: bool) -> None:
    w = world
    payloads = {**code_payloads(w), **option_payloads(w)}
    for name, spec in payloads.items():
        cfg = write_config(w, {"x": spec, "random": "random"})
        argv = ["eval", str(cfg), "--workers", "1"] + (["--validate"] if validate else [])
        code = main(argv)
        assert_refused(code, capsys.readouterr().err, w), name
    assert len(payloads) == 15


def test_eval_refuses_payloads_in_every_other_place_a_config_names_something(world, capsys) -> None:
    """``others`` seats, paper-table arguments, game arguments naming files, the output folder
    and learning-curve CSVs."""
    w = world
    attacks = [
        write_config(w, {"r": "random"}, game={"game": "Guandan", "others": "evil:Agent"}),
        write_config(w, {"r": "random"}, out="../escape"),
        write_config(w, {"r": "random"}, out=str(w["outside"] / "run")),
        write_config(w, {"r": "random"}, game={"game": "Overcooked",
                                               "kwargs": {"layout": "../outside/kitchen.txt"}}),
    ]
    table = w["work"] / "table.toml"
    for entry in ('table = "paper001"\nkwargs = { agents = ["evil:Agent", "heuristic"], games = 2 }',
                  'table = "hanabi"\nkwargs = { bots = ["evilpkg.agents:Agent"], episodes = 1 }'):
        table.write_text(f'name = "t"\nout = "run"\n[[tables]]\n{entry}\n')
        attacks.append(table.with_name(f"{len(attacks)}.toml"))
        attacks[-1].write_text(table.read_text())
    curve = w["work"] / "curve.toml"
    curve.write_text('name = "c"\n[[games]]\ngame = "RockPaperScissors"\n'
                     '[[learning_curves]]\ncsv = "../outside/curve.csv"\n')
    attacks.append(curve)
    for path in attacks:
        for validate in ([], ["--validate"]):
            code = main(["eval", str(path), "--workers", "1", *validate])
            assert_refused(code, capsys.readouterr().err, w)
    assert not (w["work"].parent / "escape").exists() and not (w["outside"] / "run").exists()


def test_reproduce_reads_only_the_shipped_config(world, monkeypatch, capsys) -> None:
    """A file named like a shipped config in the current folder is never what reproduce runs."""
    import tom_envs.cli as cli
    from tom_envs.evaluation import shipped_configs

    w = world
    for name in ("paper004", "paper004.toml"):
        (w["work"] / name).write_text(write_config(w, {"x": "evil:Agent"}).read_text())
    ran: list[str | None] = []
    monkeypatch.setattr(cli, "_evaluate", lambda cfg, args: (ran.append(cfg.source), (None, 0))[1])
    assert main(["reproduce", "paper004", "--run-dir", "run"]) == 0
    assert ran == [str(shipped_configs()["paper004"])]
    assert not w["marker"].exists()
    # and eval of that local file is refused like any config
    assert_refused(main(["eval", "paper004", "--validate"]), capsys.readouterr().err, w)


def test_every_shipped_config_passes_the_file_rules() -> None:
    """The shipped configs (what reproduce runs) are files too: built under the same rules."""
    from tom_envs.evaluation import load_config, shipped_configs, validate

    for name in shipped_configs():
        cfg = load_config(name)
        assert not cfg.trusted_labels
        validate(cfg, check_endpoints=False)


def _suite(w: dict, seats: list[str], env_kwargs: dict) -> Path:
    from tom_envs.qa.items import read_suite

    src = Path(__file__).resolve().parents[1] / "tom_envs" / "qa" / "suites" / "Overcooked.jsonl"
    head, *items = src.read_text().splitlines()[:3]
    out = []
    for line in items:
        d = json.loads(line)
        d["scenario"]["seats"] = seats
        d["scenario"]["env_kwargs"] = env_kwargs
        out.append(json.dumps(d))
    path = w["work"] / "suite.jsonl"
    path.write_text("\n".join([head, *out]) + "\n")
    read_suite(path)  # a well-formed suite: only the payloads differ
    return path


def test_qa_suites_name_no_code_and_no_outside_file(world, capsys) -> None:
    w = world
    payload_seats = [code_payloads(w)["shell"], "evil:Agent"]
    for env_kwargs in ({"layout": "cramped_room"}, {"layout": "../outside/kitchen.txt"},
                       {"layout": str(w["outside"] / "kitchen.txt")}):  # fmt: skip
        suite = _suite(w, payload_seats, env_kwargs)
        for argv in (["qa", "verify", str(suite)],
                     ["qa", "eval", str(suite), "--answerer", "random", "--trials", "1"]):  # fmt: skip
            code = main(argv)
            err = capsys.readouterr().err
            assert "Traceback" not in err
            if env_kwargs["layout"] != "cramped_room" and argv[1] == "verify":
                assert code == 2 and "outside the current folder" in err, err
            assert not w["marker"].exists() and not w["listener"].hits


def test_serve_refuses_every_payload_from_a_study_file_and_a_request(world, capsys) -> None:
    from tom_envs.serve.app import App, BadRequest
    from tom_envs.serve.study.check import check_study
    from tom_envs.serve.study.spec import StudyError, parse_study

    w = world
    payloads = {**code_payloads(w), **option_payloads(w)}
    study = w["work"] / "study.toml"
    app = App(w["work"] / "human")
    for name, spec in payloads.items():
        text = ('[study]\nname = "t"\n[[games]]\nname = "g"\ngame = "RockPaperScissors"\n'
                f'[[conditions]]\nname = "c"\npartner = {json.dumps(spec)}\n')  # fmt: skip
        study.write_text(text)
        # an unbindable host: should a check ever let the study through, serve fails, never hangs
        code = main(["study", "serve", str(study), "--data", "human", "--host", "256.0.0.1"])
        assert_refused(code, capsys.readouterr().err, w), name
        assert_refused(main(["study", "validate", str(study)]), capsys.readouterr().err, w)
        with pytest.raises(StudyError):
            check_study(parse_study(text), {})
        body = {"game": "RockPaperScissors", "seat": 0, "partners": [spec], "seed": 0}
        with pytest.raises(BadRequest, match="not offered"):
            app.request_to_session_args(body)
        with pytest.raises(BadRequest):
            app.create(body)
        assert not w["marker"].exists() and not w["listener"].hits, name
    assert not app.sessions and not list(w["work"].rglob("*.jsonl"))


def test_the_payloads_are_live_from_the_command_line(world, tmp_path: Path) -> None:
    """Positive control: the person running the command may name code, and then it runs (so
    the refusals above are refusals of live payloads, not of broken ones)."""
    w = world
    env = {**os.environ, "PYTHONPATH": ""}
    tom = [sys.executable, "-m", "tom_envs.cli"]
    run = subprocess.run([*tom, "run", "RockPaperScissors", "--agents", "evil:Agent", "random",
                          "--episodes", "1", "--out", "cli"], cwd=w["work"], env=env,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert w["marker"].read_text() == "constructed"
    w["marker"].unlink()
    run = subprocess.run([*tom, "run", "RockPaperScissors", "--agents",
                          "checkpoint:path=evil.zip:trusted=true", "random", "--episodes", "1"],
                         cwd=w["work"], env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert w["marker"].exists(), run.stderr  # SB3's own loader unpickled the file


def test_a_switching_partner_passes_no_payload_through(world, capsys) -> None:
    """``switch:a=A:b=B`` builds A and B with the file's (untrusted) permission: a payload inside
    a switch is refused like one outside it."""
    w = world
    for name, spec in code_payloads(w).items():
        for member in (f"a={spec}:b=random", f"a=random:b={spec}"):
            cfg = write_config(w, {"x": f"switch:{member}:at=1-2:key=1", "random": "random"})
            code = main(["eval", str(cfg), "--workers", "1"])
            err = capsys.readouterr().err
            if "switch: unknown options" in err:  # the payload's own options reach the switch
                assert code == 2 and not w["marker"].exists() and not w["listener"].hits, err
                assert not list(w["work"].rglob("*.jsonl")), (name, member)
                continue
            assert_refused(code, err, w), (name, member)


def test_a_file_cannot_mark_a_table_agent_trusted(world, capsys) -> None:
    """A table's added agents are trusted only when their spec came from the command line: a file
    that sets ``trusted_agents`` itself (to pass an endpoint or a class path) is refused, and a
    file's own ``[agents]`` label joined through ``optional_agents`` stays under the file rules."""
    w = world
    u = w["listener"].url
    forged = (f'name = "t"\nout = "run"\n[[tables]]\ntable = "functional_tom"\n'
              f'kwargs = {{ games = ["PrisonersDilemma"], agents = {{ x = "llm:model=m:base_url={u}/v1" }}, '
              f'trusted_agents = ["x"] }}\n')  # fmt: skip
    joined = (f'name = "t"\nout = "run"\n[agents]\nllm = "llm:model=m:base_url={u}/v1"\n'
              f'[[tables]]\ntable = "functional_tom"\nkwargs = {{ games = ["PrisonersDilemma"] }}\n'
              f'optional_agents = ["llm"]\n')  # fmt: skip
    for text in (forged, joined):
        path = w["work"] / "forged.toml"
        path.write_text(text)
        for validate in ([], ["--validate"]):
            code = main(["eval", str(path), "--workers", "1", *validate])
            assert_refused(code, capsys.readouterr().err, w)
