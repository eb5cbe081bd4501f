"""An input with no sample is an error on every reader: exit 2 and one line saying what the file
holds instead (empty, blank, text, JSON that is no record, a recording header alone), never an empty
report with exit 0. The read API raises the same line."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import jroof
from paths import TESTS

from jtop_roof.api import read
from jtop_roof.model.errors import UserError

DATA = TESTS / "data"
LOG = DATA / "logfile" / "agxorin_jp6_500ms.log"
HEADER = (DATA / "h200_phases.jsonl").read_text(encoding="utf-8").splitlines()[0]

#: Inputs without a sample, and what the line says they hold.
INPUTS = {
    "empty.log": ("", "no tegrastats samples in {}: the file is empty"),
    "blank.log": ("\n\n \n", "no tegrastats samples in {}: 3 lines, all blank"),
    "hostname": ("orin-nano\n", "no tegrastats samples in {}: 1 line, none a sample"),
    "os-release": ('NAME="Ubuntu"\nVERSION_ID="22.04"\n',
                   "no tegrastats samples in {}: 2 lines, none a sample"),
    "junk.jsonl": ('{"a": 1}\n[1, 2]\n"x"\nnull\n', "no tegrastats samples in {}: 4 lines, none a sample"),
    "header.jsonl": (HEADER + "\n", "no samples in {}: a jroof recording header and nothing else"),
    "marked.jsonl": (HEADER + '\n{"type": "marker", "kind": "phase_start", "name": "x", "t": 1.0, '
                     '"mono": 1.0}\nnot json\n',
                     "no samples in {}: a jroof recording header and 2 more lines, none a sample"),
}


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    for name, (text, _) in INPUTS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def said(name: str, shown: str | None = None) -> str:
    return "jroof-tui: error: " + INPUTS[name][1].format(shown or name) + "\n"


@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize("command", [
    ["report"], ["report", "--format", "json"], ["export"], ["export", "--format", "jsonl"], ["parse"],
    ["record", "out.jsonl", "--duration", "1", "--replay"], ["--replay"],
])
def test_each_reader_refuses_a_file_without_samples_in_one_line(inputs, command, name):
    result = jroof(*command, name, cwd=inputs)
    assert (result.returncode, result.stderr, result.stdout) == (2, said(name), "")
    assert not (inputs / "out.jsonl").exists()


@pytest.mark.parametrize("name", ["empty.log", "os-release", "header.jsonl"])
def test_compare_and_plot_refuse_it_too(inputs, name):
    assert jroof("compare", str(LOG), name, cwd=inputs).stderr == said(name)
    plotted = jroof("plot", name, "--out", "x.svg", cwd=inputs)
    assert (plotted.returncode, plotted.stderr) == (2, said(name))
    assert not (inputs / "x.svg").exists()


@pytest.mark.parametrize(("name", "printed"), [("empty.log", 0), ("junk.jsonl", 4), ("header.jsonl", 0)])
def test_standard_input_is_named_so(inputs, name, printed):
    text = INPUTS[name][0]
    line = said(name, "standard input").replace("the file is empty", "nothing came")
    reported = jroof("report", "-", cwd=inputs, input=text)
    assert (reported.returncode, reported.stderr) == (2, line)
    # parse streams a pipe: what it read is printed as it came (non_sample lines), then the error.
    parsed = jroof("parse", "-", cwd=inputs, input=text)
    assert parsed.returncode == 2 and parsed.stderr.endswith(line)
    assert len(parsed.stdout.splitlines()) == printed


def test_a_sample_after_junk_is_enough(inputs):
    mixed = inputs / "mixed.log"
    mixed.write_text("Linux orin 5.15\n" + LOG.read_text(encoding="utf-8").splitlines()[3] + "\n")
    assert jroof("report", str(mixed), "--tz", "UTC", cwd=inputs).returncode == 0
    assert jroof("parse", str(mixed), "--tz", "UTC", cwd=inputs).returncode == 0


@pytest.mark.parametrize("name", ["empty.log", "os-release", "header.jsonl"])
def test_the_read_api_raises_the_same_line(inputs, name):
    path = str(inputs / name)
    with pytest.raises(UserError) as info:
        read(path)
    assert str(info.value) == INPUTS[name][1].format(path)
