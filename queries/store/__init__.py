"""Where documents live: the connection (MongoDB or the embedded store), the embedded SQLite
engine, and how a query is answered (explain)."""
