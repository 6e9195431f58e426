"""Screenshots of the participant's page for every registered game, in headless Chromium.

    python -m tests.serve.screenshots docs/media/study      (from the repository's root)

Runs a study with one game entry per registered game (a random partner, short games), walks one
participant through it in a real browser, clicking the board, and saves ``<game>.png`` mid-game,
plus the consent, survey and completion pages. ``tests/serve/test_browser.py`` checks the same
pages; ``docs/serve.md`` shows the pictures. Needs chromium and chromedriver
(``sh tests/serve/install_browser.sh``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tom_envs.registration import GAMES

#: Short games for the pictures (any argument the game declares).
KWARGS = {
    "RockPaperScissors": "{ horizon = 4 }", "BattleOfSexes": "{ horizon = 4 }",
    "PrisonersDilemma": "{ horizon = 4 }", "Overcooked": "{ horizon = 30 }",
    "CollabCapture": "{}", "CollabEscape": "{}", "Hanabi": "{}", "Guandan": "{}",
    "BombDefusal": "{}", "CoBlock": "{ max_rounds = 12 }", "Example": "{}",
}  # fmt: skip
#: Seeds that give a readable picture (an early state with something on the board).
SEEDS = {"Hanabi": 4, "BombDefusal": 2, "CoBlock": 1, "Overcooked": 0}


def study_text(games: list[str]) -> str:
    """A study with one entry per game, a random partner, no surveys."""
    entries = "".join(
        f'\n[[games]]\nname = "{g.lower()}"\ngame = "{g}"\nkwargs = {KWARGS.get(g, "{}")}\n'
        f'seed = {SEEDS.get(g, 1)}\ninstructions = "How to play {g}."\n'
        for g in games
    )
    return (
        '[study]\nname = "screens"\ntitle = "Every game"\n'
        '[consent]\ntext = """We record your moves.\n\nYou may stop at any time."""\n'
        '[instructions]\ntext = "Play each game."\n'
        '[[conditions]]\nname = "bot"\npartner = "random"\n'
        '[[survey.episode]]\nid = "enjoy"\nkind = "likert"\ntext = "I enjoyed this game."\n'
        'scale = ["Not at all", "A little", "Somewhat", "Much", "Very much"]\n'
        '[[survey.end]]\nid = "comments"\nkind = "text"\ntext = "Anything to tell us?"\n'
        "required = false\n" + entries
    )


def browser(width: int = 1400, height: int = 1500):
    """Headless Debian chromium through selenium."""
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--hide-scrollbars"):  # fmt: skip
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    driver.set_page_load_timeout(30)
    return driver


def shrink(path: Path, height: int | None = None, colours: int = 256) -> None:
    """Store a screenshot cut to ``height`` pixels with an adaptive palette (a third of the
    bytes, the same picture to the eye), when Pillow is installed."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as img:
        if height is not None and height < img.height:
            img = img.crop((0, 0, img.width, height))
        small = img.convert("RGB").quantize(colours, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def save(driver, path: Path) -> None:
    """A screenshot of the window, cut below the page's content, shrunk."""
    driver.save_screenshot(str(path))
    height = driver.execute_script("return document.getElementById('main').getBoundingClientRect().bottom")
    shrink(path, int(height) + 24)


def wait_for(driver, test, timeout: float = 20.0):
    """Poll ``test(driver)`` until it is true (at most ``timeout`` seconds)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(test)


def body(driver, attr: str) -> str:
    """An attribute of the page's body (``data-kind``, ``data-turn``, ``data-decision``...)."""
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").get_attribute(f"data-{attr}") or ""


def click_board_or_button(driver) -> None:
    """Make the current decision: a highlighted shape on the board if there is one (choosing
    the chooser's first entry), else the first action button."""
    from selenium.webdriver.common.by import By

    shapes = driver.find_elements(By.CSS_SELECTOR, "#board .clickable")
    if shapes:
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
                              shapes[0])  # fmt: skip
        choices = driver.find_elements(By.CSS_SELECTOR, "#chooser:not([hidden]) button.choice")
        if choices:
            choices[0].click()
        return
    driver.find_element(By.CSS_SELECTOR, "#actions button.action").click()


def decide(driver) -> None:
    """Make one decision and wait until the page has taken it."""
    step = body(driver, "decision")
    click_board_or_button(driver)
    wait_for(driver, lambda d: body(d, "decision") != step or body(d, "kind") != "play")


def main(out: str) -> None:
    from selenium.webdriver.common.by import By

    from tom_envs.serve.study.server import StudyServer
    from tom_envs.serve.study.spec import parse_study

    from .test_serve import Server

    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    names = [g.name for g in GAMES]
    with tempfile.TemporaryDirectory() as tmp:
        study = StudyServer(parse_study(study_text(names)), Path(tmp) / "data")
        study.start()
        driver = browser()
        try:
            with Server(None, study) as url:
                driver.get(study.link("shots00001", url))
                wait_for(driver, lambda d: body(d, "kind") == "consent")
                save(driver, target / "consent.png")
                for _ in range(2):  # consent, instructions
                    kind = body(driver, "kind")
                    driver.find_element(By.CSS_SELECTOR, "button.primary").click()
                    wait_for(driver, lambda d, k=kind: body(d, "kind") != k)
                for game in names:
                    _one_game(driver, game, target)
                while body(driver, "kind") != "done":
                    wait_for(driver, lambda d: body(d, "kind") in ("survey", "done"))
                    _answer(driver)
                save(driver, target / "done.png")
        finally:
            driver.quit()
            study.close()


def _answer(driver) -> None:
    """Answer a survey page (the last point of each scale) and submit it."""
    from selenium.webdriver.common.by import By

    if body(driver, "kind") != "survey":
        return
    step = body(driver, "step")
    for scale in driver.find_elements(By.CSS_SELECTOR, ".scale"):
        scale.find_elements(By.CSS_SELECTOR, "input")[-1].click()
    driver.find_element(By.CSS_SELECTOR, "button.primary").click()
    wait_for(driver, lambda d: body(d, "step") != step)


def _one_game(driver, game: str, target: Path) -> None:
    from selenium.webdriver.common.by import By

    wait_for(driver, lambda d: body(d, "kind") in ("intro", "survey"))
    if body(driver, "kind") == "survey":
        _answer(driver)
        wait_for(driver, lambda d: body(d, "kind") == "intro")
    driver.find_element(By.CSS_SELECTOR, "button.primary").click()
    wait_for(driver, lambda d: body(d, "kind") == "play" and body(d, "turn") == "yours")
    for _ in range(2):
        decide(driver)
        wait_for(driver, lambda d: body(d, "kind") != "play" or body(d, "turn") == "yours"
                 or body(d, "status") != "playing")  # fmt: skip
        if body(driver, "kind") != "play" or body(driver, "status") != "playing":
            break
    if game == "Hanabi":  # show the chooser a click on a partner's card opens
        cards = driver.find_elements(By.CSS_SELECTOR, "#board rect.clickable")
        if cards:
            driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
                                  cards[-1])  # fmt: skip
    save(driver, target / f"{game.lower()}.png")
    while body(driver, "kind") == "play":
        if body(driver, "turn") == "yours" and body(driver, "status") == "playing":
            decide(driver)
        else:  # the partners' moves: wait for the page, not the clock
            wait_for(driver, lambda d: body(d, "kind") != "play" or (
                body(d, "turn") == "yours" and body(d, "status") == "playing"))  # fmt: skip
    if body(driver, "kind") == "survey" and game == "PrisonersDilemma":
        save(driver, target / "survey.png")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/media/study")
