"""The layout's rules, checked on the source: no import circle (lazy imports included),
each layer imports only what ARCHITECTURE.md allows, only ``dashboard/settings.py`` reads
the environment, and no test reads the wall clock unpinned (tests/wallclock.py)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import mapkit
import pytest
from wallclock import check, scan

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dashboard", "components", "queries")
SETTINGS_MODULE = "dashboard.settings"


@cache
def modules() -> dict[str, Path]:
    """Every first-party module by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(), filename=str(modules()[name]))


def imported(name: str) -> set[str]:
    """Every absolute name ``name`` imports, at any depth of its code: ``from p import
    m`` names the module ``p.m`` when there is one, else ``p`` (a name defined there)."""
    package = name if modules()[name].name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                full = f"{base}.{alias.name}"
                names.add(full if full in modules() else base)
    return names


def first_party(name: str) -> str | None:
    """The module a dotted name falls in, or None outside the three packages."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def graph() -> dict[str, set[str]]:
    return {name: {target for target in map(first_party, imported(name))
                   if target and target != name}
            for name in modules()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_even_through_lazy_imports():
    assert cycles(graph()) == []


def folder(name: str) -> str | None:
    """The folder of ``queries/`` a module is in (``queries.stats.schema``:
    ``queries.stats``), a top-level module itself; None for the package's own facade."""
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "queries" and len(parts) > 1 else None


def dashboard_folder(name: str) -> str | None:
    """The same for ``dashboard/``, where each page's folder counts on its own
    (``dashboard.pages.history.view``: ``dashboard.pages.history``)."""
    parts = name.split(".")
    if parts[0] != "dashboard" or len(parts) < 2:
        return None
    return ".".join(parts[:3] if parts[1] == "pages" and len(parts) > 2 else parts[:2])


def folder_edges(of) -> dict[str, set[str]]:
    """Folder to folder imports, by the folder function ``of``."""
    edges: dict[str, set[str]] = {}
    for name, targets in graph().items():
        if of(name) is not None:
            edges.setdefault(of(name), set()).update(
                of(t) for t in targets if of(t) not in (None, of(name)))
    for targets in list(edges.values()):
        for target in targets:
            edges.setdefault(target, set())
    return edges


def test_the_folders_of_queries_make_layers_without_a_circle():
    """Folder to folder, not only module to module: ``stats`` is the ground that events,
    dimensions and rollups stand on, and nothing below imports what stands on it."""
    edges = folder_edges(folder)
    assert cycles(edges) == []
    assert "queries.stats" in edges and edges["queries.stats"] <= {
        "queries.bulk", "queries.errors", "queries.quarantine", "queries.validation"}


def test_the_folders_of_dashboard_make_layers_without_a_circle():
    """Pages, routes, the front door, authority, the CLI and the shared modules import
    each other one way only."""
    edges = folder_edges(dashboard_folder)
    assert "dashboard.pages.history" in edges and "dashboard.routes" in edges
    assert cycles(edges) == []


@pytest.mark.parametrize(("layer", "forbidden"), [
    ("queries", ("dash", "plotly", "components", "dashboard", "flask")),
    ("components", ("pymongo", "bson", "queries", "dashboard")),
])
def test_each_layer_imports_only_what_the_design_allows(layer, forbidden):
    wrong = sorted(f"{name} imports {target}" for name in modules() if name.startswith(layer)
                   for target in imported(name)
                   if target.split(".")[0] in forbidden)
    assert wrong == []


def _environment_reads(name: str) -> list[str]:
    reads = []
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
            reads.append(f"{name}:{node.lineno} {node.attr}")
        elif isinstance(node, ast.keyword) and node.arg in ("envvar", "auto_envvar_prefix"):
            reads.append(f"{name}:{node.lineno} click {node.arg}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            reads.extend(f"{name}:{node.lineno} from os import {alias.name}"
                         for alias in node.names if alias.name in ("environ", "getenv"))
    return reads


def test_only_the_settings_module_reads_the_environment():
    reads = [read for name in sorted(modules()) if name != SETTINGS_MODULE
             for read in _environment_reads(name)]
    assert reads == []
    assert _environment_reads(SETTINGS_MODULE)  # the check sees what it looks for


