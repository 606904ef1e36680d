"""Raw request events: the collection (ids, indexes, writer, expiry), the recent-hits feed, and
the small named reads of events that the breakdowns filtered from them
(``reads/filtered.py``) build on."""
