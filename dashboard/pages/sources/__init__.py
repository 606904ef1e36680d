"""The Sources page: a site's access logs beside its beacon."""
