"""Opening the store's SQLite file, and refusing what is not a hitboard store: a file that
is not SQLite, another program's database in the store's place, a store that cannot be
written when writing was asked. Each is one error (the CLI prints it as a line and exits
2), never a traceback; a file refused is left byte for byte as it was, since it is
looked at through a read-only connection before anything is written.

A store is recognised by its marker table (``catalog.MARKER``), or, made before the
marker, by its catalog (``hb_collections`` and ``hb_meta``): the first writable open
gives it the marker. A read-only store (a read-only mount, a copy on a medium nobody
writes) is opened with SQLite's ``mode=ro``, and ``immutable=1`` on a read-only file
system, where SQLite cannot make the WAL's shared-memory file.
"""

from __future__ import annotations

import os
import sqlite3
from enum import Enum
from pathlib import Path
from urllib.parse import quote

from ...errors import InvalidStoreError, StoreReadOnlyError
from .catalog import MARKER

HEADER = b"SQLite format 3\x00"
CATALOG_TABLES = {"hb_collections", "hb_meta"}


class Kind(Enum):
    NEW = "new"                 # no file, an empty one, or a database without tables
    HITBOARD = "hitboard"       # holds the marker
    UNMARKED = "unmarked"       # a hitboard store of the layout before the marker


def kind(path: Path) -> Kind:
    """What the file at ``path`` is; ``InvalidStoreError`` when it is not hitboard's."""
    if not _sqlite_file(path):
        return Kind.NEW
    con = sqlite3.connect(uri(path, read_only=True), uri=True)
    try:
        tables = {name for (name,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise InvalidStoreError(f"{path} cannot be read as a SQLite database ({exc}): "
                                "it is left as it is") from None
    finally:
        con.close()
    if MARKER in tables:
        return Kind.HITBOARD
    if tables >= CATALOG_TABLES:
        return Kind.UNMARKED
    if not tables:
        return Kind.NEW
    shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
    raise InvalidStoreError(f"{path} is another program's SQLite database (tables {shown}), "
                            "not a hitboard store: hitboard leaves it as it is; give another "
                            "directory")


def _sqlite_file(path: Path) -> bool:
    """Whether ``path`` holds a SQLite database (False: no file, or an empty one)."""
    try:
        with path.open("rb") as file:
            head = file.read(len(HEADER))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise InvalidStoreError(f"cannot read {path}: {exc.strerror}") from None
    if head and head != HEADER:
        raise InvalidStoreError(f"{path} is not a SQLite database, so not a hitboard store: "
                                "hitboard leaves it as it is; give another directory")
    return bool(head)


def uri(path: Path, read_only: bool) -> str:
    """The URI to open ``path`` with: read-write, or read-only (immutable on a read-only
    file system)."""
    if not read_only:
        return f"file:{quote(str(path))}"
    immutable = "&immutable=1" if read_only_medium(path.parent) else ""
    return f"file:{quote(str(path))}?mode=ro{immutable}"


def read_only_medium(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def check_writable(directory: Path, path: Path, found: Kind) -> None:
    """``StoreReadOnlyError`` when this process may not write the store (a read-only
    mount or permissions), before SQLite fails midway."""
    targets = [directory] + ([path] if path.exists() else [])
    for target in targets:
        if not os.access(target, os.W_OK):
            reason = ("a read-only file system" if read_only_medium(directory)
                      else "no permission to write it")
            if found is Kind.NEW:
                raise InvalidStoreError(f"there is no hitboard store in {directory}, and "
                                        f"none can be made there ({reason})")
            raise StoreReadOnlyError(
                f"the store {directory} cannot be written ({reason}): open it read-only "
                "(hitboard serve --readonly), or give a writable directory")
