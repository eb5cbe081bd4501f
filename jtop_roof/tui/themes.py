"""Colour themes: built-ins shipped as YAML inside the package, user themes from the config dir.

A theme file is a mapping of Textual ``Theme`` fields (``name``, ``dark``, ``primary``,
``background``, ...) plus ``variables``: our own colours (roofs, throttle band, phase markers, plot
lines, level colours) and any Textual variable. Files are read like the config (small regular files,
no alias bombs); a file that cannot be used is reported as ``(path, reason)``, the reason naming the
field and its value on one line, and never stops the monitor. Every value is checked before Textual
sees it, in each declaration of the stylesheet that uses it (``auto 87%`` is a colour, but no
border's): a bad one would otherwise fail when the stylesheet is built, at start or on the theme key.
Reading and listing themes does not import Textual; only ``to_textual_theme`` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from jtop_roof.formats.userfiles import YamlError, load_yaml, read_small_file, shown
from jtop_roof.model.errors import UserError
from jtop_roof.runtime.config import config_dir
from jtop_roof.tui.palette import PLOT_COLOURS

if TYPE_CHECKING:
    from textual.theme import Theme

#: Built-in themes in the order the theme key cycles through them; the first is the default.
BUILTIN_THEME_NAMES = ("jroof-dark", "jroof-light", "jroof-high-contrast", "jroof-mono")
_COLOUR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
                  "background", "surface", "panel", "boost")
#: Fractions; a NaN or huge spread breaks Textual's colour maths.
_NUMBER_FIELDS = ("luminosity_spread", "text_alpha")
_FIELDS = ("name", "dark", "variables", *_COLOUR_FIELDS, *_NUMBER_FIELDS)
_PLAIN_COLOURS = (*PLOT_COLOURS, "phase-marker", "throttle-band", "roof-compute", "roof-memory", "roof-max")
#: Characters that would end a CSS declaration or block: a variable holds one value.
_CSS_BREAKING = frozenset(";{}$\n\r")
#: Theme files read from one folder at most (the rest are reported, not read).
MAX_THEME_FILES = 100


class ThemeError(UserError):
    """A theme file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class ThemeSpec:
    """A theme as read from YAML, before Textual sees it."""

    name: str
    fields: dict[str, Any]
    path: str


def parse_theme(data: Any, path: str, default_name: str) -> ThemeSpec:
    """Check the shape and numbers of one theme mapping (colours and styles are checked by
    ``to_textual_theme``, which has Textual's parser)."""
    if not isinstance(data, dict):
        raise ThemeError(f"{path}: expected a mapping of theme fields")
    unknown = sorted(shown(key) for key in data if key not in _FIELDS)
    if unknown:
        raise ThemeError(f"{path}: unknown key {unknown[0]} (known: {', '.join(_FIELDS)})")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip() or not name.isprintable() or len(name) > 60:
        raise ThemeError(f"{path}: 'name' must be a non-empty string of at most 60 printable characters")
    if "primary" not in data:
        raise ThemeError(f"{path}: 'primary' colour is required")
    for key in _COLOUR_FIELDS:
        if key in data and not isinstance(data[key], str):
            raise ThemeError(
                f"{path}: '{key}' must be a colour string such as '#1e90ff', got {shown(data[key])}"
            )
    for key in _NUMBER_FIELDS:
        value = data.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ThemeError(f"{path}: '{key}' must be a number from 0 to 1, got {shown(value)}")
    if "dark" in data and not isinstance(data["dark"], bool):
        raise ThemeError(f"{path}: 'dark' must be true or false, got {shown(data['dark'])}")
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ThemeError(f"{path}: 'variables' must map names to values, got {shown(variables)}")
    for key, value in variables.items():
        if not isinstance(key, str) or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ThemeError(f"{path}: 'variables' must map names to values: {shown(key)}: {shown(value)}")
    fields = dict(data)
    fields["name"] = name.strip()
    fields["variables"] = {k: str(v) for k, v in variables.items()}
    return ThemeSpec(fields["name"], fields, path)


def load_theme_file(path: Path) -> ThemeSpec:
    try:
        text = read_small_file(path)
    except OSError as exc:
        raise ThemeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ThemeError(f"{path}: cannot read: not UTF-8 text") from None
    try:
        data = load_yaml(text)
    except YamlError as exc:
        raise ThemeError(f"{path}{exc}") from None
    return parse_theme(data, str(path), path.stem)


def builtin_theme_specs() -> dict[str, ThemeSpec]:
    folder = resources.files("jtop_roof.tui") / "themes"
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
    if len(paths) > MAX_THEME_FILES:
        failed.append((str(folder), f"{folder}: {len(paths) - MAX_THEME_FILES} theme files past the first "
                                    f"{MAX_THEME_FILES} were not read"))
        del paths[MAX_THEME_FILES:]
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


def theme_name_error(name: str, user_dir: Path | None = None) -> str | None:
    """Why ``--theme NAME`` cannot start the monitor, or None. A user theme file of that name that
    cannot be used is not an error here: the monitor starts with the default theme and says why."""
    folder = user_theme_dir() if user_dir is None else user_dir
    names = available_theme_names(folder)
    if name in names:
        return None
    _, failed = load_theme_dir(folder)
    if any(Path(path).stem == name for path, _ in failed):
        return None
    return f"unknown theme {shown(name)}; available: {', '.join(names)}"


