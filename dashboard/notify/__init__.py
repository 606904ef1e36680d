"""Notifications in the server: the scheduler's thread (``job``), what the due work is
handed (``context``), the report's chart drawn by Kaleido (``chart``)."""

from .job import notify_job, register_notify

__all__ = ["notify_job", "register_notify"]
