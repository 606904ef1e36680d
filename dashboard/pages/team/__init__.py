"""The /team page: who may use this server (users, API keys)."""
