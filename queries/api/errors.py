"""The Stats API's refusals: a 400 naming what is wrong (Plausible's words where it
has them), or a 404 for a site nobody registered."""

from ..errors import HitboardError


class QueryError(HitboardError):
    """The question is malformed or asks for what hitboard cannot count: 400."""


class UnknownSiteError(QueryError):
    """No such site (asked by someone who may read every site): 400 as well."""
