"""The j key turns the roofline pane to the energy roofline and back: a line per calibrated mode,
the phase's measured J per operation, and the cheapest mode at its intensity as ``roofline.energy``
finds it (the pane computes nothing)."""

from __future__ import annotations

from tui_support import CALIBRATED_ORIN, park_replay, replay_app

from jtop_roof.roofline.devices import find_mode, load_devices
from jtop_roof.roofline.energy import cheapest_at, energy_roof
from jtop_roof.tui.panes.roofline import RooflinePane


async def test_the_j_key_switches_the_roofline_between_time_and_energy() -> None:
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER", devices=CALIBRATED_ORIN)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app, 46.0)
        app.pipeline.work(1_500, 1_500 * 8.2e9, 1_500 * 25e6, "int8", None, app.history.last_t_mono)
        while app.focused_pane != "roofline":
            await pilot.press("f")
        app.redraw_now()
        await pilot.pause()
        pane = app.query_one("#roofline", RooflinePane)
        assert "energy roofline" not in pane.readout.plain
        assert pane.roof_plot.display and not pane.energy_plot.display

        await pilot.press("j")
        await pilot.pause()
        text = pane.readout.plain
        device = load_devices(CALIBRATED_ORIN)["orin-nano-8gb-super"]
        roof = energy_roof(device, find_mode(device, "MAXN_SUPER"), "int8_tensor")
        head = app.history.last_t_mono
        assert head is not None
        shown = app.pipeline.ledger.phase_at(head)  # the phase at the play head
        assert shown is not None
        placement = app.pipeline.placement(app.pipeline.at_play_head(shown), None)
        cheapest = cheapest_at(roof, placement.intensity_flop_per_byte)
        assert cheapest.power_mode is not None
        assert f"cheapest mode at this intensity: {cheapest.power_mode} (7W not calibrated)" in text
        assert "MAXN_SUPER (now)" in text and "7W not calibrated: ε per OP (int8), ε per byte" in text
        assert "pJ/OP measured at 328 OP/byte" in text
        assert not pane.roof_plot.display and pane.energy_plot.display
        assert any("MAXN_SUPER" in row for row in pane.energy_plot.rows_text)

        await pilot.press("j")
        await pilot.pause()
        assert "energy roofline" not in pane.readout.plain
        assert pane.roof_plot.display and not pane.energy_plot.display


async def test_without_calibrated_modes_the_energy_view_says_why() -> None:
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app, 46.0)
        await pilot.press("j")
        await pilot.pause()
        pane = app.query_one("#roofline", RooflinePane)
        # the packaged database's figures are another part's: without any, the pane says so; with
        # some, it names every mode, with its figure or why it has none
        text = " ".join(pane.readout.plain.split())
        assert "energy roofline" in text and not pane.roof_plot.display
        if "no energy roofline" in text:
            assert "no power mode of orin-nano-8gb-super is calibrated for energy at int8" in text
            assert pane.energy_plot.has_class("-empty")  # no lines: no frame either
        else:
            assert all(mode in text for mode in ("MAXN_SUPER", "25W", "15W", "7W"))
