"""CI installs every extra a test imports, so that no test skips there for a missing one: the modules
the tests `importorskip` are given by the extras `.ci/run` installs, and the README's test command
installs the same."""

from __future__ import annotations

import re
import sys

from paths import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest needs tomli on 3.10
    import tomli as tomllib

ROOT = REPO
#: The package's own modules, skipped while not written: no extra gives them.
OWN = "jtop_roof"


def installed_extras(text: str) -> set[str]:
    match = re.search(r"pip install -e '\.\[([a-z,]+)\]'", text)
    assert match, "no `pip install -e '.[...]'` line"
    return set(match.group(1).split(","))


def test_every_skipped_import_is_installed_by_ci_and_the_readme():
    ci = installed_extras((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert installed_extras((ROOT / "README.md").read_text(encoding="utf-8")) == ci
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    given = {re.split(r"[<>=!\[ ]", req)[0].lower() for extra in ci for req in extras[extra]}
    skipped = {name.split(".")[0].lower() for path in (ROOT / "tests").rglob("*.py")
               for name in re.findall(r"importorskip\(\"([\w.]+)\"", path.read_text(encoding="utf-8"))}
    assert skipped - {OWN} and skipped - {OWN} <= given, sorted(skipped - given)
