"""A site's days written in Plausible's CSV layout (``imports.layout``), as a ZIP."""
