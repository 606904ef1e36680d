"""``hitboard import`` of a ZIP in Plausible's CSV layout (``queries/imports/``): a
Plausible export (written by hand from its documented columns, tests/data/plausible)
imports, and a hostile archive is refused whole, exit 2, nothing imported."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from clikit import rows, run

from queries.imports import archive
from queries.imports.archive import ImportRefusedError

PLAUSIBLE = Path(__file__).parent / "data" / "plausible"
SPAN = ("--start", "2024-03-01", "--end", "2024-03-03")


def zipped(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, text in files.items():
            out.writestr(name, text)
    return path


def plausible_files() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(PLAUSIBLE.glob("*.csv"))}


def daily(store: str, metric: str, granularity: str = "day") -> list[str]:
    return [r[metric] for r in rows(run(store, "report", "--site", "example.com",
                                        "--granularity", granularity, *SPAN,
                                        "--metric", metric))]


@pytest.fixture(scope="module")
def plausible(tmp_path_factory):
    """A store holding the Plausible export's days, imported."""
    tmp = tmp_path_factory.mktemp("plausible")
    store = str(tmp / "store")
    done = run(store, "import", str(zipped(tmp / "p.zip", plausible_files())),
               "--site", "example.com")
    assert done.exit_code == 0 and "imported 2 days" in done.stdout, done.output
    return store


def test_a_plausible_export_imports(plausible):
    store = plausible
    assert daily(store, "visitors") == ["120", "95"]
    assert daily(store, "visits") == ["140", "110"]
    assert daily(store, "pageviews") == ["310", "240"]
    assert daily(store, "bounce_rate") == ["34.29", "36.36"]
    assert daily(store, "visit_duration") == ["180.0", "170.0"]
    assert daily(store, "visits", "month") == ["250"]


def breakdown(store: str, by: str, *more: str) -> list[tuple]:
    found = rows(run(store, "breakdown", "--site", "example.com", "--by", by, *SPAN, *more))
    return [tuple(r.values()) for r in found]


def test_breakdowns_add_the_imported_rows(plausible):
    assert breakdown(plausible, "referrer")[0] == ("Newsletter", "180", "70", "0")
    assert dict((v, h) for v, h, *_ in breakdown(plausible, "referrer")) == {
        "Google": "140", "(direct)": "120", "Hacker News": "50", "DuckDuckGo": "60",
        "Newsletter": "180"}
    assert breakdown(plausible, "utm_campaign") == [("spring", "180", "70", "0")]
    assert breakdown(plausible, "device")[0] == ("desktop", "460", "175", "0")
    assert breakdown(plausible, "page", "-n", "1") == [("/", "330", "160", "0")]
    assert breakdown(plausible, "entry_page")[0] == ("/", "180", "32.22", "166.67")
    assert breakdown(plausible, "referrer", "--no-imports") == []
    # events: 215 visitors over the two days; 21 of them signed up
    assert breakdown(plausible, "event") == [
        ("Signup", "22", "21", "9.8", "", "0"), ("Outbound Link: Click", "7", "5", "2.3", "", "0")]


def test_another_file_of_the_same_days_replaces_them(tmp_path):
    store = str(tmp_path / "store")
    files = plausible_files()
    assert run(store, "import", str(zipped(tmp_path / "a.zip", files)),
               "--site", "example.com").exit_code == 0
    name = "imported_visitors_20240301_20240302.csv"
    smaller = {name: "date,visits,visitors,pageviews\n2024-03-02,1,1,2\n"}
    assert run(store, "import", str(zipped(tmp_path / "b.zip", smaller)),
               "--site", "example.com").exit_code == 0
    assert daily(store, "visits") == ["0", "1"]
    assert daily(store, "pageviews") == ["0", "2"]


VISITORS = "imported_visitors_20240301_20240302.csv"
HEADER = "date,visitors,pageviews,bounces,visits,visit_duration\n"


