"""Colour themes: built-ins shipped as YAML inside the package, user themes from the config dir.

A theme file is a mapping of Textual ``Theme`` fields (``name``, ``dark``, ``primary``,
``background``, ...) plus ``variables``: our own colours (roofs, throttle band, phase markers, plot
lines, level colours) and any Textual variable. Files are read with ``yaml.safe_load``; a file that
cannot be used is reported as ``(path, reason)`` and never stops the monitor. Reading and listing
themes does not import Textual; only ``to_textual_theme`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from jtop_roof.config import config_dir, yaml_error_text

if TYPE_CHECKING:
    from textual.theme import Theme

#: Built-in themes in the order the theme key cycles through them; the first is the default.
BUILTIN_THEME_NAMES = ("jroof-dark", "jroof-light", "jroof-high-contrast", "jroof-mono")
_COLOUR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
                  "background", "surface", "panel", "boost")
_NUMBER_FIELDS = ("luminosity_spread", "text_alpha")
_FIELDS = ("name", "dark", "variables", *_COLOUR_FIELDS, *_NUMBER_FIELDS)
#: Our variables that hold a plain colour (plots need RGB, so no alpha or names of variables here).
PLOT_COLOURS = ("plot-1", "plot-2", "plot-3", "plot-4", "plot-5", "plot-6")


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class ThemeSpec:
    """A theme as read from YAML, before Textual sees it."""

    name: str
    fields: dict[str, Any]
    path: str


def parse_theme(data: Any, path: str, default_name: str) -> ThemeSpec:
    """Check the shape of one theme mapping (colour values are checked by ``to_textual_theme``)."""
    if not isinstance(data, dict):
        raise ThemeError(f"{path}: expected a mapping of theme fields")
    unknown = sorted(str(key) for key in data if key not in _FIELDS)
    if unknown:
        raise ThemeError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(_FIELDS)})")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise ThemeError(f"{path}: 'name' must be a non-empty string")
    if "primary" not in data:
        raise ThemeError(f"{path}: 'primary' colour is required")
    for key in _COLOUR_FIELDS:
        if key in data and not isinstance(data[key], str):
            raise ThemeError(f"{path}: '{key}' must be a colour string such as \"#1e90ff\"")
    for key in _NUMBER_FIELDS:
        if key in data and (isinstance(data[key], bool) or not isinstance(data[key], (int, float))):
            raise ThemeError(f"{path}: '{key}' must be a number")
    if "dark" in data and not isinstance(data["dark"], bool):
        raise ThemeError(f"{path}: 'dark' must be true or false")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, (str, int, float)) and not isinstance(v, bool)
        for k, v in variables.items()
    ):
        raise ThemeError(f"{path}: 'variables' must map names to values")
    fields = dict(data)
    fields["name"] = name.strip()
    fields["variables"] = {k: str(v) for k, v in variables.items()}
    return ThemeSpec(fields["name"], fields, path)


def load_theme_file(path: Path) -> ThemeSpec:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ThemeError(f"{path}{yaml_error_text(exc)}") from None
    return parse_theme(data, str(path), path.stem)


def builtin_theme_specs() -> dict[str, ThemeSpec]:
    folder = resources.files("jtop_roof") / "themes"
    specs = {}
    for name in BUILTIN_THEME_NAMES:
        resource = folder / f"{name}.yaml"
        data = yaml.safe_load(resource.read_text(encoding="utf-8"))
        specs[name] = parse_theme(data, f"jtop_roof/themes/{name}.yaml", name)
    return specs


def user_theme_dir() -> Path:
    return config_dir() / "themes"


def load_theme_dir(folder: Path) -> tuple[dict[str, ThemeSpec], list[tuple[str, str]]]:
    """(themes by name, [(file, reason)] for files that could not be used); a missing folder is
    simply empty."""
    loaded: dict[str, ThemeSpec] = {}
    failed: list[tuple[str, str]] = []
    try:
        paths = sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    except OSError:
        return loaded, failed
    for path in paths:
        try:
            spec = load_theme_file(path)
        except ThemeError as exc:
            failed.append((str(path), str(exc)))
            continue
        loaded[spec.name] = spec
    return loaded, failed


def theme_specs(user_dir: Path | None = None) -> tuple[dict[str, ThemeSpec], list[tuple[str, str]]]:
    """Built-ins, then user themes (a user theme of the same name replaces the built-in)."""
    specs = builtin_theme_specs()
    user, failed = load_theme_dir(user_theme_dir() if user_dir is None else user_dir)
    specs.update(user)
    return specs, failed


def available_theme_names(user_dir: Path | None = None) -> list[str]:
    """Names ``--theme`` accepts: ours and the user's first, then Textual's own themes."""
    from textual.theme import BUILTIN_THEMES

    specs, _ = theme_specs(user_dir)
    return list(specs) + [name for name in BUILTIN_THEMES if name not in specs]


def to_textual_theme(spec: ThemeSpec) -> Theme:
    """Build the Textual theme; ThemeError when a colour does not parse."""
    from textual.color import Color, ColorParseError
    from textual.theme import Theme

    for key in _COLOUR_FIELDS:
        if key in spec.fields:
            try:
                Color.parse(spec.fields[key])
            except ColorParseError:
                raise ThemeError(f"{spec.path}: '{key}' is not a colour: {spec.fields[key]!r}") from None
    for key in PLOT_COLOURS + ("phase-marker", "throttle-band", "roof-compute", "roof-memory", "roof-max"):
        value = spec.fields["variables"].get(key)
        if value is not None:
            try:
                Color.parse(value)
            except ColorParseError:
                raise ThemeError(f"{spec.path}: variable '{key}' is not a plain colour: {value!r}") from None
    return Theme(**spec.fields)


def theme_variable_defaults(base: dict[str, str]) -> dict[str, str]:
    """Our variables for a theme that does not set them, derived from its generated colours, so a
    Textual theme or a partial user theme still gets readable levels and plot lines."""
    return {
        "level-ok": base["foreground"],
        "level-warn": base["warning"],
        "level-crit": base["error"],
        "level-off": base["foreground-muted"],
        "level-fixed": base["foreground-muted"],
        "level-warn-style": "none",
        "level-crit-style": "bold",
        "bar-empty": base["panel"],
        "pane-border": base["panel-lighten-1"],
        "rec": base["error"],
        "live": base["success"],
        "paused": base["warning"],
        "phase-marker": base["accent"],
        "throttle-band": base["error"],
        "roof-compute": base["accent"],
        "roof-memory": base["primary"],
        "roof-max": base["foreground-muted"],
        "plot-1": base["primary"],
        "plot-2": base["accent"],
        "plot-3": base["success"],
        "plot-4": base["secondary"],
        "plot-5": base["warning"],
        "plot-6": base["error"],
    }
