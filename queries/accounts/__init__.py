"""Who may read what: accounts and their credentials (API keys in ``keys``)."""
