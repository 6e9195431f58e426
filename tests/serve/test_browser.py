"""People in a real headless browser (Debian chromium via selenium).

* Two browsers take part in one study: they are matched into a human-human game and play it to
  the end, then each plays a human-AI game, and both fill every survey and get their codes; the
  exported dataset replays on the engine.
* The researcher console: a whole episode of the Prisoner's Dilemma and of Overcooked, with the
  board's colours checked in the screenshot.
* Script payloads injected through the study's texts, survey options, chat (both directions) and
  player names are shown as text and never run.

Every wait is on the page's state (``data-kind``, ``data-turn``, ``data-decision`` on the body),
never on a clock, so the tests do not race the server. Needs ``chromium`` and ``chromedriver``
(``sh tests/serve/install_browser.sh``; the README's test command runs it). Without them the tests
skip, except under CI, where they fail.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from tom_envs.core.agents import AgentAction, BaseAgent, Turn
from tom_envs.runner import Episode
from tom_envs.serve import Session
from tom_envs.serve.app import App

from .screenshots import body, browser, decide, wait_for
from .studies import pd_study
from .test_serve import Server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    if os.environ.get("CI"):
        raise RuntimeError("CI needs chromium and chromedriver: sh tests/serve/install_browser.sh")
    pytest.skip("chromium/chromedriver not installed (sh tests/serve/install_browser.sh)",
                allow_module_level=True)  # fmt: skip

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402


@pytest.fixture(scope="module")
def first():
    driver = browser(1400, 1000)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def second():
    driver = browser(1400, 1000)
    yield driver
    driver.quit()


def _pixels(png: bytes) -> np.ndarray:
    import matplotlib.image as mpimg

    return mpimg.imread(io.BytesIO(png), format="png")


def _injected(driver) -> list[str]:
    """Elements a payload would have created, and whether any handler ran (``z`` set)."""
    found = [sel for sel in ("img[src='x']", "svg[onload]", "b[onclick]", "script:not([src])")
             if driver.find_elements(By.CSS_SELECTOR, sel)]  # fmt: skip
    if driver.execute_script("return typeof z !== 'undefined'"):
        found.append("a handler ran")
    return found


# ------------------------------------------------------------------ a study, two people
def _advance(driver, answers: dict[str, str] | None = None) -> str:
    """Do what the page asks, once; returns its kind. Waits until the page has moved on."""
    kind, step = body(driver, "kind"), body(driver, "step")
    if kind in ("consent", "instructions", "intro"):
        driver.find_element(By.CSS_SELECTOR, "button.primary").click()
    elif kind == "survey":
        for scale in driver.find_elements(By.CSS_SELECTOR, ".scale"):
            scale.find_elements(By.CSS_SELECTOR, "input")[-1].click()
        for box in driver.find_elements(By.CSS_SELECTOR, "textarea"):
            box.send_keys((answers or {}).get("text", "it was fine"))
        for options in driver.find_elements(By.CSS_SELECTOR, ".options"):
            want = (answers or {}).get("choice", "Green")
            labels = [x for x in options.find_elements(By.TAG_NAME, "label") if x.text == want]
            (labels or options.find_elements(By.TAG_NAME, "label"))[0].click()
        driver.find_element(By.CSS_SELECTOR, "button.primary").click()
    elif kind == "play" and body(driver, "turn") == "yours" and body(driver, "status") == "playing":
        decide(driver)
        return kind
    else:
        return kind
    wait_for(driver, lambda d: body(d, "step") != step or body(d, "kind") != kind)
    return kind


def _until(driver, kinds: tuple[str, ...]) -> None:
    """Answer and play until the page is of a kind in ``kinds``."""
    for _ in range(200):
        kind = body(driver, "kind")
        if kind in kinds:
            return
        if kind == "waiting" or (kind == "play" and body(driver, "turn") != "yours"):
            wait_for(driver, lambda d, k=kind: body(d, "kind") != k or (
                body(d, "kind") == "play" and body(d, "turn") == "yours"))  # fmt: skip
            continue
        _advance(driver)
    raise AssertionError(f"never reached {kinds}: at {body(driver, 'kind')}")


def test_two_people_play_together_then_with_a_bot_and_answer_every_survey(first, second,
                                                                          tmp_path: Path) -> None:  # fmt: skip
    from tom_envs.serve.study.export import export, verify
    from tom_envs.serve.study.server import StudyServer
    from tom_envs.serve.study.spec import load_study

    server = StudyServer(load_study(pd_study(tmp_path, horizon=3)), tmp_path / "data")
    server.start()
    try:
        with Server(None, server) as url:
            first.get(server.link("aaaaaa0001", url))
            second.get(server.link("bbbbbb0002", url))
            for d in (first, second):
                wait_for(d, lambda d: body(d, "kind") == "consent")
                _until(d, ("waiting", "play"))
            assert body(first, "kind") in ("waiting", "play")
            # both are matched into one game: play it to the end, turn by turn
            for _ in range(40):
                for d in (first, second):
                    if body(d, "kind") == "play" and body(d, "turn") == "yours":
                        decide(d)
                if body(first, "kind") == body(second, "kind") == "survey":
                    break
                wait_for(first, lambda _: any(body(d, "kind") == "survey" or body(d, "turn") == "yours"
                                              for d in (first, second)))  # fmt: skip
            for d in (first, second):
                _until(d, ("done",))  # survey, the game with the bot, its survey, the end survey
                assert len(d.find_element(By.ID, "code").text) == 10
                assert _injected(d) == []
    finally:
        server.close()
    export(tmp_path / "data", tmp_path / "ds")
    assert verify(tmp_path / "ds") == []
    episodes = [Episode.read(p) for p in (tmp_path / "ds").glob("trajectories/*.jsonl")]
    together = [e for e in episodes if list(e.agents.values()) == ["human", "human"]]
    with_bot = [e for e in episodes if sorted(e.agents.values()) == ["human", "tit_for_tat"]]
    assert len(together) == 1 and len(with_bot) == 2
    assert all(e.status == "ok" and e.length == 3 for e in episodes)
    answers = (tmp_path / "ds" / "surveys.csv").read_text().splitlines()
    assert len(answers) == 1 + 2 * (2 + 2)  # per person: 2 after episodes, comments and check


# ------------------------------------------------------------------ the console
def _console(driver, tmp_path: Path, game: str, kwargs: str, partner: str):
    """A person plays ``game`` (``kwargs``, against ``partner``) in the console to its end,
    always the first legal button: (clicks, the one episode recorded, the board's RGB pixels in
    the final screenshot)."""
    shot = tmp_path / f"{game}.png"
    with Server(App(tmp_path / "runs")) as url:
        driver.get(f"{url}/?game={game}")
        wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".partner"))
        Select(driver.find_element(By.CSS_SELECTOR, ".partner")).select_by_value(partner)
        box = driver.find_element(By.ID, "kwargs")
        box.clear()
        box.send_keys(kwargs)
        driver.find_element(By.ID, "start").click()
        wait_for(driver, lambda d: body(d, "status") == "playing")
        clicks = 0
        while body(driver, "status") == "playing":
            step = body(driver, "step")
            driver.find_element(By.CSS_SELECTOR, "#legal button.action").click()
            clicks += 1
            wait_for(driver, lambda d, s=step: body(d, "step") != s or body(d, "status") != "playing")
        assert body(driver, "status") == "done" and "episode done" in driver.find_element(By.ID, "status").text
        driver.save_screenshot(str(shot))
        rect = driver.find_element(By.ID, "board").rect
    (ep_path,) = (tmp_path / "runs").glob("*.jsonl")
    img = _pixels(shot.read_bytes())
    x, y, w, h = (int(rect[k]) for k in ("x", "y", "width", "height"))
    return clicks, Episode.read(ep_path), img[y : y + h, x : x + w, :3]


def test_the_console_plays_the_prisoners_dilemma(first, tmp_path: Path) -> None:
    clicks, ep, region = _console(first, tmp_path, "PrisonersDilemma", '{"horizon": 4}', "tit_for_tat")
    assert clicks == 4
    assert ep.agents["player_0"] == "human" and sum(bool(s.get("human")) for s in ep.steps) == 4
    target = np.array([0xEE, 0xF4, 0xFB]) / 255  # the payoff cells' fill
    assert (np.abs(region - target).max(axis=2) < 0.02).mean() > 0.01


def test_the_console_plays_overcooked(first, tmp_path: Path) -> None:
    clicks, ep, region = _console(first, tmp_path, "Overcooked", '{"horizon": 6}', "greedy")
    assert clicks == 6 and ep.length == 6
    for colour in ((0x1F, 0x5F, 0xBF), (0x2E, 0x8B, 0x57), (0xC8, 0xA9, 0x6E)):  # you, partner, counters
        target = np.array(colour) / 255
        assert (np.abs(region - target).max(axis=2) < 0.03).sum() > 30, colour


# ------------------------------------------------------------------ script injection
#: Payloads that would run (or add an element) if any reached the page as HTML. Each fits the
#: 24-character bound on player names.
IMG = "<img src=x onerror=z=1>"
SVG = "<svg onload=z=2>"
BOLD = "<b onclick=z=3>b</b>"
SCRIPT = "<script>z=4</script>"


def test_study_texts_are_shown_as_text(first, tmp_path: Path) -> None:
    from tom_envs.serve.study.server import StudyServer
    from tom_envs.serve.study.spec import load_study

    conds = '\n[[conditions]]\nname = "bot"\npartner = "tit_for_tat"\n'
    path = pd_study(tmp_path, conditions=conds, horizon=1)
    text = path.read_text()
    for old in ("We record your moves and answers.", "Play well.", "Choose a row.", "I enjoyed it.",
                "Comments?"):  # fmt: skip
        text = text.replace(old, f"{IMG} {SVG}")
    text = text.replace('"somewhat"', json.dumps(BOLD))  # a survey option
    path.write_text(text)
    server = StudyServer(load_study(path), tmp_path / "data")
    server.start()
    try:
        with Server(None, server) as url:
            first.get(server.link("cccccc0003", url))
            wait_for(first, lambda d: body(d, "kind") == "consent")
            seen = 0
            for _ in range(30):
                if IMG in first.find_element(By.ID, "main").text:
                    seen += 1
                assert _injected(first) == []
                if body(first, "kind") == "done":
                    break
                _advance(first)
            assert seen >= 4  # consent, instructions, introduction and survey: as text
    finally:
        server.close()


def test_player_names_reach_the_page_as_text(first, tmp_path: Path) -> None:
    with Server(App(tmp_path / "runs")) as url:
        first.get(f"{url}/?game=Hanabi")
        wait_for(first, lambda d: d.find_elements(By.CSS_SELECTOR, ".partner"))
        box = first.find_element(By.ID, "kwargs")
        box.clear()
        box.send_keys(json.dumps({"names": [IMG, BOLD]}))
        first.find_element(By.ID, "start").click()
        wait_for(first, lambda d: IMG in d.find_element(By.ID, "observation").text
                 and BOLD in d.find_element(By.ID, "board").get_attribute("textContent"))  # fmt: skip
        assert _injected(first) == []


class Chatty(BaseAgent):
    """A teammate whose every message is a script payload."""

    name = "chatty"

    def act(self, turn: Turn) -> AgentAction:
        return AgentAction(action=int(turn.legal_actions[0]), message=f"{SCRIPT} {IMG}")


def test_chat_in_both_directions_is_text(first, tmp_path: Path) -> None:
    app = App(tmp_path / "runs")
    s = Session("BombDefusal", 2, [Chatty(), Chatty()], seed=0, out_dir=tmp_path / "runs")
    s.advance()
    app.adopt(s)
    with Server(app) as url:
        first.get(f"{url}/?session={s.id}&token={s.token}")
        wait_for(first, lambda d: SCRIPT in d.find_element(By.ID, "observation").text)
        assert _injected(first) == []
        chat = first.find_element(By.ID, "chat")
        chat.send_keys(f"{SVG} {BOLD}")  # the person's own message
        step = body(first, "step")
        first.find_element(By.CSS_SELECTOR, "#legal button.action").click()
        wait_for(first, lambda d: body(d, "step") != step)
        assert _injected(first) == []
    sent = [st.get("message") for st in s.episode.steps if st.get("human")]
    assert sent == [f"{SVG} {BOLD}"]  # recorded verbatim
