"""Data: the logs ingested, each collection's figures, the chart queries' plans and shard-
key advice (page.py).

Dash loads ``page.py`` itself (it registers the page); the other modules are imported
from it."""
