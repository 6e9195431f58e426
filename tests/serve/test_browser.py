"""A person's whole episode in a real headless browser (Debian chromium via selenium).

Also: script payloads injected through participant ids, task names, chat (both directions) and
player names are shown as text and never run.

Needs ``chromium`` and ``chromedriver`` (``sh tests/serve/install_browser.sh``; the README's test
command runs it). Without them the tests skip, except under CI, where they fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from tom_envs.core.agents import AgentAction, BaseAgent, Turn
from tom_envs.runner import Episode
from tom_envs.serve import Session
from tom_envs.serve.app import App, StudyTask

from .test_serve import Server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    if os.environ.get("CI"):
        raise RuntimeError("CI needs chromium and chromedriver: sh tests/serve/install_browser.sh")
    pytest.skip("chromium/chromedriver not installed (sh tests/serve/install_browser.sh)",
                allow_module_level=True)  # fmt: skip

selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000",
                "--disable-gpu"):  # fmt: skip
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _pixels(png: bytes) -> np.ndarray:
    import io

    import matplotlib.image as mpimg

    return mpimg.imread(io.BytesIO(png), format="png")


#: Iterations of the play loop: each is a click (then a wait for the step) or a 0.05 s poll.
MAX_POLLS = 1800


def _play(driver, url: str, game: str, kwargs: str, partner: str, shot: Path) -> None:
    driver.get(f"{url}/?game={game}")
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".partner"))
    Select(driver.find_element(By.CSS_SELECTOR, ".partner")).select_by_value(partner)
    box = driver.find_element(By.ID, "kwargs")
    box.clear()
    box.send_keys(kwargs)
    driver.find_element(By.ID, "start").click()
    clicks = 0
    for _ in range(MAX_POLLS):  # a count, never a clock: the same bound on any machine
        status = driver.find_element(By.TAG_NAME, "body").get_attribute("data-status")
        if status == "done":
            break
        buttons = [
            b
            for b in driver.find_elements(By.CSS_SELECTOR, "#legal button.action")
            if b.is_enabled()
        ]
        if buttons:
            step = driver.find_element(By.TAG_NAME, "body").get_attribute("data-step")
            buttons[clicks % len(buttons)].click()
            clicks += 1
            WebDriverWait(driver, 20).until(
                lambda d, s=step: (
                    d.find_element(By.TAG_NAME, "body").get_attribute("data-step") != s
                    or d.find_element(By.TAG_NAME, "body").get_attribute("data-status") != "playing"
                )
            )
        else:
            time.sleep(0.05)
    assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-status") == "done"
    assert "episode done" in driver.find_element(By.ID, "status").text
    driver.save_screenshot(str(shot))
    board = driver.find_element(By.ID, "board")
    return clicks, board.rect


def test_a_person_plays_the_prisoners_dilemma_in_the_browser(browser, tmp_path: Path) -> None:
    app = App(tmp_path / "runs")
    shot = tmp_path / "pd.png"
    with Server(app) as url:
        clicks, rect = _play(
            browser, url, "PrisonersDilemma", '{"horizon": 4}', "tit_for_tat", shot
        )
    assert clicks == 4
    (ep_path,) = (tmp_path / "runs").glob("*.jsonl")
    ep = Episode.read(ep_path)
    assert ep.agents["player_0"] == "human" and sum(bool(s.get("human")) for s in ep.steps) == 4
    img = _pixels(shot.read_bytes())
    assert img.shape[0] >= 700 and img.shape[1] >= 1300  # the viewport of a 1400x1000 window
    x, y, w, h = (int(rect[k]) for k in ("x", "y", "width", "height"))
    region = img[y : y + h, x : x + w, :3]
    assert region.size and region.std() > 0.05  # the payoff table is drawn, not blank
    # the payoff cells' fill colour (#eef4fb) is on screen
    target = np.array([0xEE, 0xF4, 0xFB]) / 255
    assert (np.abs(region - target).max(axis=2) < 0.02).mean() > 0.01


def test_a_person_plays_overcooked_in_the_browser(browser, tmp_path: Path) -> None:
    app = App(tmp_path / "runs")
    shot = tmp_path / "oc.png"
    with Server(app) as url:
        clicks, rect = _play(browser, url, "Overcooked", '{"horizon": 6}', "greedy", shot)
    assert clicks == 6
    (ep_path,) = (tmp_path / "runs").glob("*.jsonl")
    assert Episode.read(ep_path).length == 6
    img = _pixels(shot.read_bytes())
    x, y, w, h = (int(rect[k]) for k in ("x", "y", "width", "height"))
    region = img[y : y + h, x : x + w, :3]
    for colour in (
        (0x1F, 0x5F, 0xBF),
        (0x2E, 0x8B, 0x57),
        (0xC8, 0xA9, 0x6E),
    ):  # you, partner, counters
        target = np.array(colour) / 255
        assert (np.abs(region - target).max(axis=2) < 0.03).sum() > 30, colour


# ------------------------------------------------------------------ script injection (issue #17)
#: Payloads that would run (or add an element) if any of them reached the page as HTML. Each fits
#: the 24-character bound on player names.
IMG = "<img src=x onerror=z=1>"
SVG = "<svg onload=z=2>"
BOLD = "<b onclick=z=3>b</b>"
SCRIPT = "<script>z=4</script>"


def _injected(driver) -> list[str]:
    """Elements a payload would have created, and whether any handler ran (``z`` set)."""
    found = [sel for sel in ("img[src='x']", "svg[onload]", "b[onclick]", "script:not([src])")
             if driver.find_elements(By.CSS_SELECTOR, sel)]  # fmt: skip
    if driver.execute_script("return typeof z !== 'undefined'"):
        found.append("a handler ran")
    return found


def _wait_text(driver, element_id: str, text: str) -> None:
    WebDriverWait(driver, 20).until(lambda d: text in d.find_element(By.ID, element_id).text)


def test_participant_ids_and_task_names_are_shown_as_text(browser, tmp_path: Path) -> None:
    from urllib.parse import quote

    app = App(tmp_path / "runs", [StudyTask(IMG, "PrisonersDilemma", 0, ["tit_for_tat"], 0,
                                            {"horizon": 2})])  # fmt: skip
    with Server(app) as url:
        browser.get(f"{url}/study/{quote(SVG, safe='')}")
        assert SVG in browser.find_element(By.TAG_NAME, "h1").text  # the id, as text
        assert IMG in browser.find_element(By.TAG_NAME, "li").text  # the task name, as text
        assert _injected(browser) == []
        browser.find_element(By.CSS_SELECTOR, "li a").click()  # play it: the player page
        _wait_text(browser, "task", IMG)
        assert _injected(browser) == []
        assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-status") == "playing"


def test_player_names_reach_the_page_as_text(browser, tmp_path: Path) -> None:
    app = App(tmp_path / "runs")
    with Server(app) as url:
        browser.get(f"{url}/?game=Hanabi")
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".partner"))
        box = browser.find_element(By.ID, "kwargs")
        box.clear()
        box.send_keys(json.dumps({"names": [IMG, BOLD]}))
        browser.find_element(By.ID, "start").click()
        _wait_text(browser, "observation", IMG)
        _wait_text(browser, "observation", BOLD)
        assert _injected(browser) == []


class Chatty(BaseAgent):
    """A teammate whose every message is a script payload."""

    name = "chatty"

    def act(self, turn: Turn) -> AgentAction:
        return AgentAction(action=int(turn.legal_actions[0]), message=f"{SCRIPT} {IMG}")


def test_chat_in_both_directions_is_text(browser, tmp_path: Path) -> None:
    app = App(tmp_path / "runs")
    s = Session("BombDefusal", 2, [Chatty(), Chatty()], seed=0, out_dir=tmp_path / "runs")
    app.sessions[s.id], app.locks[s.id] = s, asyncio.Lock()
    with Server(app) as url:
        browser.get(f"{url}/?session={s.id}&token={s.token}")
        _wait_text(browser, "observation", SCRIPT)  # the teammates' messages, as text
        assert _injected(browser) == []
        chat = browser.find_element(By.ID, "chat")
        chat.send_keys(f"{SVG} {BOLD}")  # the person's own message
        step = browser.find_element(By.TAG_NAME, "body").get_attribute("data-step")
        browser.find_element(By.CSS_SELECTOR, "#legal button.action").click()
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-step") != step
        )
        assert _injected(browser) == []
    sent = [st.get("message") for st in s.episode.steps if st.get("human")]
    assert sent == [f"{SVG} {BOLD}"]  # recorded verbatim