@pytest.mark.parametrize(("files", "said"), [
    ({"notes.txt": "hello"}, "'notes.txt': an unknown file"),
    ({"imported_widgets_20240301_20240302.csv": HEADER}, "an unknown file"),
    ({"sub/" + VISITORS: HEADER}, "an unknown file"),
    ({"../" + VISITORS: HEADER}, "a path leaving the archive"),
    ({"/etc/" + VISITORS: HEADER}, "a path leaving the archive"),
    ({VISITORS: HEADER + "2024-03-01,1,2,0,1,0\n2024-03-02,x,2,0,1,0\n"},
     f"{VISITORS}, line 3: visitors 'x'"),
    ({VISITORS: HEADER + "2024-03-01,1,2,0,-1,0\n"}, "line 2: visits '-1'"),
    ({VISITORS: HEADER + "2024-03-05,1,2,0,1,0\n"}, "line 2: 2024-03-05 is outside"),
    ({VISITORS: HEADER + "03/01/2024,1,2,0,1,0\n"}, "line 2: '03/01/2024' is not a date"),
    ({VISITORS: HEADER + "2024-03-01,1,2\n"}, "line 2: 3 cells"),
    ({VISITORS: "date,visitors\n"}, "no column pageviews, visits"),
    ({"imported_pages_20240301_20240302.csv":
      "date,page,visitors,pageviews\n2024-03-01,/a\u202e,1,1\n"}, "control character"),
    ({VISITORS: "\xff"}, "line 1"),
])
def test_a_bad_archive_is_refused_whole(tmp_path, files, said):
    store = str(tmp_path / "store")
    good = {"imported_devices_20240301_20240302.csv":
            "date,device,visitors\n2024-03-01,Desktop,3\n"}
    path = tmp_path / "bad.zip"
    with zipfile.ZipFile(path, "w") as out:
        for name, text in {**good, **files}.items():
            out.writestr(name, text.encode("latin-1") if "\xff" in text else text)
    result = run(store, "import", str(path), "--site", "example.com")
    assert result.exit_code == 2 and result.output.startswith("Error: "), result.output
    assert said in result.output and "Traceback" not in result.output
    assert "example.com" not in run(store, "site", "list").output


def test_an_archive_unpacking_past_the_limit_is_refused(monkeypatch):
    monkeypatch.setattr(archive, "MAX_UNPACKED", 4096)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(VISITORS, HEADER + "2024-03-01,1,2,0,1,0\n" * 400)
    with pytest.raises(ImportRefusedError, match="unpacks to 8,"):
        archive.read(bomb)


def test_the_budget_counts_what_comes_out_not_what_headers_say(monkeypatch):
    budget = [10]
    with pytest.raises(ImportRefusedError, match="more than"):
        list(archive._limited(io.BytesIO(b"date,visitors\n2024-03-01,1\n"), budget))


def test_not_a_zip_is_refused():
    with pytest.raises(ImportRefusedError, match="not a ZIP archive"):
        archive.read(io.BytesIO(b"date,visitors\n"))


def test_a_member_that_cannot_be_unpacked_is_refused():
    good = io.BytesIO()
    with zipfile.ZipFile(good, "w", zipfile.ZIP_STORED) as out:
        out.writestr(VISITORS, HEADER + "2024-03-01,1,2,0,1,0\n")
    data = good.getvalue().replace(b"2024-03-01,1,2", b"2024-03-01,9,2", 1)  # CRC now wrong
    with pytest.raises(ImportRefusedError, match="cannot be unpacked"):
        archive.read(io.BytesIO(data))


def test_a_line_too_long_or_too_many_files_are_refused(monkeypatch):
    long_line = io.BytesIO()
    with zipfile.ZipFile(long_line, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(VISITORS, HEADER + "2024-03-01," + "1" * 70_000 + "\n")
    with pytest.raises(ImportRefusedError, match=f"{VISITORS}, line 2: over 65,536"):
        archive.read(long_line)
    monkeypatch.setattr(archive, "MAX_MEMBERS", 1)
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as out:
        out.writestr(VISITORS, HEADER)
        out.writestr("imported_pages_20240301_20240302.csv", "date,page,visitors,pageviews\n")
    with pytest.raises(ImportRefusedError, match="holds 2 files, at most 1"):
        archive.read(many)