def test_a_page_folder_is_imported_by_its_own_modules_only():
    """A page's modules import the shared ``dashboard`` modules, never another page's;
    nothing outside ``dashboard/pages/`` imports a page (only Dash loads them)."""
    def page_of(name: str) -> str | None:
        parts = name.split(".")
        return parts[2] if parts[:2] == ["dashboard", "pages"] and len(parts) > 2 else None

    wrong = sorted(f"{name} imports {target}" for name, targets in graph().items()
                   for target in targets
                   if page_of(target) is not None and page_of(target) != page_of(name))
    assert wrong == []
    assert {page_of(name) for name in modules()} >= {"history", "live", "present", "sites"}


# The folders that hold a representation; which of them answers a chart is queries/reads/'s
# choice. A charting page may import from them only what reads nothing:
REPRESENTATIONS = ("stats", "dimensions", "events", "visits", "rollups", "custom")
READ_NOTHING = {
    "queries.dimensions.encoding",   # dimension names and value limits
    "queries.stats.series",          # bucket_edges: where a zone's buckets start
}
# What a charting page may take from ``import queries``: the registry, errors, the store.
QUERIES_ATTRIBUTES = {"HitboardError", "is_embedded", "list_sites", "redact", "site_span"}
CHARTING_PAGES = ("history", "live", "present", "data", "sources")


def test_charting_pages_get_their_representation_from_queries_reads():
    """History, Live, the presenter, the Data page and Sources read through
    ``queries/reads/`` (and the cache): none imports a representation's module or calls
    ``queries.<a read>``, so none chooses which representation answers it."""
    pages = [name for name in modules() if name.split(".")[:3] in
             (["dashboard", "pages", page] for page in CHARTING_PAGES)]
    wrong = sorted(f"{name} imports {target}" for name in pages
                   for target in map(first_party, imported(name))
                   if target and target.split(".")[:2] in
                   (["queries", folder] for folder in REPRESENTATIONS)
                   and target not in READ_NOTHING)
    wrong += sorted(f"{name} calls queries.{node.attr}" for name in pages
                    for node in ast.walk(tree(name))
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "queries" and node.attr not in QUERIES_ATTRIBUTES)
    assert len(pages) > 10 and wrong == []


def test_the_map_names_every_module_by_its_path_and_no_file_that_is_gone():
    """ARCHITECTURE.md is the newcomer's map: each module of the three packages is named
    in its tree where it lives (``reads/live.py`` under ``reads/``; the word "live", or a
    ``live.py`` elsewhere, does not name it), and each file it names exists: in the tree
    by path, elsewhere in the text by path from the root or a package, else by name."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    assert mapkit.unnamed(text, ROOT, PACKAGES) == []
    _named, gone = mapkit.read_map(text, ROOT)
    assert gone == []
    present = {path.name for folder in (*PACKAGES, "assets", "tests", "bench", "scripts")
               for path in (ROOT / folder).rglob("*")}
    bases = [ROOT, *(ROOT / package for package in PACKAGES)]
    missing = sorted(name for name in set(mapkit.FILE.findall(text))
                     if ("/" in name and not any((base / name).is_file() for base in bases))
                     or ("/" not in name and name not in present))
    assert missing == []


def _defines(name: str) -> set[str]:
    """The names a module defines or imports at its top level."""
    found = set()
    for node in tree(name).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for target in targets for t in ast.walk(target)
                     if isinstance(t, ast.Name)}
            found |= names
            if "__all__" in names and node.value is not None:     # lazy exports too
                found.update(c.value for c in ast.walk(node.value)
                             if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return found


DOTTED = re.compile(r"``((?:queries|dashboard|components)(?:\.\w+)+)``")
SLASHED = re.compile(r"(?<![\w/.])((?:\w+/)+\w+\.(?:py|js|css))\b")


def test_every_module_a_docstring_or_comment_names_exists():
    """A module's text that names another (``queries.stats.counts``, ``stats/counts.py``,
    ``queries.store.connection.atomic``) names one that exists: a module moved or renamed
    leaves no reference behind."""
    bases = [ROOT, *(ROOT / package for package in PACKAGES)]
    wrong = []
    for name, path in sorted(modules().items()):
        text = path.read_text()
        for dotted in sorted(set(DOTTED.findall(text))):
            parts = dotted.split(".")
            owner = next((".".join(parts[:i]) for i in range(len(parts), 0, -1)
                          if ".".join(parts[:i]) in modules()), None)
            rest = parts[len(owner.split(".")):] if owner else parts
            if owner is None or (rest and rest[0] not in _defines(owner)):
                wrong.append(f"{name}: {dotted}")
        for slashed in sorted(set(SLASHED.findall(text))):
            places = [*bases, *(parent for parent in path.parents if ROOT in parent.parents)]
            if not any((place / slashed).is_file() for place in places):
                wrong.append(f"{name}: {slashed}")
    assert wrong == []


SMALL_MAP = """## The folders

