"""Finds the tests' reads of the wall clock that no frozen clock pins (the rule of
tests/test_architecture.py): a test reading ``datetime.now`` unpinned passes at noon and
fails at midnight, on a Sunday, or on the day the clocks change.

A read is pinned where time-machine holds the clock: in a test or fixture that requests
``frozen_clock`` (as an argument, through ``usefixtures`` on it, its class or its module's
``pytestmark``, or through a fixture that requests it), under ``@time_machine.travel`` or
in a ``with time_machine.travel(...)`` block, in a function nested there, or in a helper of
the same file that is used only from such places and imported by no other file. Anything
else (a helper of a ``*kit.py``, code run at import) takes its instant as an argument.
Monotonic timers (``time.monotonic``, ``time.perf_counter``) are not the wall clock.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path, PurePath

FIXTURE = "frozen_clock"
TRAVEL = "time_machine.travel"
# Read the clock however they are called; a reference passed as a clock reads it later.
CLOCKS = frozenset({
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
    "datetime.date.today", "time.time", "time.time_ns",
    "pandas.Timestamp.now", "pandas.Timestamp.utcnow", "pandas.Timestamp.today",
})
# Read it when called without the instant they would otherwise format or convert.
CLOCKS_WITHOUT_ARGUMENT = {"time.localtime": 1, "time.gmtime": 1, "time.ctime": 1,
                           "time.asctime": 1, "time.strftime": 2}
# Read it when given the word "now" or "today".
CLOCKS_BY_WORD = frozenset({"pandas.Timestamp", "pandas.to_datetime", "numpy.datetime64"})


@dataclass
class Source:
    """One file's parse, with what the rule needs to know of it."""

    path: str
    tree: ast.Module
    aliases: dict[str, str] = field(default_factory=dict)
    fixtures: dict[str, ast.FunctionDef] = field(default_factory=dict)
    travelling: set[str] = field(default_factory=set)     # fixtures yielding in a travel


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name to dotted origin for every import at any depth (``dt``: ``datetime``)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The imported origin an expression names (``dt.datetime.now``:
    ``datetime.datetime.now``), None for anything not reached from an import."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _requests_fixture(call: ast.expr, name: str) -> bool:
    """Whether an expression holds ``pytest.mark.usefixtures(..., name, ...)``."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "usefixtures"
               and any(isinstance(arg, ast.Constant) and arg.value == name
                       for arg in node.args)
               for node in ast.walk(call))


def _fixture_call(function: ast.FunctionDef) -> ast.expr | None:
    """The ``pytest.fixture`` decorator of a function, None if it is no fixture."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "fixture" or (
                isinstance(target, ast.Name) and target.id == "fixture"):
            return decorator
    return None


def _fixture_name(function: ast.FunctionDef, decorator: ast.expr) -> str:
    if isinstance(decorator, ast.Call):
        for keyword in decorator.keywords:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return keyword.value.value
    return function.name


def _keyword(decorator: ast.expr, name: str):
    if isinstance(decorator, ast.Call):
        for keyword in decorator.keywords:
            if keyword.arg == name and isinstance(keyword.value, ast.Constant):
                return keyword.value.value
    return None


def _pytestmark(body: list[ast.stmt], fixtures: set[str]) -> bool:
    return any(isinstance(stmt, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets)
               and any(_requests_fixture(stmt.value, name) for name in fixtures)
               for stmt in body)


