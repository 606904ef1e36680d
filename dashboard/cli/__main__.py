"""``python -m dashboard.cli``: the ``hitboard`` command without its console script."""

from . import main

main(prog_name="hitboard")
