"""Authority: who may change the server's state, and from where.

Reading the dashboard and the ``/hit`` beacon are open. Every state change (driving the
load generator, running the rollups, adding notes; from a page or an API) is a function
decorated with :func:`requires`, which asks :func:`who` whether the current principal
``can`` do it. A browser signs in with the link ``hitboard serve`` prints (a session
cookie), a script sends the admin secret as a bearer token, ``open_admin`` lets everyone
in. Writes must be JSON and same-origin (``origin``); failed sign-ins are throttled per
client address (``throttle``).
"""

from .guard import requires
from .principal import ACTIONS, Principal, Refusal, refusal, who
from .routes import register_authority

__all__ = ["ACTIONS", "Principal", "Refusal", "refusal", "register_authority", "requires",
           "who"]
