"""A build without a terminal (a log, CI, a pipe) says where it is: a build's stage runs for
20-40 minutes on a large folder, and stderr said nothing between the estimate at its start
and the report at its end. The interval is a module constant a test lowers."""

from __future__ import annotations

import re
import shutil
import time

from click.testing import CliRunner

from indexer.cli import cli, common
from tests.conftest import CORPUS

LINE = re.compile(r"^headers: \d+(\.\d)?% done after \d+ s(, no estimate yet|, \d+(\.\d)?%/min, about .+ left)$")


def build(tmp_path, *extra: str):
    docs = tmp_path / "docs"
    if not docs.exists():
        docs.mkdir()
        for name in ("kargo-ve-teslimat.md", "iade-ve-geri-odeme.md"):
            shutil.copy(CORPUS / name, docs / name)
    done = CliRunner().invoke(cli, ["build", str(docs), "-s", "headers", "--db", str(tmp_path / "db"), "--full",
                                    *extra])
    assert done.exit_code == 0, done.output
    return done.stderr.splitlines()


def test_a_build_without_a_terminal_prints_a_line_of_progress_every_interval(tmp_path, monkeypatch):
    assert common.PROGRESS_EVERY <= 30  # the promise: at least every 30 s
    monkeypatch.setattr(common, "PROGRESS_EVERY", 0.05)
    lines = [line for line in build(tmp_path) if LINE.match(line)]
    assert lines, build(tmp_path)
    assert not [line for line in build(tmp_path, "-q") if line.startswith("headers: ")]  # --quiet: nothing


def test_a_progress_line_says_the_share_done_the_rate_and_what_is_left():
    ticker = common.Ticker("headers", 400, 30)
    assert ticker.line() == "headers: 0.0% done after 0 s, no estimate yet"
    ticker.started = time.monotonic() - 120  # two minutes in, the first step ends
    ticker.advance(20)
    assert ticker.line() == "headers: 5.0% done after 2.0 min, no estimate yet"
    ticker.first = (time.monotonic() - 60, 20)  # a minute later, a quarter done
    ticker.advance(80)
    assert ticker.line() == "headers: 25% done after 2.0 min, 20%/min, about 3.8 min left"
    ticker.started, ticker.first, ticker.done = time.monotonic() - 600, (time.monotonic() - 540, 2), 4
    assert ticker.line() == "headers: 1.0% done after 10.0 min, 0.1%/min, about 29.7 h left"


def test_what_comes_before_the_first_step_is_not_the_rate():
    """G11 on one large PDF: its pages were laid out for 28 s before the first batch was
    embedded; at 30 s the line said 6.6% done and about 7.1 min left, for a build done
    at 44 s. The rate counts from the first step, so the rest is foreseen at its own pace."""
    ticker = common.Ticker("auto", 1000, 30)
    ticker.started = time.monotonic() - 30
    ticker.first = (time.monotonic() - 2, 66)  # the first batch, after 28 s of layout
    ticker.done = 166  # 2 s later, a hundred more
    line = ticker.line()
    assert line.startswith("auto: 17% done after 30 s, ") and line.endswith("about 17 s left"), line
