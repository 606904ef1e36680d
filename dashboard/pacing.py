"""A page's refresh timer that waits for the page's answers.

Dash's renderer drops the answer of a callback still running when the same callback is
asked again (plotly/dash#941): a page refreshed every 2 s by a server taking longer than
2 s (a busy machine, a big store) would never draw anything again. A :class:`Pacer`
stands between the ``dcc.Interval`` and the callbacks it drives: its tick moves only
when none of them is running (each reports it through Dash's ``running``), so a slow
server shows every answer, late, instead of none.

The flags live in the shell (:func:`flag_stores`), not on the page: a callback still
running when the viewer moves to another page lowers its flag as it ends, and Dash
reports an error for a ``running`` output whose component is gone.
"""

from __future__ import annotations

from dash import Input, Output, State, clientside_callback, dcc

# The interval's count, unless one of the paced callbacks is still running.
GATE = """function (n) {
    const busy = Array.prototype.slice.call(arguments, 1);
    return busy.some(Boolean) ? window.dash_clientside.no_update : n;
}"""


# By interval id: Dash pages runs a page.py again for each app it builds.
_PACERS: dict[str, Pacer] = {}


def flag_stores() -> list[dcc.Store]:
    """Every pacer's flags, for the shell's layout (see the module doc)."""
    return [dcc.Store(id=pacer.busy_id(job), data=False)
            for pacer in _PACERS.values() for job in pacer.jobs]


class Pacer:
    """The timer ``interval_id`` paced for the callbacks named ``jobs``: they take
    :attr:`tick` as their input and ``running=pacer.running(job)``."""

    def __init__(self, interval_id: str, jobs: tuple[str, ...]):
        self.interval_id = interval_id
        self.tick_id = f"{interval_id}-tick"
        self.jobs = jobs
        _PACERS[interval_id] = self

    def busy_id(self, job: str) -> str:
        return f"{self.interval_id}-busy-{job}"

    def stores(self) -> list[dcc.Store]:
        """The tick, for the page's layout beside the interval."""
        return [dcc.Store(id=self.tick_id, data=0)]

    @property
    def tick(self) -> Input:
        return Input(self.tick_id, "data")

    def running(self, job: str) -> list[tuple]:
        """``running=`` of the callback doing ``job``: its flag is up while it runs."""
        if job not in self.jobs:
            raise ValueError(f"{job!r} is not one of {self.jobs}")
        return [(Output(self.busy_id(job), "data"), True, False)]

    def register(self) -> None:
        """Declare the gate (clientside: no round trip per tick)."""
        clientside_callback(GATE, Output(self.tick_id, "data"),
                            Input(self.interval_id, "n_intervals"),
                            *(State(self.busy_id(job), "data") for job in self.jobs))
