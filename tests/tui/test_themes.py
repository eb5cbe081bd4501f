"""Theme files: built-ins, user themes, broken files, and the variables the stylesheet needs."""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import REPO
from source_support import finishes
from textual.app import App, ComposeResult
from textual.theme import BUILTIN_THEMES
from textual.widgets import Footer, Static

from jtop_roof.tui.themes import (
    BUILTIN_THEME_NAMES,
    MAX_THEME_FILES,
    ThemeError,
    available_theme_names,
    builtin_theme_specs,
    load_theme_dir,
    load_theme_file,
    parse_theme,
    theme_name_error,
    theme_variable_defaults,
    to_textual_theme,
)

OUR_VARIABLES = set(theme_variable_defaults(BUILTIN_THEMES["textual-dark"].to_color_system().generate()))


def test_built_in_themes_load_in_cycle_order():
    specs = builtin_theme_specs()
    assert list(specs) == list(BUILTIN_THEME_NAMES) == ["jroof-dark", "jroof-light", "jroof-high-contrast",
                                                          "jroof-mono"]
    for spec in specs.values():
        theme = to_textual_theme(spec)
        assert theme.name == spec.name


@pytest.mark.parametrize("name", BUILTIN_THEME_NAMES)
def test_built_in_themes_set_every_variable_of_ours(name):
    spec = builtin_theme_specs()[name]
    assert set(spec.fields["variables"]) == OUR_VARIABLES


def test_light_theme_is_light_and_mono_has_no_hue():
    specs = builtin_theme_specs()
    assert specs["jroof-light"].fields["dark"] is False
    from textual.color import Color

    mono = specs["jroof-mono"].fields
    fields = ("primary", "secondary", "accent", "warning", "error", "success", "foreground", "background",
              "surface", "panel")
    colours = [mono[k] for k in fields]
    colours += [v for k, v in mono["variables"].items() if not k.endswith("-style")]
    for value in colours:
        r, g, b = Color.parse(value).rgb
        assert r == g == b, value


def test_example_theme_files_at_the_repo_root_load():
    files = sorted((REPO / "themes").glob("*.yaml"))
    assert {f.stem for f in files} >= set(BUILTIN_THEME_NAMES)
    for path in files:
        to_textual_theme(load_theme_file(path))


def test_stylesheet_uses_only_defined_variables():
    tcss = re.sub(r"/\*.*?\*/", "", (REPO / "jtop_roof" / "tui" / "app.tcss").read_text(), flags=re.S)
    used = set(re.findall(r"\$([a-z][a-z0-9-]*)", tcss))
    textual = set(BUILTIN_THEMES["textual-dark"].to_color_system().generate())
    assert used - textual - OUR_VARIABLES == set()


