"""Users for tests: a cheap argon2 hasher (the parameters travel in each hash, so
verifying stays exact), users added to an app's store, a client signed in as one."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher

PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch):
    from queries.accounts import passwords

    monkeypatch.setattr(passwords, "HASHER",
                        PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))


def add_users(server, *users: tuple[str, str, list[str] | None]) -> None:
    """``users``: (name, role, sites) each, with the password :data:`PASSWORD`."""
    from dashboard.services import get_services
    from queries import accounts

    for name, role, sites in users:
        accounts.add_user(get_services(server).db, name, role, PASSWORD, sites)


def sign_in_as(client, name: str, password: str = PASSWORD, **extra):
    """``client`` after posting the sign-in page's JSON; the response is on
    ``client.signin``."""
    client.signin = client.post("/signin", json={"name": name, "password": password,
                                                 **extra})
    return client
