"""Property tests: the parser never raises, keeps what it does not understand, and still reads every
known field when garbage sits between fields. They call ``_parse`` (not ``parse_line``) so that a
bug is seen here instead of being caught by parse_line's safety net."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import TESTS

from jtop_roof.formats.parser import _ANSI, _parse

DATA = TESTS / "data" / "tegrastats_lines.txt"
REAL_LINES = [
    line
    for line in DATA.read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#") and "RAM " in line
]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Tokens that continue a field ("RAM" "1/2MB" "(lfb" "1x4MB)", "MTS" "fg" "0%"...), as opposed to
# tokens that start one: garbage is only inserted before the latter.
CONTINUATIONS = {"off", "fg", "bg", "limit"}


def _is_continuation(token: str) -> bool:
    return token[0] in "0123456789@([" or token in CONTINUATIONS or token.startswith("0%")


def _fields(line: str) -> list[str]:
    fields: list[str] = []
    for token in line.split():
        if fields and _is_continuation(token):
            fields[-1] += " " + token
        else:
            fields.append(token)
    return fields


def _check_invariants(line: str) -> None:
    sample = _parse(line)
    assert sample == _parse(line, walk=True)  # the one-match fast path agrees with the token walk
    if sample.is_sample:
        assert sample.ram is not None or sample.cpus is not None
    visible = _ANSI.sub("", line)
    for token in sample.unknown:
        assert token and token in visible


# A garbage token no alternative can read: it always holds a '#', never whitespace or ESC.
garbage = st.text(
    alphabet=st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc"), blacklist_characters="\x1b"),
    max_size=8,
).map(lambda text: text + "#")


@FUZZ
@given(st.text())
def test_random_text_never_raises(text):
    _check_invariants(text)


@FUZZ
@given(st.binary(max_size=400))
def test_binary_garbage_never_raises(blob):
    _check_invariants(blob.decode("utf-8", errors="replace"))


@FUZZ
@given(st.sampled_from(REAL_LINES), st.randoms(use_true_random=False))
def test_shuffled_tokens_never_raise(line, rnd):
    tokens = line.split()
    rnd.shuffle(tokens)
    _check_invariants(" ".join(tokens))


@FUZZ
@given(st.sampled_from(REAL_LINES), st.integers(min_value=0, max_value=800))
def test_truncated_lines_never_raise(line, cut):
    _check_invariants(line[:cut])
    _check_invariants(line[cut:])


@FUZZ
@given(st.sampled_from(REAL_LINES), st.integers(min_value=0, max_value=800), st.text(max_size=12))
def test_text_spliced_anywhere_never_raises(line, where, text):
    _check_invariants(line[:where] + text + line[where:])


@FUZZ
@given(st.sampled_from(REAL_LINES), st.lists(st.tuples(st.integers(min_value=0), garbage), max_size=5))
def test_garbage_between_fields_keeps_every_known_value(line, insertions):
    clean = _parse(line)
    fields = _fields(line)
    first = 1 if clean.stamp else 0  # the stamp is read only at the start of the line
    expected_unknown: list[tuple[int, int, str]] = []
    for order, (slot, token) in enumerate(insertions):
        expected_unknown.append((first + slot % (len(fields) + 1 - first), order, token))
    # later insertions at the same slot go after earlier ones
    pieces: list[str] = []
    by_slot: dict[int, list[str]] = {}
    for slot, _, token in sorted(expected_unknown):
        by_slot.setdefault(slot, []).append(token)
    for i, field in enumerate(fields):
        pieces.extend(by_slot.get(i, []))
        pieces.append(field)
    pieces.extend(by_slot.get(len(fields), []))
    noisy = _parse(" ".join(pieces))

    assert noisy.unknown == [token for _, _, token in sorted(expected_unknown)]
    assert noisy.is_sample
    for name in ("ram", "swap", "iram", "cpus", "gpu", "emc", "engines", "temps_c", "temps_max_c", "rails"):
        assert getattr(noisy, name) == getattr(clean, name), name
    assert noisy.stamp == clean.stamp
