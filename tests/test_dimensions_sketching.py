"""A recorder's sketches of a month are the union of its days': the visitors per value
and of the whole site over a month are those its days counted, bots apart, and a value
a day sent to (other) but the month kept still counts its visitors in the month."""

from __future__ import annotations

import datetime as dt
import random

from queries.counting import DimensionRecorder
from queries.dimensions import classify, encoding, reads

SITE = "shop.example"
MARCH = (dt.datetime(2026, 3, 1, tzinfo=dt.UTC), dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
CHROME = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0 Safari/537.36")
BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
REFERRERS = ("https://a.example/", "https://b.example/", "https://c.example/", "-")


def _hit(recorder, day: int, hour: int, person: int, referrer: str, bot: bool = False,
         n: int = 1):
    agent = BOT if bot else CHROME
    dims = classify(SITE, "/", referrer_url=referrer, agent=agent,
                    address=f"192.0.2.{person}")
    recorder.record(SITE, "/", dt.datetime(2026, 3, day, hour, tzinfo=dt.UTC), dims, n)
    return (f"192.0.2.{person}", agent)


def _visitors(frame) -> dict[str, int]:
    return dict(zip(frame["value"], frame["visitors"], strict=True))


def test_a_months_visitors_are_the_union_of_its_days_per_value_and_bots_apart(db):
    rng = random.Random(7)
    recorder = DimensionRecorder(db, flush_interval=3600)
    seen: dict[tuple[str, bool], set] = {}
    for _ in range(6):                          # several flushes, each over several days
        for _hit_number in range(120):
            day, bot = rng.choice((2, 3, 9)), rng.random() < 0.2
            referrer = "-" if bot else rng.choice(REFERRERS)
            visitor = _hit(recorder, day, rng.randrange(24), rng.randrange(1, 60), referrer,
                           bot)
            host = "(direct)" if referrer == "-" else referrer.split("/")[2]
            seen.setdefault((host, bot), set()).add(visitor)
        recorder.flush()
    recorder.close()
    humans = {value: len(v) for (value, bot), v in seen.items() if not bot}
    everyone = {value: len(set().union(*(v for (val, _), v in seen.items() if val == value)))
                for value, _ in seen}
    assert _visitors(reads.breakdown(db, SITE, "referrer", *MARCH, humans=True)) == humans
    assert _visitors(reads.breakdown(db, SITE, "referrer", *MARCH)) == everyone
    people = set().union(*(v for (_, bot), v in seen.items() if not bot))
    assert reads.visitors(db, SITE, *MARCH, humans=True).n == len(people)
    assert reads.visitors(db, SITE, *MARCH).n == len(set().union(*seen.values()))


def test_a_value_a_day_sent_to_other_keeps_its_visitors_in_the_month(db, monkeypatch):
    """Day 2's document is full (its cap: two values and (other)) when ``a.example``
    comes back; the month holds ``a.example``, so its visitors of day 2 must reach the
    month's sketch of it, one by one, not the month's (other); and the day's (other),
    which also holds ``e.example``, must not be added to the month's ``a.example``.
    Visitors make 3 hits each: a value's visitors are bounded by its hits."""
    monkeypatch.setitem(encoding.CAPS, "referrer", 3)
    recorder = DimensionRecorder(db, flush_interval=3600)
    _hit(recorder, 1, 10, 1, "https://a.example/", n=3)
    _hit(recorder, 1, 10, 2, "https://b.example/", n=3)
    recorder.flush()
    _hit(recorder, 2, 10, 3, "https://c.example/", n=3)
    _hit(recorder, 2, 10, 4, "https://d.example/", n=3)
    recorder.flush()
    for person in (5, 6, 7):
        _hit(recorder, 2, 11, person, "https://a.example/", n=3)
    _hit(recorder, 2, 11, 8, "https://e.example/", n=3)   # (other) in the day and month
    recorder.close()
    day_two = (dt.datetime(2026, 3, 2, tzinfo=dt.UTC), dt.datetime(2026, 3, 3, tzinfo=dt.UTC))
    assert _visitors(reads.breakdown(db, SITE, "referrer", *day_two)) == {
        "c.example": 1, "d.example": 1, "(other)": 4}
    assert _visitors(reads.breakdown(db, SITE, "referrer", *MARCH)) == {
        "a.example": 4, "b.example": 1, "(other)": 3}
