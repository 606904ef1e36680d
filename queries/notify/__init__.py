"""Notifications: email reports and alerts delivered by email or webhook, each send claimed
once in the store (``deliveries``), the due work run by one scheduler (``jobs``)."""
