"""A probe's result on disk and on the terminal: where it is kept, written whole, and the lines
``jroof-tui probe`` prints. Reading a result back is ``roofline.measured``."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jtop_roof.model.metrics import fmt_si_unit
from jtop_roof.roofline.devices import rate_word

_MIB = 1 << 20


# ---------------------------------------------------------------------------------------------
# files


def default_probe_path(
    device: str | None, mode: str | None, *, environ: Mapping[str, str] | None = None
) -> Path:
    """``$XDG_DATA_HOME/jroof/probe/<device>/<mode>.json`` (``~/.local/share`` when unset);
    ``unknown`` device and ``default`` mode where they are not known."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or ""
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "jroof" / "probe" / _file_part(device, "unknown") / f"{_file_part(mode, 'default')}.json"


def _file_part(text: str | None, default: str) -> str:
    if not text:
        return default
    cleaned = re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("._") or default
    return cleaned[:64]


def save_probe(result: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the result as JSON (parents made; written whole through a temporary file)."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


# ---------------------------------------------------------------------------------------------
# text


def summary_lines(result: Mapping[str, Any]) -> Iterator[str]:
    """What ``jroof-tui probe`` prints: one line per ceiling, then the notes."""
    device = result.get("device") or "unknown device"
    mode = result.get("power_mode") or "no power mode"
    yield (f"{result.get('backend')} on {result.get('device_name') or result.get('device_kind')} "
           f"({device}, {mode}){', quick' if result.get('quick') else ''}")
    for group, rate in (("bandwidth", "bytes_per_s"), ("compute", "flops_per_s")):
        for name, entry in (result.get(group) or {}).items():
            shown_unit = "B/s" if group == "bandwidth" else f"{rate_word(name)}/s"
            clocks = entry.get("clocks") or {}
            seen = [f"{k.removesuffix('_mhz')} {v['mean']:.0f} MHz" for k, v in clocks.items() if v]
            power = entry.get("power_w")
            if power:
                seen.append(f"{power['mean']:.0f} W")
            per = next((v for k, v in entry.items() if k.startswith(f"{rate}_per_") and v), None)
            per_text = f", {fmt_si_unit(per, shown_unit)}/MHz" if per else ""
            eps = (entry.get("eps_byte_j" if group == "bandwidth" else "eps_flop_j") or {}).get("value")
            if eps is not None:
                per_text += f", {eps * 1e12:.3g} pJ/{'B' if group == 'bandwidth' else rate_word(name)}"
            size = entry["size"]
            size_text = f"{size / _MIB:.0f} MiB" if group == "bandwidth" else f"N={size}"
            yield (f"  {group} {name:<12} {fmt_si_unit(entry[rate], shown_unit):>12}{per_text} "
                   f"({size_text}; {', '.join(seen) or 'no clocks seen'})")
    pi0 = ((result.get("idle") or {}).get("pi0_w") or {})
    if pi0:
        shown = "unknown" if pi0.get("value") is None else f"{pi0['value']:.1f} W"
        yield f"  idle (π0) {shown}: {pi0.get('note')}"
    for name, why in (result.get("skipped") or {}).items():
        yield f"  skipped {name}: {why}"
    if result.get("device_note"):
        yield f"  device: {result['device_note']}"
    if result.get("note"):
        yield f"  note: {result['note']}"
