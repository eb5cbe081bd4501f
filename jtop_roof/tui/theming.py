"""The monitor's themes on its Textual app: ours and the user's registered, the order the theme key
cycles them in, a theme that cannot be used replaced by the default (and said), and our colour
variables for a theme that does not set them."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, InvalidThemeError

from jtop_roof.tui.keys import next_in_cycle
from jtop_roof.tui.themes import BUILTIN_THEME_NAMES, monitor_themes, theme_variable_defaults, user_theme_dir


class ThemedApp(App[int]):
    """An app with jroof's themes; the monitor builds on it."""

    def __init__(self, user_themes: Path | None = None) -> None:
        """``user_themes``: folder of user theme files (default: the config dir's ``themes/``)."""
        super().__init__()
        themes = monitor_themes(user_theme_dir() if user_themes is None else user_themes)
        for theme in themes.themes:
            self.register_theme(theme)
        self._theme_cycle = list(themes.cycle)
        #: Why themes could not be used, one line each, for the user once the screen is up.
        self.theme_failures = list(themes.failures)

    def use_theme(self, name: str) -> None:
        """Show ``name``, else the default theme (saying why in ``theme_failures``)."""
        try:
            self.theme = name
        except InvalidThemeError:
            fallback = BUILTIN_THEME_NAMES[0]
            self.theme_failures.append(f"theme {name!r} is not available; using {fallback}")
            self.theme = fallback

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_variable_defaults(self.current_theme.to_color_system().generate())

    def action_cycle_theme(self) -> None:
        self.theme = next_in_cycle(self._theme_cycle, self.theme)

    def action_cycle_theme_unlisted(self) -> None:
        self.action_cycle_theme()
