"""One widget design for both readers: a control spec, a pure state function, a draw function.

A :class:`WidgetSpec` holds the controls (:class:`Slider`, :class:`Choice`), a pure
function from their values to what the widget shows (computed by the core modules), a
function that draws that state as a Matplotlib figure (in :mod:`cosine_book.plotting`)
and a one-line readout. Two front ends show it: :func:`kernel_widget`, ipywidgets that
redraw through a Jupyter kernel, and :func:`static_html`, a kernel-free HTML fragment
with a frame for every combination of the controls' values, drawn at execution time and
swapped by a few lines of inline JavaScript, so that moving one control never resets
another. :class:`LiveWidget` carries both in one output: JupyterLab shows the ipywidget,
the book (``nb_mime_priority_overrides`` in ``_config.yml``) the HTML, and the PDF and
notebook viewers without a kernel a PNG of the default setting. Used by every chapter's
widget.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import numpy as np

from cosine_book.plotting import typeset_figure, typeset_minus

__all__ = ["WidgetSpec"]

# A frame of the HTML version is shown at 80 CSS pixels per inch of its figure and drawn
# at twice that (sharp on high-density screens).
_DPI = 80
_SCALE = 2


@dataclass(frozen=True)
class Slider:
    """A numeric control: the values it offers are ``static_values`` and ``default``, sorted.

    ``name`` is the state function's keyword, ``label`` what the reader sees,
    ``description`` what it sets, for screen readers (default: ``label``). The values
    must lie in ``[minimum, maximum]``; ``step`` is the resolution they were chosen at.

    >>> Slider("c1", "c₁", -1.0, 1.0, 0.01, 0.9, static_values=[-1, 0, 1]).values()
    (-1.0, 0.0, 0.9, 1.0)
    """

    name: str
    label: str
    minimum: float
    maximum: float
    step: float
    default: float
    static_values: Sequence[float]
    readout_format: str = ".2f"
    description: str | None = None

    def __post_init__(self) -> None:
        if not all(self.minimum <= value <= self.maximum for value in self.values()):
            raise ValueError(
                f"{self.name}: the default and static_values {self.values()} must lie in "
                f"[{self.minimum:g}, {self.maximum:g}]"
            )

    def values(self) -> tuple[float, ...]:
        """The values offered, sorted, the default among them."""
        return tuple(sorted({float(value) for value in self.static_values} | {float(self.default)}))

    def show(self, value: float) -> str:
        """The value as the reader sees it beside the control (with a true minus sign)."""
        return typeset_minus(format(value, self.readout_format))


@dataclass(frozen=True)
class Choice:
    """A menu of ``options``, shown as ``str(option)``; otherwise as :class:`Slider`.

    >>> Choice("optimizer", "optimizer", ("SGD", "Adam"), "Adam").values()
    ('SGD', 'Adam')
    """

    name: str
    label: str
    options: Sequence[Any]
    default: Any
    description: str | None = None

    def __post_init__(self) -> None:
        if self.default not in tuple(self.options):
            raise ValueError(f"{self.name}: default {self.default!r} is not one of the options")

    def values(self) -> tuple[Any, ...]:
        """Every option, in order."""
        return tuple(self.options)

    def show(self, value: Any) -> str:
        """The option as the reader sees it."""
        return str(value)


@dataclass(frozen=True)
class WidgetSpec:
    """One widget: its controls, a pure state function and a drawing function.

    ``name`` (letters, digits, hyphens) is unique on a page and ``title`` is shown above
    the controls, ``columns`` of them per row (default: one per control, at most 3).
    ``state(**values)`` maps the controls' values (keywords: their names) to what is
    shown; ``draw(state)`` returns a new Matplotlib figure; ``readout(state)`` a line of
    text under it. ``colours`` is the size of each frame's palette (64 keeps pages light;
    chapter 6's heatmap needs 256). Used by every chapter's widget.

    >>> spec = WidgetSpec(
    ...     "demo", "demo",
    ...     [Slider("a", "a", 0, 1, 0.5, 0, static_values=[1]),
    ...      Choice("b", "b", (0, 1), 1)],
    ...     state=lambda a, b: a + b, draw=None)
    >>> spec.settings()
    [{'a': 0.0, 'b': 1}, {'a': 0.0, 'b': 0}, {'a': 1.0, 'b': 0}, {'a': 1.0, 'b': 1}]
    """

    name: str
    title: str
    controls: Sequence[Slider | Choice]
    state: Callable[..., Any]
    draw: Callable[[Any], Any]
    readout: Callable[[Any], str] | None = None
    columns: int | None = None
    colours: int = 64

    def __post_init__(self) -> None:
        names = [control.name for control in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: control names must be distinct; got {names}")

    @property
    def columns_shown(self) -> int:
        """Controls per row."""
        return self.columns or min(len(self.controls), 3)

    def defaults(self) -> dict[str, Any]:
        """Every control at its default."""
        return {control.name: control.default for control in self.controls}

    def settings(self) -> list[dict[str, Any]]:
        """Every combination of the values the controls offer, the defaults first."""
        first = {
            c.name: float(c.default) if isinstance(c, Slider) else c.default for c in self.controls
        }
        grid = itertools.product(*(control.values() for control in self.controls))
        combinations = (dict(zip(first, values, strict=True)) for values in grid)
        return [first, *(setting for setting in combinations if setting != first)]

    def evaluate(self, **values: Any) -> tuple[Any, Any, str]:
        """State, figure and readout of one setting (defaults for the controls not given)."""
        state = self.state(**{**self.defaults(), **values})
        figure = self.draw(state)
        typeset_figure(figure)
        return state, figure, typeset_minus(self.readout(state)) if self.readout else ""


def _figure_png(figure: Any, dpi: float = _DPI, *, fast: bool = False) -> bytes:
    """The figure as PNG bytes (and closed); ``fast`` trades size for encoding time."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    # Fixed metadata: the bytes depend only on the drawing, not on the date or version.
    # No tight bounding box: it would draw the figure twice.
    options = {"compress_level": 1} if fast else None
    figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None}, pil_kwargs=options)
    plt.close(figure)
    return buffer.getvalue()


