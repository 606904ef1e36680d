"""MkDocs hook: the Configuration page's table made from ``dashboard/settings.py``'s
``SETTINGS`` at build time, so the page cannot drift from the code (``mkdocs.yml``)."""

from __future__ import annotations

MARKER = "<!-- settings-table -->"


def settings_table() -> str:
    """One row per setting: name, environment variable, default, meaning."""
    from dashboard.settings import describe

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    rows = ["| setting | variable | default | meaning |", "|---|---|---|---|"]
    rows += [f"| `{name}` | `{env}` | {f'`{default}`' if default else 'unset'} | {cell(text)} |"
             for name, env, default, text in describe()]
    return "\n".join(rows)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return markdown.replace(MARKER, settings_table()) if MARKER in markdown else markdown
