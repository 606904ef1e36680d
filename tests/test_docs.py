"""The front page and the docs stay true to the files: every picture they show exists, is
one ``scripts/screenshots.py`` makes, and the pictures stay small; every relative link of
README.md leads somewhere; the README stays a front page. ``mkdocs build --strict`` (in
``make test``) checks the site's own links and navigation."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PICTURE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)|<img[^>]*\bsrc=\"([^\"]+)\"")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
PNG = b"\x89PNG\r\n\x1a\n"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def pictures() -> dict[Path, list[str]]:
    """Each picture a page shows, by path, with the pages showing it."""
    shown: dict[Path, list[str]] = {}
    for page in pages():
        for match in PICTURE.finditer(page.read_text()):
            target = match[1] or match[2]
            if "://" not in target:
                path = (page.parent / target).resolve()
                shown.setdefault(path, []).append(str(page.relative_to(ROOT)))
    return shown


def made_by_the_script() -> set[Path]:
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" /
                                                  "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {module.IMAGES / f"{name}-{theme}{suffix}.png"
            for name, (_path, themes, widths) in module.PAGES.items()
            for theme in themes for suffix in widths}


def test_every_picture_shown_exists_is_a_png_and_is_made_by_the_script():
    shown = pictures()
    assert (ROOT / "docs/images/history-light.png") in shown        # README's first picture
    missing = sorted(f"{path.relative_to(ROOT)} (in {', '.join(where)})"
                     for path, where in shown.items() if not path.is_file())
    assert missing == []
    assert [str(p) for p in shown if p.read_bytes()[:8] != PNG] == []
    assert sorted(str(p.relative_to(ROOT)) for p in set(shown) - made_by_the_script()) == []


def test_the_pictures_stay_small():
    sizes = {path.name: path.stat().st_size for path in (DOCS / "images").glob("*.png")}
    assert sizes and sum(sizes.values()) < 3 * 1024 ** 2
    assert [name for name, size in sizes.items() if size > 400 * 1024] == []


def test_readme_links_lead_somewhere_and_it_stays_a_front_page():
    text = (ROOT / "README.md").read_text()
    broken = []
    for target in LINK.findall(text):
        path = target.split("#")[0]
        if "://" in target or not path:
            continue
        if not (ROOT / path).exists():
            broken.append(target)
    assert broken == []
    assert len(text.splitlines()) <= 250


def test_no_issue_number_or_commit_in_the_docs():
    """How a figure got where it is belongs in the git log, not in the docs."""
    found = [f"{page.relative_to(ROOT)}: {match[0]}" for page in (*pages(),
                                                                  ROOT / "ARCHITECTURE.md")
             for match in re.finditer(r"\bissue \d+|`[0-9a-f]{7,40}`", page.read_text())]
    assert found == []


def test_the_configuration_page_lists_every_setting_from_its_table():
    from dashboard.settings import SETTINGS

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts" /
                                                  "docs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (DOCS / "configuration.md").read_text()
    table = hooks.on_page_markdown(page, None, None, None)
    assert hooks.MARKER in page and hooks.MARKER not in table
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [setting.name for setting in SETTINGS]
    assert all(f"`{setting.env}`" in table for setting in SETTINGS)
