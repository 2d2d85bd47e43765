"""The reliability campaign's switches (``--campaign`` / ``AGENTNB_CAMPAIGN=1``) and its figures."""

from __future__ import annotations

import pytest
from campaign import CONFIG, TALLIES, Scale, campaign_enabled


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--campaign", action="store_true", default=False, help="run the heavy reliability campaign"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "campaign: heavy reliability runs (thousands of cases), opt in with --campaign"
    )
    CONFIG[:] = [config]


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("campaign") and not campaign_enabled():
        pytest.skip("heavy campaign: run with --campaign or AGENTNB_CAMPAIGN=1")


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    if not TALLIES:
        return
    merged: dict[str, list[int]] = {}
    for tally in TALLIES:
        row = merged.setdefault(tally.area, [0, 0])
        row[0] += tally.cases
        row[1] += tally.failed
    terminalreporter.write_line("")
    terminalreporter.write_line("area | cases tried | failures")
    for area, (cases, failed) in merged.items():
        terminalreporter.write_line(f"{area} | {cases} | {failed}")


@pytest.fixture(
    params=[pytest.param(False, id="fast"), pytest.param(True, id="campaign", marks=pytest.mark.campaign)]
)
def scale(request: pytest.FixtureRequest) -> Scale:
    """The size of a sized test: a fast variant, and a heavy one for the campaign."""
    return Scale(heavy=request.param)
