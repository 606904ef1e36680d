"""Passwords, hashed with argon2id (argon2-cffi's defaults: RFC 9106's low-memory
choice). The only rule is the length: 10 to 1,024 characters."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from queries.errors import HitboardError

MIN_PASSWORD = 10
MAX_PASSWORD = 1024
# Tests swap in a cheaper hasher (tests/accountkit.py): the parameters travel in each hash.
HASHER = PasswordHasher()
# Verified when a name is unknown, so a missing name costs the time a wrong password does.
_DUMMY: list[str] = []


def check_password(password: object) -> str:
    """``password`` when it is acceptable, else a HitboardError saying why."""
    if not isinstance(password, str):
        raise HitboardError("a password is text")
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise HitboardError(f"a password has {MIN_PASSWORD} to {MAX_PASSWORD:,} characters "
                            f"(this one has {len(password):,})")
    return password


def hash_password(password: str) -> str:
    return HASHER.hash(check_password(password))


def verify(stored: str | None, password: object) -> bool:
    """Whether ``password`` matches the hash ``stored``; with no hash, a dummy one is
    checked (and False returned) so the answer takes as long."""
    if not isinstance(password, str) or len(password) > MAX_PASSWORD:
        password = ""
    if stored is None:
        if not _DUMMY or not _DUMMY[0].startswith(_prefix()):
            _DUMMY[:] = [HASHER.hash("not a password of anyone's")]
        stored, password = _DUMMY[0], password + "\0"
    try:
        return HASHER.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def _prefix() -> str:
    return f"$argon2id$v=19$m={HASHER.memory_cost},t={HASHER.time_cost}"