def test_available_names_put_ours_first_then_textual_ones(tmp_path):
    (tmp_path / "mine.yml").write_text("name: mine\nprimary: '#336699'\n")
    names = available_theme_names(user_dir=tmp_path)
    assert names[:5] == [*BUILTIN_THEME_NAMES, "mine"]
    assert "textual-dark" in names and "ansi-dark" in names


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: [oops\n", "at line 2: expected"),
        ("- just\n- a list\n", "expected a mapping"),
        ("name: x\nprimary: '#fff'\ncolour: red\n", "unknown key 'colour'"),
        ("name: x\n", "'primary' colour is required"),
        ("name: x\nprimary: 12\n", "'primary' must be a colour string"),
        ("name: x\nprimary: '#fff'\ndark: maybe\n", "'dark' must be true or false"),
        ("name: x\nprimary: '#fff'\nvariables: [1, 2]\n", "'variables' must map names to values"),
        ("name: ''\nprimary: '#fff'\n", "'name' must be a non-empty string"),
    ],
)
def test_bad_theme_files_are_reported_with_their_path(tmp_path, text, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    loaded, failed = load_theme_dir(tmp_path)
    assert loaded == {}
    assert len(failed) == 1
    assert failed[0][0] == str(path)
    assert problem in failed[0][1] and str(path) in failed[0][1]


def test_bad_colours_are_caught_before_textual_sees_them(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: c\nprimary: notacolour\n")
    with pytest.raises(ThemeError, match="'primary' is not a colour"):
        to_textual_theme(load_theme_file(path))
    path.write_text("name: c\nprimary: '#123456'\nvariables:\n  plot-1: $primary\n")
    with pytest.raises(ThemeError, match="variable 'plot-1' is not a plain colour"):
        to_textual_theme(load_theme_file(path))


def test_missing_user_folder_is_empty_and_name_defaults_to_the_file_stem(tmp_path):
    assert load_theme_dir(tmp_path / "nowhere") == ({}, [])
    (tmp_path / "stem-name.yaml").write_text("primary: '#abcdef'\n")
    loaded, failed = load_theme_dir(tmp_path)
    assert list(loaded) == ["stem-name"] and failed == []


def test_unreadable_bytes_are_a_failure_not_a_crash(tmp_path):
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00garbage")
    loaded, failed = load_theme_dir(tmp_path)
    assert loaded == {} and "bin.yaml" in failed[0][1]


# --- hostile theme files ------------------------------------------------------------------------

BASE = "name: bad\nprimary: '#336699'\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (BASE + "variables:\n  level-ok: notacolour\n", "variable 'level-ok' is not a colour: 'notacolour'"),
        (BASE + "variables:\n  level-crit-style: blinky\n",
         "variable 'level-crit-style' is not a text style: 'blinky'"),
        (BASE + "variables:\n  level-ok: $primary\n", "'level-ok' is not one colour or style: '$primary'"),
        (BASE + "variables:\n  level-ok: 'red; background: blue'\n", "variable 'level-ok' is not one colour"),
        (BASE + "variables:\n  pane-border: 12\n", "variable 'pane-border' is not a colour: '12'"),
        (BASE + "variables:\n  border: zzz\n", "variable 'border' is not a colour: 'zzz'"),
        (BASE + "variables:\n  block-cursor-text-style: xx\n", "'block-cursor-text-style' is not a text"),
        (BASE + "variables:\n  level-ok: ''\n", "variable 'level-ok' is not a colour: ''"),
        (BASE + "luminosity_spread: .nan\n", "'luminosity_spread' must be a number from 0 to 1, got nan"),
        (BASE + "luminosity_spread: 1.0e+308\n", "'luminosity_spread' must be a number from 0 to 1, got 1e"),
        (BASE + "text_alpha: -1\n", "'text_alpha' must be a number from 0 to 1, got -1"),
        (BASE + "text_alpha: '0.5'\n", "'text_alpha' must be a number from 0 to 1, got '0.5'"),
        (BASE + "background: '#12345'\n", "'background' is not a colour: '#12345'"),
        (BASE + "surface: [1, 2]\n", "'surface' must be a colour string such as '#1e90ff', got [1, 2]"),
        (BASE + "dark: 1\n", "'dark' must be true or false, got 1"),
        (BASE + f"variables:\n  level-ok: '{'x' * 5000}'\n", "variable 'level-ok' is not a colour: 'xxx"),
        ("name: \"a\\nb\"\nprimary: '#fff'\n", "'name' must be a non-empty string"),
    ],
)
def test_bad_colour_style_or_number_is_refused_with_file_field_and_value(tmp_path, text, reason):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    loaded, failed = load_theme_dir(tmp_path)
    if loaded:  # the shape is right: the colours are checked where Textual's parser is at hand
        with pytest.raises(ThemeError) as info:
            to_textual_theme(loaded["bad"])
        message = str(info.value)
    else:
        message = failed[0][1]
    assert message.startswith(f"{path}: ") and reason in message
    assert "\n" not in message and len(message) < len(str(path)) + 150


