"""CSV a spreadsheet opens as data: a cell starting with ``=``, ``+``, ``-`` or ``@`` (or
a tab or carriage return, which some strip before reading one of those) is a formula to
Excel, LibreOffice and Google Sheets, and page names, referrers and notes come from
strangers (``=HYPERLINK("https://evil.example", "click")``). Such a text cell, header
included, gets a leading ``'``, which spreadsheets read as "this is text" (OWASP's advice
for CSV injection). Numbers are left alone: a negative count is a number, not a formula.
"""

from __future__ import annotations

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value):
    """``value`` as a spreadsheet reads it as text: a string that starts like a formula
    gets a leading ``'``; anything else is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def frame_csv(frame) -> str:
    """A pandas DataFrame's CSV (without its index), every text cell and header made safe."""
    safe = frame.rename(columns=cell)
    for column in safe.select_dtypes(include=["object", "string"]).columns:
        safe[column] = safe[column].map(cell)
    return safe.to_csv(index=False)
