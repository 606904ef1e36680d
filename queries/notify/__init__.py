"""Notifications: alerts (and, with w48mail, email reports) delivered by email or
webhook, each send claimed once."""