def run_jroof_stylesheet(theme_names: list[str], themes: list[Any]) -> None:
    """Apply each theme to an app with jroof's stylesheet and Textual's footer: where a bad value
    would fail, when the stylesheet is built."""

    class StyleApp(App[None]):
        CSS_PATH = str(REPO / "jtop_roof" / "tui" / "app.tcss")

        def get_theme_variable_defaults(self) -> dict[str, str]:
            return theme_variable_defaults(self.current_theme.to_color_system().generate())

        def compose(self) -> ComposeResult:
            yield Static("x", classes="readout--crit")
            yield Footer()

    async def cycle() -> None:
        app = StyleApp()
        for theme in themes:
            app.register_theme(theme)
        async with app.run_test() as pilot:
            for name in theme_names:
                app.theme = name
                await pilot.pause()

    asyncio.run(cycle())


def test_values_textual_takes_are_accepted_and_work():
    """Not over-strict: alpha, auto colours, ANSI names, 'initial' and style lists all apply."""
    spec = parse_theme(
        {"name": "odd", "primary": "#336699", "luminosity_spread": 0, "text_alpha": 1,
         "variables": {"rec": "red 50%", "level-ok": "auto 87%", "level-warn": "ansi_bright_yellow",
                       "link-background": "initial", "level-crit-style": "b reverse",
                       "plot-1": "rgb(1,2,3)"}},
        "odd.yaml", "odd")
    themes = [to_textual_theme(spec), *(to_textual_theme(s) for s in builtin_theme_specs().values())]
    run_jroof_stylesheet(["odd", *BUILTIN_THEME_NAMES, "odd"], themes)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.sampled_from(["level-ok", "level-crit-style", "border", "text", "plot-2", "surface"]),
    value=st.one_of(st.text(max_size=20), st.sampled_from(["red 50%", "auto 80%", "bold underline", "#fff"])),
)
def test_any_value_is_refused_or_works(key, value):
    """A value either gives a ThemeError or applies to the stylesheet without an error."""
    data: dict[str, Any] = {"name": "h", "primary": "#336699"}
    if key == "surface":
        data[key] = value
    else:
        data["variables"] = {key: value}
    try:
        theme = to_textual_theme(parse_theme(data, "h.yaml", "h"))
    except ThemeError as exc:
        assert str(exc).startswith("h.yaml: ") and "\n" not in str(exc)
        return
    run_jroof_stylesheet(["h"], [theme])


def test_theme_name_error_says_unknown_only_for_names_without_a_file(tmp_path):
    (tmp_path / "broken.yaml").write_text("name: [unclosed\n")
    (tmp_path / "badcolour.yaml").write_text("name: badcolour\nprimary: notacolour\n")
    (tmp_path / "mine.yaml").write_text("name: mine\nprimary: '#ff8800'\n")
    for usable in ("jroof-light", "textual-dark", "mine", "broken", "badcolour"):
        assert theme_name_error(usable, user_dir=tmp_path) is None  # broken: the app falls back, says why
    message = theme_name_error("nope\x1b[31m", user_dir=tmp_path)
    assert message is not None and message.startswith("unknown theme 'nope\\x1b[31m'; available: jroof-dark")


def test_theme_files_are_read_bounded(tmp_path):
    os.mkfifo(tmp_path / "fifo.yaml")  # no writer: opening it for reading would block
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "dir.yaml").mkdir()
    with (tmp_path / "huge.yaml").open("wb") as out:
        out.truncate(4 * 2**30)
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):  # 9**9 strings once expanded
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n")
    loaded, failed = finishes(lambda: load_theme_dir(tmp_path))
    reasons = dict(failed)
    assert loaded == {} and set(reasons) == {str(tmp_path / "huge.yaml"), str(tmp_path / "bomb.yaml")}
    assert reasons[str(tmp_path / "huge.yaml")].endswith("cannot read: larger than 1,048,576 bytes")
    assert "values once aliases are expanded" in reasons[str(tmp_path / "bomb.yaml")]


def test_a_folder_of_many_theme_files_is_read_up_to_a_limit(tmp_path):
    for i in range(MAX_THEME_FILES + 5):
        (tmp_path / f"t{i:03d}.yaml").write_text(f"name: t{i}\nprimary: '#336699'\n")
    loaded, failed = load_theme_dir(tmp_path)
    assert len(loaded) == MAX_THEME_FILES
    assert failed == [(str(tmp_path), f"{tmp_path}: 5 theme files past the first 100 were not read")]