def _display_size(figure: Any) -> tuple[int, int]:
    """Width and height in CSS pixels at which a frame of ``figure`` is shown."""
    width, height = figure.get_size_inches()
    return round(width * _DPI), round(height * _DPI)


def _smallest_text(figure: Any) -> float:
    """Size in CSS pixels, at display size, of the smallest visible text of a drawn figure."""
    from matplotlib.text import Text

    texts = figure.findobj(Text)
    sizes = [t.get_fontsize() for t in texts if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=np.inf) / 72 * _DPI


def _frame(figure: Any, colours: int) -> tuple[bytes, int, int]:
    """A frame: palette PNG (crisp text and lines, a quarter of the size) and display size."""
    from PIL import Image

    width, height = _display_size(figure)
    rgba = Image.open(io.BytesIO(_figure_png(figure, _DPI * _SCALE)))
    palette = rgba.convert("RGB").quantize(colours, method=Image.Quantize.MEDIANCUT, dither=0)
    buffer = io.BytesIO()
    palette.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue(), width, height


def _indices(spec: WidgetSpec, setting: Mapping[str, Any]) -> str:
    """Frame key: the index of each control's value among the values it offers."""
    return ",".join(str(control.values().index(setting[control.name])) for control in spec.controls)


# The HTML version's script and style (the theme's colours, light and dark; a row of
# --lgc-columns controls; slider handles large enough for a finger on touch screens). The
# script swaps frames as controls move; its preset buttons (.lgc-preset) are no longer
# emitted, but every chapter's stored output carries it as it is.
_SCRIPT = (files(__package__) / "widget.js").read_text().removesuffix("\n")
_STYLE = "<style>" + (files(__package__) / "widget.css").read_text().replace("\n", "") + "</style>"


def _control_html(control: Slider | Choice, position: int, default: Any) -> str:
    """One labelled control; a slider shows its value beside it, a menu is its own label."""
    values = control.values()
    index = values.index(default)
    name = html.escape(control.name)
    described = html.escape(control.description or control.label)
    if isinstance(control, Slider):
        widget = (
            f'<input type="range" class="lgc-control" name="{name}" min="0" '
            f'max="{len(values) - 1}" step="1" value="{index}" aria-label="{described}" '
            f'aria-valuetext="{html.escape(control.show(default))}">'
            f'<output class="lgc-value" data-control="{position}" aria-live="off">'
            f"{html.escape(control.show(default))}</output>"
        )
    else:
        options = "".join(
            f'<option value="{i}"{" selected" if i == index else ""}>'
            f"{html.escape(control.show(v))}</option>"
            for i, v in enumerate(values)
        )
        widget = (
            f'<select class="lgc-control" name="{name}" aria-label="{described}">{options}</select>'
        )
    return (
        f'<label class="lgc-row"><span class="lgc-label">{html.escape(control.label)}</span>'
        f"{widget}</label>"
    )


