"""Visits: a visitor's pageviews on a site with no gap over its timeout, cut from the
raw events (``build``), stored per site and UTC day by quarter hour (``store``) and read
as series, totals and entry and exit pages (``reads``)."""
