"""Theme files: built-ins, user themes, broken files, and the variables the stylesheet needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.theme import BUILTIN_THEMES

from jtop_roof.themes import (
    BUILTIN_THEME_NAMES,
    ThemeError,
    available_theme_names,
    builtin_theme_specs,
    load_theme_dir,
    load_theme_file,
    theme_variable_defaults,
    to_textual_theme,
)

REPO = Path(__file__).resolve().parents[1]
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
    tcss = re.sub(r"/\*.*?\*/", "", (REPO / "jtop_roof" / "app.tcss").read_text(), flags=re.S)
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
