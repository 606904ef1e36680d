"""Live's "Top pages today" on a phone: long page names end in an ellipsis within their
column and every count stays visible, in light and dark, at 390 px and on a desktop."""

import datetime as dt
import os
from pathlib import Path

import pytest
from browserkit import until
from dashkit import seed

from dashboard.services import get_services

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

# Long names (a blog's article paths) with six-figure counts: the worst case for a row.
PAGES = {f"/blog/2026/11/{'a-very-long-article-title-about-traffic-' * 2}{i}": 123_456 - i
         for i in range(6)}
PAGES["/"] = 1_234_567

ROWS = """return Array.from(document.querySelectorAll('#live-top tbody tr')).map(tr => {
    const card = document.querySelector('#live-top-card').getBoundingClientRect();
    const name = tr.querySelector('.bd-value span');
    const count = tr.querySelector('td.num');
    const box = count.getBoundingClientRect();
    return {name: name.title, count: count.innerText,
            // the count is whole: inside the card and not cut by its own cell
            visible: box.left >= card.left && box.right <= card.right
                     && count.scrollWidth <= count.clientWidth,
            ellipsis: name.parentElement.scrollWidth > name.parentElement.clientWidth
                      && getComputedStyle(name.parentElement).textOverflow === 'ellipsis'};
});"""


def rows(dash_duo):
    return dash_duo.driver.execute_script(ROWS)


def test_long_page_names_are_cut_and_counts_stay_visible(app, dash_duo):
    now = dt.datetime.now(dt.UTC)
    # This minute and the next: if the day turns before the page reads "today", the
    # second half is still today's (counts are then halves: either is accepted).
    hits = [(t, page, n) for t in (now, now + dt.timedelta(minutes=1))
            for page, n in PAGES.items()]
    seed(get_services(app.server).db, "s", hits)
    dash_duo.start_server(app, navigate=False)
    for theme, width in [("light", 390), ("dark", 390), ("light", 1280), ("dark", 1280)]:
        dash_duo.driver.set_window_size(width, 1000)
        dash_duo.driver.get(dash_duo.server_url + f"/?site=s&tz=UTC&theme={theme}")
        dash_duo.wait_for_class_to_equal("#app-root", f"app theme-{theme}")
        until(lambda: len(rows(dash_duo)) == len(PAGES))
        found = rows(dash_duo)
        assert [r["name"] for r in found] == sorted(PAGES, key=PAGES.get, reverse=True)
        for row in found:
            n = PAGES[row["name"]]
            assert row["count"] in (f"{2 * n:,}", f"{n:,}")
            assert row["visible"], (row, theme, width)
            assert row["ellipsis"] or not row["name"].startswith("/blog"), row
        overflow = dash_duo.driver.execute_script(
            "return document.documentElement.scrollWidth - "
            "document.documentElement.clientWidth")
        assert overflow <= 0, (theme, width)
        shots = os.environ.get("HITBOARD_SCREENSHOTS")
        if shots:  # the whole page, for a person to look at (not an assertion)
            dash_duo.find_element("#live-pause").click()  # no redraw while the page grows
            dash_duo.wait_for_text_to_equal("#live-pause", "Resume")
            height = dash_duo.driver.execute_script("return document.body.scrollHeight")
            dash_duo.driver.set_window_size(width, height + 100)
            dash_duo.driver.save_screenshot(
                str(Path(shots) / f"live-top-{theme}-{width}.png"))
        assert dash_duo.get_logs() == []
