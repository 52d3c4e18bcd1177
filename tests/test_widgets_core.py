"""Tests for cosine_book.widgets.core: one widget design, two front ends."""

from __future__ import annotations

import json
import re

import matplotlib.pyplot as plt
import pytest

from cosine_book.widgets.core import Choice, LiveWidget, Slider, WidgetSpec, static_html


def draw_value(state):
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.set_title(f"{state:.2f}")
    return fig


def make_spec(**extra):
    return WidgetSpec(
        name="demo",
        title="demo widget",
        controls=[
            Slider("a", "a", 0.0, 1.0, 0.1, 0.0, static_values=[0.0, 0.5, 1.0]),
            Choice("b", "b", (1, 2), 1),
        ],
        state=lambda a, b: a * b,
        draw=draw_value,
        readout=lambda state: f"value {state:.2f}",
        **extra,
    )


def frames_of(fragment):
    data = re.search(r'<script type="application/json" class="lgc-frames">(.*?)</script>', fragment)
    return json.loads(data.group(1).replace("<\\/", "</"))


def test_settings_are_every_combination_defaults_first():
    settings = make_spec().settings()
    assert settings[0] == {"a": 0.0, "b": 1}
    assert sorted(map(str, settings)) == sorted(
        str({"a": a, "b": b}) for a in (0.0, 0.5, 1.0) for b in (1, 2)
    )


def test_static_html_frames_are_what_the_state_function_gives():
    fragment = static_html(make_spec())
    data = frames_of(fragment)
    assert set(data["frames"]) == {f"{i},{j}" for i in range(3) for j in range(2)}
    for key, frame in data["frames"].items():
        i, j = map(int, key.split(","))
        assert frame["readout"] == f"value {[0.0, 0.5, 1.0][i] * (1, 2)[j]:.2f}"
    # Equal states draw equal figures, stored once: a = 0 gives 0 for both b.
    assert data["frames"]["0,0"]["image"] == data["frames"]["0,1"]["image"]
    # What the browser tests select, and no external script or network access.
    for part in ('class="lgc-widget"', 'data-widget="demo"', 'data-frame="0,0"', 'lgc-frame"'):
        assert part in fragment
    assert fragment.count('class="lgc-control"') == 2
    assert '<output class="lgc-value" data-control="0"' in fragment
    assert "<script src" not in fragment and "http" not in fragment


def test_static_html_is_deterministic():
    assert static_html(make_spec()) == static_html(make_spec())


def test_frames_are_palette_pngs_at_twice_their_display_size():
    import base64
    import io

    from PIL import Image

    fragment = static_html(make_spec())
    width, height = (int(v) for v in re.search(r'width="(\d+)" height="(\d+)"', fragment).groups())
    assert (width, height) == (160, 80)  # the figure's 2 x 1 inches at 80 pixels per inch
    for uri in frames_of(fragment)["images"]:
        image = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
        assert image.mode == "P" and image.size == (2 * width, 2 * height)


def test_smallest_text_is_measured_at_display_size_over_every_frame():
    def draw(state):
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.tick_params(labelsize=10)
        ax.set_title("title", fontsize=12)
        ax.text(0.5, 0.5, "small" if state > 0.5 else "", fontsize=7.2)
        ax.text(0.5, 0.2, "hidden", fontsize=3, visible=False)
        return fig

    def spec(values):
        return WidgetSpec(
            name="demo",
            title="demo widget",
            controls=[Slider("a", "a", 0.0, 1.0, 0.1, 0.0, static_values=values)],
            state=lambda a: a,
            draw=draw,
        )

    # 7.2 points at 80 pixels per inch: 8 CSS pixels, drawn only in the second frame.
    assert 'data-smallest-text="8.00"' in static_html(spec([0.0, 1.0]))
    # Tick labels are the smallest text left (the empty and the hidden text do not count).
    assert 'data-smallest-text="11.11"' in static_html(spec([0.0, 0.5]))


def test_controls_are_described_and_the_readout_is_announced():
    spec = WidgetSpec(
        "demo",
        "demo",
        [
            Slider("c1", "c₁", -1, 1, 0.1, 0, static_values=[-1, 0, 1], description="local cosine"),
            Choice("b", "b", (1, 2), 1),
        ],
        state=lambda c1, b: c1 * b,
        draw=draw_value,
        readout=lambda state: f"value {state:.2f}",
    )
    fragment = static_html(spec)
    assert 'aria-label="local cosine"' in fragment and 'aria-valuetext="0.00"' in fragment
    assert 'aria-label="b"' in fragment  # no description: the label
    assert 'aria-live="polite"' in fragment
    # A menu shows its value itself: only the slider has an <output> beside it.
    assert fragment.count('class="lgc-value"') == 1


def test_controls_and_spec_refuse_what_neither_version_can_show():
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        Slider("a", "a", 0.0, 1.0, 0.1, 2.0, static_values=[0.0])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        Slider("a", "a", 0.0, 1.0, 0.1, 0.5, static_values=[0.0, 3.0])
    with pytest.raises(ValueError, match="not one of the options"):
        Choice("b", "b", (1, 2), 3)
    with pytest.raises(ValueError, match="distinct"):
        WidgetSpec("x", "x", [Choice("b", "b", (1,), 1)] * 2, state=None, draw=None)


def test_kernel_widget_redraws_and_live_widget_carries_three_versions():
    import base64

    live = LiveWidget(make_spec())
    bundle, metadata = live._repr_mimebundle_()
    assert bundle["text/html"].startswith('<div class="lgc-widget"')
    box = live.widget
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == box.model_id
    # The default frame as PNG, twice the pixels of its display size (2 x 1 inches at 80).
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG") and int.from_bytes(png[16:20], "big") == 320
    assert metadata == {"image/png": {"width": 160, "height": 80}}
    # Every control moved: the figure and the readout are replaced.
    output = box.children[-1]
    assert output.outputs[-1]["text"] == "value 0.00\n"
    slider, menu = box.children[1].children
    slider.value = 0.5
    assert output.outputs[-1]["text"] == "value 0.50\n"
    menu.value = 2
    assert output.outputs[-1]["text"] == "value 1.00\n"
    assert len(output.outputs) == 2
    plt.close("all")