def to_textual_theme(spec: ThemeSpec) -> Theme:
    """Build the Textual theme; ThemeError (file, field, value) when a colour or style does not
    parse, so that a bad file is refused here instead of failing the stylesheet later."""
    from textual.color import Color, ColorParseError
    from textual.css.parse import parse_declarations
    from textual.theme import Theme

    for key in _COLOUR_FIELDS:
        if key in spec.fields:
            try:
                Color.parse(spec.fields[key])
            except ColorParseError:
                raise ThemeError(f"{spec.path}: '{key}' is not a colour: {shown(spec.fields[key])}") from None
    for key, value in spec.fields["variables"].items():
        if _CSS_BREAKING.intersection(value):  # would end the declaration the value is put in
            what = "a plain colour" if key in _PLAIN_COLOURS else "one colour or style"
            raise ThemeError(f"{spec.path}: variable {shown(key)} is not {what}: {shown(value)}")
        if key in _PLAIN_COLOURS:  # plots need RGB: no "auto", alpha or "initial"
            try:
                Color.parse(value)
            except ColorParseError:
                problem = f"variable '{key}' is not a plain colour: {shown(value)}"
                raise ThemeError(f"{spec.path}: {problem}") from None
            continue
        # Textual's own variables are colours ("auto 87%", "#fff 50%", "initial") or text styles.
        prop, what = ("text-style", "a text style") if key.endswith("-style") else ("color", "a colour")
        try:
            parse_declarations(f"{prop}: {value};", (spec.path, ""))
        except Exception:  # DeclarationError, tokenizer errors: the value is not one
            raise ThemeError(f"{spec.path}: variable {shown(key)} is not {what}: {shown(value)}") from None
    theme = Theme(**spec.fields)
    try:
        variables = _css_variables(theme)
        unchanged = _css_variables(Theme(**{**spec.fields, "variables": {}}))
    except Exception as exc:  # Textual's colour maths on values that each parsed
        raise ThemeError(f"{spec.path}: its colours cannot be combined: {shown(str(exc))[1:-1]}") from None
    _check_in_stylesheet(spec.path, variables, {k for k, v in variables.items() if unchanged.get(k) != v})
    return theme


def _css_variables(theme: Theme) -> dict[str, str]:
    """The variables the monitor's stylesheet gets with ``theme`` (as ``App.get_css_variables``)."""
    generated = theme.to_color_system().generate()
    return {**theme_variable_defaults(generated), **generated, **theme.variables}


#: A declaration that uses a variable (``border: round $pane-border``), and a variable in it.
_DECLARATION = re.compile(r"(?:^|[{;])\s*([a-z][a-z-]*)\s*:\s*([^;{}]*\$[^;{}]*?)\s*(?=[;}])", re.MULTILINE)
_VARIABLE = re.compile(r"\$([A-Za-z0-9_-]+)")
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


def _check_in_stylesheet(path: str, variables: dict[str, str], changed: set[str]) -> None:
    """ThemeError unless every declaration of the monitor's stylesheet that uses a ``changed``
    variable parses with ``variables``: a value may be one Textual takes in ``color`` but not where
    it is used (``initial`` in a border, ``auto 87%`` as a background), and would otherwise fail
    when the stylesheet is built, at start or on the theme key."""
    from textual.css.parse import parse_declarations

    for prop, value in _stylesheet_declarations():
        used = [name for name in _VARIABLE.findall(value) if name in changed]
        if not used:
            continue
        given = _VARIABLE.sub(lambda match: variables.get(match[1], match[0]), value)
        if "$" in given:  # a variable the stylesheet defines itself: not the theme's to check
            continue
        try:
            parse_declarations(f"{prop}: {given};", (path, ""))
        except Exception:  # DeclarationError, tokenizer errors
            raise ThemeError(f"{path}: variable {shown(used[0])} is {shown(variables[used[0]])}, which the "
                             f"stylesheet's {shown(f'{prop}: {value}')} does not take") from None


def _stylesheet_declarations() -> list[tuple[str, str]]:
    """(property, value) of each declaration that uses a variable, in jroof's stylesheet and in the
    default CSS of every Textual widget loaded (those the monitor can show)."""
    from textual.dom import DOMNode

    from jtop_roof.tui.layout import pane_css
    from jtop_roof.tui.panes import PANES

    sources = [(resources.files("jtop_roof.tui") / "app.tcss").read_text(encoding="utf-8"), pane_css(PANES)]
    seen: set[type] = set()
    pending: list[type] = [DOMNode]
    while pending:
        node_class = pending.pop()
        if node_class not in seen:
            seen.add(node_class)
            sources.append(node_class.__dict__.get("DEFAULT_CSS", ""))
            pending.extend(node_class.__subclasses__())
    return [found for css in sources for found in _DECLARATION.findall(_COMMENT.sub("", css))]


@dataclass(frozen=True)
class MonitorThemes:
    """What the monitor registers: the Textual themes, the order the theme key cycles them in,
    and why files could not be used (one line each, for the user)."""

    themes: tuple[Theme, ...]
    cycle: tuple[str, ...]
    failures: tuple[str, ...]


def monitor_themes(user_dir: Path) -> MonitorThemes:
    """Built-ins, then the user's themes from ``user_dir`` (one of a built-in's name replaces it
    in place in the cycle); a file that does not build into a Textual theme is left out and said."""
    themes: list[Theme] = []
    cycle: list[str] = []
    for name, spec in builtin_theme_specs().items():
        themes.append(to_textual_theme(spec))
        cycle.append(name)
    user, failed = load_theme_dir(user_dir)
    failures = [reason for _path, reason in failed]
    for name, spec in user.items():
        try:
            themes.append(to_textual_theme(spec))
        except ThemeError as exc:
            failures.append(str(exc))
            continue
        if name not in cycle:
            cycle.append(name)
    return MonitorThemes(tuple(themes), tuple(cycle), tuple(failures))


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
