"""Raw request events: the collection (ids, indexes, writer, expiry), the recent-hits feed, and
breakdowns filtered from events."""
