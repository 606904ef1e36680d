"""Who may read what: the users who sign in to the dashboard (``users``), their
passwords (``passwords``, argon2id), the key their session cookies are signed with
(``signing``) and the API keys (``keys``), all kept in the store so every worker and
every restart agree."""

from .passwords import MAX_PASSWORD, MIN_PASSWORD, check_password
from .signing import signing_key
from .users import (
    ROLES,
    User,
    UserError,
    add_user,
    any_users,
    authenticate,
    bump_epoch,
    find_user,
    list_users,
    remove_user,
    set_password,
    set_user,
)

__all__ = ["MAX_PASSWORD", "MIN_PASSWORD", "ROLES", "User", "UserError", "add_user",
           "any_users", "authenticate", "bump_epoch", "check_password", "find_user",
           "list_users", "remove_user", "set_password", "set_user", "signing_key"]