```
pkg/                     every read
  reads/                 reads across representations
    history.py           History's read door
  dimensions/            who the traffic is (counters.py; live.py the recent window)
                         and the word live
```
"""


def test_the_map_is_read_by_path_not_by_word(tmp_path):
    for path in ("pkg/reads/history.py", "pkg/reads/live.py", "pkg/dimensions/counters.py",
                 "pkg/dimensions/live.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    assert mapkit.unnamed(SMALL_MAP, tmp_path, ("pkg",)) == ["pkg/reads/live.py"]
    text = SMALL_MAP.replace("    history.py ", "    history.py live.py")
    assert mapkit.unnamed(text, tmp_path, ("pkg",)) == []
    _named, gone = mapkit.read_map(SMALL_MAP.replace("counters.py", "tally.py"), tmp_path)
    assert gone == ["tally.py"]


def test_no_test_reads_the_wall_clock_outside_a_frozen_clock():
    """Each read of ``datetime.now`` & co. under tests/ is pinned (``frozen_clock``,
    time-machine) or takes its instant as an argument: a test passes at any hour."""
    assert scan(ROOT / "tests") == []


PINNED_TEST = """
import datetime as dt
import pytest

def yesterday(): return dt.datetime.now(dt.UTC) - dt.timedelta(days=1)

def test_pinned(frozen_clock): assert yesterday() < dt.datetime.now(dt.UTC)
"""


@pytest.mark.parametrize(("source", "found"), [
    (PINNED_TEST, []),
    (PINNED_TEST + "def test_unpinned(): yesterday()\n", ["t/test_a.py:5: datetime.datetime.now"]),
    (PINNED_TEST + "DAY = yesterday()\n", ["t/test_a.py:5: datetime.datetime.now"]),
    ("from datetime import datetime\ndef test_a():\n    datetime.now()\n",
     ["t/test_a.py:3: datetime.datetime.now"]),
    ("from time import time\nSTART = time()\n", ["t/test_a.py:2: time.time"]),
    ("import pandas as pd\ndef test_a(): pd.Timestamp('now'), pd.Timestamp.utcnow()\n",
     ["t/test_a.py:2: pandas.Timestamp", "t/test_a.py:2: pandas.Timestamp.utcnow"]),
    ("import time\ndef test_a(): time.strftime('%H'), time.strftime('%H', time.gmtime(0))\n",
     ["t/test_a.py:2: time.strftime"]),
    ("import time\ndef test_a(): time.monotonic(), time.perf_counter(), time.sleep(0)\n", []),
    ("import datetime as dt\nimport pytest\n"
     "pytestmark = pytest.mark.usefixtures('frozen_clock')\n"
     "def test_a(now=dt.datetime.now()): Writer(clock=dt.date.today)\n",
     ["t/test_a.py:4: datetime.datetime.now"]),
    ("import datetime as dt\nimport pytest\nimport time_machine\n"
     "@pytest.fixture\ndef clock():\n    with time_machine.travel(0):\n        yield\n"
     "@pytest.fixture\ndef app(clock): return dt.datetime.now()\n"
     "@pytest.fixture(autouse=True)\ndef early(): dt.date.today()\n"
     "def test_a(app):\n    with time_machine.travel(0): dt.date.today()\n",
     ["t/test_a.py:11: datetime.date.today"]),
])
def test_the_clock_rule_finds_each_unpinned_read(source, found):
    assert check({"t/conftest.py": "", "t/test_a.py": source}) == found


def test_a_helper_another_file_imports_must_take_its_instant():
    """Pinned where it is used is not enough when another file's tests call it too."""
    files = {"t/test_a.py": PINNED_TEST, "t/test_b.py": "from test_a import yesterday\n"}
    assert check(files) == ["t/test_a.py:5: datetime.datetime.now"]
    conftest = "import pytest\n@pytest.fixture\ndef pinned(frozen_clock): pass\n"
    using = PINNED_TEST.replace("frozen_clock", "pinned")
    assert check({"t/conftest.py": conftest, "t/test_a.py": using}) == []
