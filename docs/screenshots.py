"""Make the README's screenshots (SVG; PNG beside them where rsvg-convert is installed):

    .venv/bin/python docs/screenshots.py

The H200 proof run (tests/data/h200_phases.jsonl, with its probe) parked inside its power-capped GEMM, main
screen and roofline pane; and the shipped demo (a real Orin Nano Super run), main screen.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO))

from jtop_roof.runtime.config import Config  # noqa: E402
from jtop_roof.sources.demo import DemoSource  # noqa: E402
from jtop_roof.sources.replay import ReplaySource  # noqa: E402
from jtop_roof.tui.app import JroofApp  # noqa: E402

H200_RUN = REPO / "tests" / "data" / "h200_phases.jsonl"


async def shoot(app: JroofApp, settle, names: list[tuple[str, tuple[str, ...]]]) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for name, keys in names:
            for key in keys:
                await pilot.press(key)
            await pilot.pause()
            app.redraw_now()
            await pilot.pause()
            app.save_screenshot(f"{name}.svg", str(DOCS))


async def main() -> None:
    source = ReplaySource(H200_RUN, tz="UTC", hold_at_end=True, speed=64)
    source.pause()
    probe = str(REPO / "tests" / "data" / "h200_probe.json")  # measured on the same machine
    app = JroofApp(source, Config(tz="UTC", window_s=120.0, probe=probe), user_themes=DOCS / "no-themes")

    async def inside_the_gemm(pilot) -> None:
        source.seek(38.0, relative=False)  # 38 s into the run: the capped GEMM
        for _ in range(400):
            await pilot.pause(0.02)
            if app.controls is not None and app.controls.position_s >= 37.9:
                break
        await pilot.pause(0.5)

    await shoot(app, inside_the_gemm, [("h200_main", ()), ("h200_roofline", ("f",) * 7)])
    demo = DemoSource()

    async def a_while(pilot) -> None:
        await pilot.pause(6.0)
        demo.pause()

    await shoot(JroofApp(demo, Config(), user_themes=DOCS / "no-themes"), a_while, [("demo_main", ())])
    if shutil.which("rsvg-convert"):
        for name in ("h200_main", "h200_roofline", "demo_main"):
            subprocess.run(["rsvg-convert", "-o", str(DOCS / f"{name}.png"), str(DOCS / f"{name}.svg")],
                           check=True)


if __name__ == "__main__":
    asyncio.run(main())
