"""Record what ``hitboard ingest`` stores today as the golden fixture (tests/golden/),
which tests/test_ingest_golden.py compares every later ingest with.

Re-record ONLY for an intended change of the stored answers (a counter, a dimension, a
visitor estimate, a raw event, a rollup, a visit: what users read), and say which and
why in the commit. A faster or restructured ingest must match the fixture as it is: if
it does not, the ingest is wrong, not the fixture.

    .venv/bin/python scripts/record_golden.py [CASE ...]            # re-record
    .venv/bin/python scripts/record_golden.py --documents DIR [CASE ...]

``--documents DIR`` records nothing: it writes each case's canonical documents, one a
line, to DIR/CASE.tsv, to read or diff. Run on the commit that recorded the fixture (a
``git worktree``), it shows the documents the long tail's digests stand for.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import time_machine

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from clockkit import TEST_NOW  # noqa: E402
from test_ingest_golden import (  # noqa: E402
    CASES,
    SHARED,
    fixture_path,
    make_longtail,
    stored_answers,
    write_fixture,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help=f"among {', '.join(sorted(CASES))} (default: all)")
    parser.add_argument("--documents", type=Path, metavar="DIR",
                        help="write the canonical documents to DIR instead of recording")
    args = parser.parse_args()
    if set(args.cases) - set(CASES):
        parser.error(f"CASE: choose among {', '.join(sorted(CASES))}")
    with tempfile.TemporaryDirectory() as work, time_machine.travel(TEST_NOW, tick=True):
        folder = Path(work)
        for case in args.cases or sorted(CASES):
            log = SHARED if case == "shared" else make_longtail(folder / CASES[case].log)
            answers = stored_answers(log, CASES[case].site, folder / f"{case}-store", jobs=1)
            if args.documents:
                args.documents.mkdir(parents=True, exist_ok=True)
                path = args.documents / f"{case}.tsv"
                path.write_text("".join(f"{coll}\t{key}\t{doc}\n" for coll in sorted(answers)
                                        for key, doc in sorted(answers[coll].items())))
            else:
                path = fixture_path(case)
                write_fixture(path, answers, CASES[case].full)
            print(f"{case}: {path} ({path.stat().st_size:,} bytes, "
                  f"{sum(map(len, answers.values())):,} documents)")


if __name__ == "__main__":
    main()