def static_html(spec: WidgetSpec) -> str:
    """The kernel-free HTML version of a widget: its frames and a few lines of inline JavaScript.

    One ``<div class="lgc-widget">`` with the controls, the frame of the default setting,
    the readout (announced to screen readers), the frame data (``script.lgc-frames``: a
    frame per setting of :meth:`WidgetSpec.settings`, equal images stored once) and the
    script. Its id derives from the content: the same output on every run. Its
    ``data-smallest-text`` (CSS pixels, at display size) is checked by the browser tests.
    """
    images: list[str] = []
    frames: dict[str, dict[str, Any]] = {}
    size, smallest_text = (0, 0), np.inf
    for setting in spec.settings():
        _, figure, readout = spec.evaluate(**setting)
        png, width, height = _frame(figure, spec.colours)
        # After drawing: tick labels get their text when the figure is drawn.
        smallest_text = min(smallest_text, _smallest_text(figure))
        if not frames:
            size = (width, height)  # the default setting comes first
        encoded = "data:image/png;base64," + base64.b64encode(png).decode()
        if encoded not in images:
            images.append(encoded)
        label = ", ".join(f"{c.label} = {c.show(setting[c.name])}" for c in spec.controls)
        frames[_indices(spec, setting)] = {
            "image": images.index(encoded),
            "readout": readout,
            "label": label,
        }
    defaults = spec.defaults()
    default_key = _indices(spec, defaults)
    payload = {
        "alt": spec.title,
        "labels": [[c.show(v) for v in c.values()] for c in spec.controls],
        "frames": frames,
        "images": images,
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
    element_id = f"lgc-{spec.name}-{digest}"
    rows = "".join(
        _control_html(control, i, defaults[control.name]) for i, control in enumerate(spec.controls)
    )
    first = frames[default_key]
    data = json.dumps(payload, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
    return (
        f'<div class="lgc-widget" data-widget="{html.escape(spec.name)}" id="{element_id}" '
        f'data-frame="{default_key}" data-smallest-text="{smallest_text:.2f}" '
        f'style="--lgc-columns:{spec.columns_shown}" '
        f'role="group" aria-labelledby="{element_id}-title">{_STYLE}'
        f'<div class="lgc-title" id="{element_id}-title" role="heading" aria-level="4">'
        f"<b>{html.escape(spec.title)}</b></div>"
        f'<div class="lgc-controls">{rows}</div>'
        f'<img class="lgc-frame" src="{images[first["image"]]}" width="{size[0]}" '
        f'height="{size[1]}" alt="{html.escape(spec.title)} ({html.escape(first["label"])})">'
        f'<div class="lgc-readout" aria-live="polite">{html.escape(first["readout"])}</div>'
        f'<script type="application/json" class="lgc-frames">{data}</script>'
        f"<script>{_SCRIPT.replace('WIDGET_ID', json.dumps(element_id))}</script></div>"
    )


def kernel_widget(spec: WidgetSpec) -> Any:
    """The live ipywidgets version: title, controls and the figure, redrawn through the kernel.

    Its sliders offer the values of the HTML version and no others, so that what a
    chapter says of a widget holds in both versions.
    """
    import ipywidgets as widgets
    from IPython.display import Image

    inputs: dict[str, Any] = {}
    for control in spec.controls:
        shared = {
            "options": [(control.show(v), v) for v in control.values()],
            "description": control.label,
            "style": {"description_width": "60px"},
            "layout": widgets.Layout(width="260px"),
        }
        if isinstance(control, Slider):
            slider = {**shared, "value": float(control.default), "continuous_update": False}
            inputs[control.name] = widgets.SelectionSlider(**slider)
        else:
            inputs[control.name] = widgets.Dropdown(value=control.default, **shared)
    output = widgets.Output()

    def redraw(_change: object = None) -> None:
        _, figure, readout = spec.evaluate(**{name: w.value for name, w in inputs.items()})
        # Filled directly, not with `with output:`: without a frontend (nbconvert, nbval)
        # captured output would otherwise land in the cell's own output.
        output.outputs = ()
        # One PNG at the figure's own resolution, drawn once (the inline backend's tight
        # bounding box would draw it twice, doubling the update time).
        output.append_display_data(Image(_figure_png(figure, dpi=figure.dpi, fast=True)))
        if readout:
            output.append_stdout(readout + "\n")

    for widget in inputs.values():
        widget.observe(redraw, names="value")
    redraw()
    columns = f"repeat({spec.columns_shown}, 270px)"
    controls = widgets.GridBox(
        list(inputs.values()), layout=widgets.Layout(grid_template_columns=columns)
    )
    title = widgets.HTML(f"<b>{html.escape(spec.title)}</b>")
    return widgets.VBox([title, controls, output])


class LiveWidget:
    """A widget for both readers: the ipywidget in a kernel, the static HTML in the book.

    Displaying it emits one output with both, and a PNG of the default setting (twice
    the pixels of its display size) for the PDF and notebook viewers without a kernel.
    Every chapter's widget function returns one.
    """

    def __init__(self, spec: WidgetSpec) -> None:
        self.spec = spec
        self.widget: Any = None  # the ipywidget of the last display

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        self.widget = kernel_widget(self.spec)
        data = self.widget._repr_mimebundle_()  # the widget view (ipywidgets 8: a dict)
        data["text/html"] = static_html(self.spec)
        _, figure, _ = self.spec.evaluate(**self.spec.defaults())
        width, height = _display_size(figure)
        data["image/png"] = base64.b64encode(_figure_png(figure, _DPI * _SCALE)).decode()
        data["text/plain"] = f"<{self.spec.title}: interactive widget>"
        return data, {"image/png": {"width": width, "height": height}}

    def __repr__(self) -> str:
        return f"LiveWidget({self.spec.name!r})"
