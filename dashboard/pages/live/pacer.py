"""Live's refresh timer, paced for its four server callbacks (see dashboard.pacing)."""

from dashboard.pacing import Pacer

PACER = Pacer("live-interval", ("chart", "people", "recent", "banner"))
