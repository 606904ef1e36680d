"""What the Sites page's forms share: whether a button was really clicked, and a refusal
shown under the form that was."""

from __future__ import annotations

from dash import ctx, no_update

from components import message


def clicked() -> bool:
    """Whether a button was clicked (or Enter pressed): remove buttons drawn anew fire
    their callback too, with no click, which must neither change nor refuse anything."""
    return any(trigger["value"] for trigger in ctx.triggered)


def refused(reason: str):
    """A form's (status, field) answer to a refused change: the reason, on a click only."""
    return (message(reason, "warning") if clicked() else no_update), no_update
