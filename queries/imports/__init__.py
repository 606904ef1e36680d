"""Imported days: Plausible's CSV layout read from a ZIP (``archive``), kept per site and
day in ``imported.daily`` (``store``), and added to the day and longer figures
(``reads``). Nothing here counts hits: imported days are other tools' daily totals."""