def parse(path: str, text: str) -> Source:
    tree = ast.parse(text, filename=path)
    source = Source(path, tree, _aliases(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            decorator = _fixture_call(node)
            if decorator is not None:
                source.fixtures[_fixture_name(node, decorator)] = node
                if _travels_around_yield(node, source.aliases):
                    source.travelling.add(_fixture_name(node, decorator))
    return source


def _travels_around_yield(function: ast.FunctionDef, aliases: dict[str, str]) -> bool:
    """Whether a fixture yields inside ``with time_machine.travel(...)``."""
    return any(isinstance(node, ast.With) and any(
        isinstance(item.context_expr, ast.Call)
        and dotted(item.context_expr.func, aliases) == TRAVEL for item in node.items)
        and any(isinstance(inner, ast.Yield) for inner in ast.walk(node))
        for node in ast.walk(function))


def _close(frozen: set[str], fixtures: dict[str, ast.FunctionDef]) -> None:
    """Adds to ``frozen`` each fixture requesting one of it, at any depth."""
    changed = True
    while changed:
        changed = False
        for name, function in fixtures.items():
            if name not in frozen and _arguments(function) & frozen:
                frozen.add(name)
                changed = True


def _arguments(function: ast.FunctionDef) -> set[str]:
    args = function.args
    return {arg.arg for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs)}


class Rule:
    """The rule over a set of files: ``reads()`` lists each unpinned read as
    ``path:line: name``. ``conftests`` are the files whose fixtures each file sees."""

    def __init__(self, sources: list[Source], conftests: dict[str, list[Source]]):
        self.sources = sources
        self.conftests = conftests
        self.imported = self._imported_elsewhere()

    def _imported_elsewhere(self) -> set[tuple[str, str]]:
        """(module stem, name) for each name a file takes from another test file."""
        found = set()
        for source in self.sources:
            for node in ast.walk(source.tree):
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.update((node.module, alias.name) for alias in node.names)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    origin = source.aliases.get(node.value.id)
                    if origin:
                        found.add((origin, node.attr))
        return found

    def frozen_fixtures(self, source: Source) -> tuple[set[str], bool]:
        """The fixtures this file sees that run under a pinned clock, and whether every
        test of the file does. Pinned: ``frozen_clock``, a fixture yielding inside
        ``time_machine.travel``, one requesting either at any depth, and the
        function-scoped ones of a module whose tests all start pinned (a ``pytestmark``
        or an autouse fixture sets the clock up before them)."""
        visible, frozen = {}, {FIXTURE}
        for seen in (*self.conftests.get(source.path, []), source):
            visible.update(seen.fixtures)
            frozen = (frozen - set(seen.fixtures)) | seen.travelling
        _close(frozen, visible)
        marked = _pytestmark(source.tree.body, frozen) or any(
            _keyword(_fixture_call(function), "autouse") for name, function in visible.items()
            if name in frozen)
        if marked:
            frozen |= {name for name, function in source.fixtures.items()
                       if _keyword(_fixture_call(function), "scope") in (None, "function")
                       and not _keyword(_fixture_call(function), "autouse")}
            _close(frozen, visible)
        return frozen, marked

    def reads(self) -> list[str]:
        found = []
        for source in self.sources:
            found.extend(_FileScan(source, self).offenders())
        return sorted(found)


class _FileScan:
    """One file under the rule: helpers pinned by their uses found by a fixed point
    (every helper taken as pinned, then each with an unpinned use dropped)."""

    def __init__(self, source: Source, rule: Rule):
        self.source = source
        self.fixtures, self.marked = rule.frozen_fixtures(source)
        stem = Path(source.path).stem
        self.helpers = {
            node.name for node in source.tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.name.startswith("test") and _fixture_call(node) is None
            and (stem, node.name) not in rule.imported}

    def offenders(self) -> list[str]:
        pinned = set(self.helpers)
        while True:
            walk = _Walk(self.source, self.fixtures, self.marked, pinned)
            walk.visit(self.source.tree)
            dropped = {name for name in pinned
                       if name not in walk.used_pinned or name in walk.used_unpinned}
            if not dropped:
                return [f"{self.source.path}:{line}: {name}" for line, name in walk.reads]
            pinned -= dropped


class _Walk(ast.NodeVisitor):
    """Visits a file knowing at each node whether the clock is pinned there."""

    def __init__(self, source: Source, fixtures: set[str], marked: bool, helpers: set[str]):
        self.source = source
        self.fixtures = fixtures
        self.marked = marked
        self.helpers = helpers
        self.pinned = False
        self.in_class_frozen = False
        self.depth = 0
        self.reads: list[tuple[int, str]] = []
        self.used_pinned: set[str] = set()
        self.used_unpinned: set[str] = set()

    def _under(self, pinned: bool, nodes) -> None:
        saved, self.pinned = self.pinned, pinned
        for node in nodes:
            self.visit(node)
        self.pinned = saved

    def _function_pinned(self, node) -> bool:
        if self.pinned:
            return True
        if self.depth == 0 and node.name in self.helpers:
            return True
        if any(dotted(d.func if isinstance(d, ast.Call) else d, self.source.aliases) == TRAVEL
               or any(_requests_fixture(d, name) for name in self.fixtures)
               for d in node.decorator_list):
            return True
        decorator = _fixture_call(node)
        if decorator is not None:       # set up after what it requests, or after the mark
            return bool(_arguments(node) & self.fixtures) or (
                self.marked and not _keyword(decorator, "autouse")
                and _keyword(decorator, "scope") in (None, "function"))
        if node.name.startswith("test") and Path(self.source.path).name.startswith("test"):
            return (self.marked or self.in_class_frozen
                    or bool(_arguments(node) & self.fixtures))
        return False

    def visit_FunctionDef(self, node) -> None:
        args = node.args
        self._under(self.pinned, [*node.decorator_list, *args.defaults,
                                  *(d for d in args.kw_defaults if d is not None)])
        pinned = self._function_pinned(node)
        self.depth += 1
        self._under(pinned, node.body)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node) -> None:
        self._under(self.pinned, node.decorator_list)
        saved = self.in_class_frozen
        self.in_class_frozen = node.name.startswith("Test") and (
            _pytestmark(node.body, self.fixtures) or any(
                _requests_fixture(d, name) for d in node.decorator_list for name in self.fixtures))
        self.depth += 1
        self._under(self.pinned, node.body)
        self.depth -= 1
        self.in_class_frozen = saved

    def visit_With(self, node) -> None:
        self._under(self.pinned, node.items)
        travels = any(isinstance(item.context_expr, ast.Call)
                      and dotted(item.context_expr.func, self.source.aliases) == TRAVEL
                      for item in node.items)
        self._under(self.pinned or travels, node.body)

    visit_AsyncWith = visit_With

    def visit_Name(self, node: ast.Name) -> None:
        if not self.pinned and dotted(node, self.source.aliases) in CLOCKS:
            self.reads.append((node.lineno, dotted(node, self.source.aliases)))
        if node.id in self.helpers and isinstance(node.ctx, ast.Load):
            (self.used_pinned if self.pinned else self.used_unpinned).add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = dotted(node, self.source.aliases)
        if name in CLOCKS and not self.pinned:
            self.reads.append((node.lineno, name))
            return
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func, self.source.aliases)
        if not self.pinned and name is not None and name not in CLOCKS and (
                len(node.args) < CLOCKS_WITHOUT_ARGUMENT.get(name, 0)
                or name in CLOCKS_BY_WORD and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in ("now", "today")):
            self.reads.append((node.lineno, name))
        self.generic_visit(node)


def check(files: dict[str, str]) -> list[str]:
    """Every unpinned read in ``files`` (path: source), each file seeing the fixtures of
    the ``conftest.py`` files of its folder and the folders above it."""
    sources = {path: parse(path, text) for path, text in files.items()}
    conftests = sorted((path for path in sources if PurePath(path).name == "conftest.py"),
                       key=lambda path: len(PurePath(path).parts))
    return Rule(list(sources.values()), {
        path: [sources[c] for c in conftests if PurePath(c).parent in PurePath(path).parents]
        for path in sources}).reads()


def scan(root: Path) -> list[str]:
    """Every unpinned read of the wall clock in the ``.py`` files under ``root``."""
    return check({str(path.relative_to(root.parent)): path.read_text()
                  for path in sorted(root.rglob("*.py"))})
