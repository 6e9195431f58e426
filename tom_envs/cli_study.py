"""``tom-envs serve`` (the researcher console) and ``tom-envs study ...`` (human studies) on the
command line::

    tom-envs study validate FILE [--partner NAME=SPEC ...]   check it in full; print the plan
    tom-envs study links FILE -n 20 [--base URL]               personal links for participants
    tom-envs study serve FILE [--partner ...] [--token T]      run it (participants' pages)
    tom-envs study status FILE                                 who is where, episodes, codes
    tom-envs study export FILE --out DIR [--omit-free-text]    the dataset and its card
    tom-envs study verify DIR                                  replay a dataset on this engine

Every command but ``verify`` finds the study's folder from the file (``runs/study/NAME-vVERSION``)
unless ``--data`` names it. Nothing here imports the serve extra's packages until a command needs
them, so a missing extra is one clear line.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Any

from tom_envs.cli_args import port_int, positive_int

__all__ = ["add_parsers", "cmd_serve", "cmd_study"]

EXTRA = 'needs the serve extra ({exc}); from the checkout: pip install -e ".[serve]"'


def _server_args(p: argparse.ArgumentParser, share: Any) -> None:
    p.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    p.add_argument("--port", type=port_int, default=8000)
    p.add_argument("--partner", action="append", default=[], metavar="NAME=SPEC",
                   help="offer an LLM, checkpoint or other partner under NAME (repeatable; e.g. "
                   "gpt=llm:model=M:base_url=URL); requests and files name partners only")
    p.add_argument("--token", help="access token every request must carry (give people the "
                   "printed link); use it with --host")
    p.add_argument("--max-sessions", type=positive_int, default=100,
                   help="most games played at once")
    p.add_argument("--max-fallback-share", type=share, default=0.2,
                   help="a game where a partner fell back on more than this share of its "
                   "decisions is marked failed")
    p.add_argument("--header-timeout", type=float, default=10.0,
                   help="seconds a connection has to send a request's headers")
    p.add_argument("--per-client", type=positive_int, default=64,
                   help="connections one client address may hold (behind a reverse proxy every "
                   "connection comes from the proxy: raise it and let the proxy limit clients)")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDRESS",
                   help="a reverse proxy whose X-Forwarded-For names the client (repeatable)")


def add_parsers(sub: Any, share: Any) -> None:
    """Add ``serve`` and ``study`` to the ``tom-envs`` parser (``share``: the type of a share
    in [0, 1])."""
    sv = sub.add_parser("serve", help="play any seat of any game in the browser (researcher console)")
    _server_args(sv, share)
    sv.add_argument("--out", default="runs/human", help="where session trajectories are written")
    sv.add_argument("--study", help="serve this study file instead (same as tom-envs study serve)")
    sv.add_argument("--idle-timeout", type=float, default=600.0,
                    help="seconds before an untouched session is recorded as abandoned")
    sv.add_argument("--per-client-sessions", type=positive_int, default=8,
                    help="console games one client address may play at once")
    sv.add_argument("--max-memory-mb", type=float, default=2048.0,
                    help="start no game while the server holds more memory than this (MB)")
    sv.set_defaults(fn=cmd_serve)
    st = sub.add_parser("study", help="human studies: validate, links, serve, status, export, verify")
    ss = st.add_subparsers(dest="study_cmd", required=True)
    v = ss.add_parser("validate", help="check a study file in full and print what participants do")
    v.add_argument("file")
    v.add_argument("--partner", action="append", default=[], metavar="NAME=SPEC")
    ln = ss.add_parser("links", help="personal links (a CSV of participant id and link)")
    ln.add_argument("file")
    ln.add_argument("-n", type=positive_int, required=True, help="how many links")
    ln.add_argument("--base", default="http://127.0.0.1:8000", help="the server's address")
    ln.add_argument("--out", help="write the CSV here (default: print it)")
    run = ss.add_parser("serve", help="run a study (the participants' pages)")
    run.add_argument("file")
    _server_args(run, share)
    run.add_argument("--open", action="store_true",
                     help="enrol anyone sent to /join?ext=THEIR_ID (a recruitment platform)")
    run.add_argument("--console", action="store_true", help="also offer the researcher console")
    run.add_argument("--max-participants", type=positive_int, default=None)
    status = ss.add_parser("status", help="participants, episodes and codes so far")
    status.add_argument("file")
    ex = ss.add_parser("export", help="write the study's dataset (trajectories, surveys, card)")
    ex.add_argument("file")
    ex.add_argument("--out", required=True, help="the dataset's folder")
    ex.add_argument("--omit-free-text", action="store_true",
                    help="replace free-text answers and chat messages with [omitted]")
    ver = ss.add_parser("verify", help="replay every trajectory of a dataset on this engine")
    ver.add_argument("dataset")
    for p in (ln, run, status, ex):
        p.add_argument("--data", help="the study's folder (default runs/study/NAME-vVERSION)")
    st.set_defaults(fn=cmd_study)


def _folder(args: argparse.Namespace, study: Any) -> Path:
    return Path(args.data) if getattr(args, "data", None) else Path("runs/study") / f"{study.name}-v{study.version}"


def cmd_study(args: argparse.Namespace) -> int:
    """``tom-envs study ...``: the subcommands of the module docstring."""
    try:
        from tom_envs.serve.study.spec import StudyError, load_study
    except ImportError as exc:
        print(f"error: tom-envs study {EXTRA.format(exc=exc)}", file=sys.stderr)
        return 2
    try:
        if args.study_cmd == "verify":
            return _verify(args)
        study = load_study(args.file)
        return {"validate": _validate, "links": _links, "serve": _serve_study,
                "status": _status, "export": _export}[args.study_cmd](args, study)
    except (StudyError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _presets(args: argparse.Namespace) -> dict[str, str]:
    from tom_envs.serve.app import parse_presets

    return parse_presets(args.partner)


def _validate(args: argparse.Namespace, study: Any) -> int:
    from tom_envs.serve.study.check import check_study
    from tom_envs.serve.study.design import describe

    seatings = check_study(study, _presets(args))
    print(describe(study, seatings))
    print(f"\nOK: {args.file} is a complete study; run it with tom-envs study serve {args.file}")
    return 0


def _server(args: argparse.Namespace, study: Any, presets: dict[str, str] | None = None) -> Any:
    from tom_envs.driver import FailurePolicy
    from tom_envs.serve.study.server import StudyServer

    return StudyServer(study, _folder(args, study), presets or {},
                       max_sessions=getattr(args, "max_sessions", 100),
                       max_participants=getattr(args, "max_participants", None),
                       policy=FailurePolicy(max_fallback_share=getattr(args, "max_fallback_share", 0.2)))


def _links(args: argparse.Namespace, study: Any) -> int:
    import secrets

    from tom_envs.serve.study.server import participant_key, study_secret

    folder = _folder(args, study)
    folder.mkdir(parents=True, exist_ok=True)
    secret = study_secret(folder / "secret.key")
    base = args.base.rstrip("/")
    pids = [secrets.token_hex(6) for _ in range(args.n)]
    rows = [(pid, f"{base}/p/{pid}#k={participant_key(secret, pid)}") for pid in pids]
    if not args.out:
        csv.writer(sys.stdout).writerows([("participant", "link"), *rows])
        return 0
    with open(args.out, "w", newline="") as out:
        Path(args.out).chmod(0o600)
        csv.writer(out).writerows([("participant", "link"), *rows])
    print(f"{args.n} links in {args.out} (keep it private: each link is a participant's key)",
          file=sys.stderr)
    return 0


def _check_endpoints(presets: dict[str, str]) -> None:
    from tom_envs.cli_args import check_agent_endpoints

    check_agent_endpoints(list(presets.values()))


def _serve_study(args: argparse.Namespace, study: Any) -> int:
    try:
        from tom_envs.serve.app import App
        from tom_envs.serve.guard import GuardConfig, default_allowed_hosts
        from tom_envs.serve.routes import asgi_app
    except ImportError as exc:
        print(f"error: tom-envs study serve {EXTRA.format(exc=exc)}", file=sys.stderr)
        return 2
    presets = _presets(args)
    _check_endpoints(presets)
    server = _server(args, study, presets)
    server.open_enrollment = bool(args.open)
    for note in server.start():
        print(f"tom-envs study: {note}", file=sys.stderr)
    console = App(server.folder / "console", presets=presets) if args.console else None
    config = GuardConfig(default_allowed_hosts(args.host), args.token,
                         trusted_proxies=tuple(args.trusted_proxy))
    _warn(args)
    access = f"?access={args.token}&ext=ID" if args.token else "?ext=ID"
    print(f"tom-envs: study {study.name} v{study.version}; data in {server.folder}; personal "
          f"links: tom-envs study links {args.file} -n N"
          + (f"; open enrolment: http://{args.host}:{args.port}/join{access}" if args.open else ""))  # fmt: skip
    return _run(asgi_app(console, server, config), args)


def _run(asgi: Any, args: argparse.Namespace) -> int:
    import uvicorn

    from tom_envs.serve.app import BODY_LIMIT
    from tom_envs.serve.guard import server_config

    config = server_config(asgi, args.host, args.port, body_limit=BODY_LIMIT,
                           header_timeout=args.header_timeout, per_client=args.per_client)
    uvicorn.Server(config).run()
    return 0


def _warn(args: argparse.Namespace) -> None:
    if args.host not in ("127.0.0.1", "localhost", "::1") and not args.token:
        print("warning: the server is reachable from the network without --token; anyone who "
              "can reach it can open the console or enrol", file=sys.stderr)


def _status(args: argparse.Namespace, study: Any) -> int:
    from tom_envs.serve.study.journal import read_journal
    from tom_envs.serve.study.state import Ledger

    folder = _folder(args, study)
    ledger = Ledger(study)
    for ev in read_journal(folder / "journal.jsonl"):
        ledger.apply(ev)
    people = list(ledger.participants.values())
    by = {}
    for p in people:
        where = p.status if p.status != "active" else f"at {p.step.kind}"
        by[where] = by.get(where, 0) + 1
    print(f"study {study.name} v{study.version} in {folder}: {len(people)} participants "
          + ", ".join(f"{k} {v}" for k, v in sorted(by.items())))
    ended = sum(1 for e in ledger.episodes.values() if e.ended)
    print(f"episodes: {len(ledger.episodes)} started, {ended} ended, "
          f"{len(ledger.live_episodes())} under way")
    for p in people:
        if p.code:
            print(f"  {p.pid} {p.external or ''} completed, code {p.code}")
    return 0


def _export(args: argparse.Namespace, study: Any) -> int:
    from tom_envs.serve.study.export import export

    m = export(_folder(args, study), args.out, study, omit_text=args.omit_free_text)
    c = m["counts"]
    print(f"wrote {args.out}: {c['participants']} participants ({c['completed']} completed), "
          f"{c['episodes']} episodes; card in {args.out}/README.md")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from tom_envs.serve.study.export import verify

    problems = verify(args.dataset)
    for p in problems:
        print(f"changed: {p}", file=sys.stderr)
    n = len(list(Path(args.dataset).glob("trajectories/*.jsonl")))
    if problems:
        print(f"error: {len(problems)} problem(s) in {n} trajectories: the engine no longer plays "
              "these games as they were recorded", file=sys.stderr)
        return 1
    print(f"all {n} trajectories replay identically on this engine")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """The researcher console (``--study FILE``: that study instead)."""
    try:
        from tom_envs.serve.app import App
        from tom_envs.serve.guard import GuardConfig, default_allowed_hosts
        from tom_envs.serve.routes import asgi_app
    except ImportError as exc:
        print(f"error: tom-envs serve {EXTRA.format(exc=exc)}", file=sys.stderr)
        return 2
    if args.study:
        args.file, args.open, args.console, args.max_participants, args.data = (
            args.study, False, False, None, None)
        args.study_cmd = "serve"
        return cmd_study(args)
    try:
        app = App(args.out, args.idle_timeout, presets=args.partner,
                  max_sessions=args.max_sessions, per_client=args.per_client_sessions,
                  max_memory_mb=args.max_memory_mb, max_fallback_share=args.max_fallback_share)
        _check_endpoints(app.presets)
    except (ValueError, OSError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _warn(args)
    access = f"?access={args.token}" if args.token else ""
    print(f"tom-envs: open http://{args.host}:{args.port}/{access} (trajectories in {args.out})")
    config = GuardConfig(default_allowed_hosts(args.host), args.token,
                         trusted_proxies=tuple(args.trusted_proxy))
    return _run(asgi_app(app, None, config), args)
