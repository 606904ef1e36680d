"""Who may read the Stats API, and which site: any principal that has signed in (an
API key, the admin secret, a session), for the sites it sees; a key spends one of its
hour's requests each time. A key or viewer asking for another site is refused with 403
without learning whether that site exists."""

from __future__ import annotations

import logging

from pymongo.errors import PyMongoError

from queries.accounts import keys
from queries.errors import HitboardError

from .keys import spent

# the request's identity as principal.py made it (one check, one failure counted)
from .principal import Refusal, _identity, _throttled

log = logging.getLogger(__name__)


def api_refusal() -> Refusal | None:
    """None when the request carries a credential that holds, else why not."""
    identity = _identity()
    if identity.failure == "throttled":
        return _throttled(identity.retry_after)
    if identity.failure == "unchecked":
        return Refusal(503, "The API key cannot be checked now (the store cannot be read): "
                            "try again.")
    if identity.failure == "wrong":
        return Refusal(401, "The API key or admin token is wrong, or the key was revoked.")
    if not identity.principal.via:
        return Refusal(401, "Send an API key: Authorization: Bearer hbk_... (an admin "
                            "makes one with `hitboard api-key create --name NAME`).")
    return None


def site_refusal(site: str) -> Refusal | None:
    """None when the request's principal reads ``site`` (one of its key's requests is
    then spent), else why not."""
    principal = _identity().principal
    if not principal.sees(site):
        return Refusal(403, "This key may not read that site.")
    try:
        wait = spent()
    except (HitboardError, PyMongoError) as exc:      # a read-only store: no count
        log.warning("API key's requests not counted: %s", exc)
        return None
    if wait:
        return Refusal(429, f"This key made its {keys.HOURLY_LIMIT} requests of this hour: try "
                            f"again in {-(-wait // 60)} minutes.", wait)
    return None
