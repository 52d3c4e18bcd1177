"""One widget design for both readers: a control spec, a pure state function, a drawing function.

A widget is a :class:`WidgetSpec`: its controls (:class:`Slider`, :class:`Choice`),
a pure function from control values to the state it shows (numbers, arrays; the
computation itself lives in the core modules), a drawing function from that state
to a Matplotlib figure (in :mod:`cosine_book.plotting`), and an optional one-line
readout. Two front ends show what these compute:

- in a Jupyter kernel, :func:`kernel_widget` wires the controls to ipywidgets and
  redraws on every change;
- in the static HTML book, :func:`static_html` evaluates the state and drawing
  functions over a grid of control settings at execution time and emits one
  self-contained HTML fragment (frames as inline PNG images, a few lines of inline
  JavaScript, no external script, no network) whose controls swap frames.

:class:`LiveWidget` carries both in one output: JupyterLab renders the live
ipywidget, and the book (``nb_mime_priority_overrides`` in ``_config.yml``) renders
the ``text/html`` version, and the PDF and notebook viewers without a kernel
(GitHub, VS Code) the ``image/png`` of the default setting. The HTML version offers
every combination of the controls' values, so that moving one control never resets
another; a widget keeps its grid small by offering few values per control.
Named presets set every control at once, so the chapter text can refer to them.
Frames are drawn at twice their display size (sharp on high-density screens) and
stored as palette PNG.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosine_book._validation import as_float_scalar

__all__ = [
    "Choice",
    "LiveWidget",
    "Slider",
    "WidgetSpec",
    "kernel_widget",
    "static_html",
    "typeset_minus",
]

#: Display resolution of the frames of the HTML version (CSS pixels per inch of the
#: figure size); they are drawn at ``FRAME_SCALE`` times as many pixels.
FRAME_DPI = 80
FRAME_SCALE = 2


# A hyphen before a number (not inside a word such as "top-10"): a minus sign.
_HYPHEN_MINUS = re.compile(r"(?<![\w.])-(?=\.?\d)")


def typeset_minus(text: str) -> str:
    """``text`` with the hyphens that stand for minus signs replaced by "−" (U+2212).

    Matplotlib writes its tick labels with the minus sign; readouts, control values
    and the figures' own titles and labels get the same through this function.

    >>> typeset_minus("r = -0.49 in [-1, 1], top-10, B-A")
    'r = −0.49 in [−1, 1], top-10, B-A'
    """
    return _HYPHEN_MINUS.sub("\u2212", text)


def _typeset_figure(figure: Any) -> None:
    """Minus signs in every text of ``figure`` (titles, labels, legends, annotations)."""
    from matplotlib.text import Text

    for text in figure.findobj(Text):
        content = text.get_text()
        if "-" in content and not content.startswith("$"):
            text.set_text(typeset_minus(content))


@dataclass(frozen=True)
class Slider:
    """A numeric control.

    Parameters
    ----------
    name : str
        Keyword argument of the state function.
    label : str
        What the reader sees.
    minimum, maximum, step, default : float
        Range, step and starting value of the kernel slider.
    static_values : sequence of float, optional
        The values the HTML version offers; by default 5 evenly spaced values
        from ``minimum`` to ``maximum`` plus ``default``.
    readout_format : str
        Format of the value shown beside the control.
    description : str, optional
        What the control sets, in words, for screen readers (default: ``label``).

    Examples
    --------
    >>> Slider("c1", "c₁", -1.0, 1.0, 0.01, 0.9).values()
    (-1.0, -0.5, 0.0, 0.5, 0.9, 1.0)
    """

    name: str
    label: str
    minimum: float
    maximum: float
    step: float
    default: float
    static_values: Sequence[float] | None = None
    readout_format: str = ".2f"
    description: str | None = None

    def __post_init__(self) -> None:
        low = as_float_scalar(self.minimum, f"{self.name}: minimum")
        high = as_float_scalar(self.maximum, f"{self.name}: maximum")
        as_float_scalar(self.step, f"{self.name}: step", positive=True)
        as_float_scalar(self.default, f"{self.name}: default", interval=(low, high))
        for value in self.values():
            as_float_scalar(value, f"{self.name}: static value", interval=(low, high))

    def values(self) -> tuple[float, ...]:
        """The values of the HTML version, sorted, including the default."""
        if self.static_values is not None:
            chosen = [float(v) for v in self.static_values]
        else:
            chosen = np.linspace(self.minimum, self.maximum, 5).round(10).tolist()
        return tuple(sorted(set(chosen) | {float(self.default)}))

    def show(self, value: float) -> str:
        """The value as the reader sees it beside the control (with a true minus sign)."""
        return typeset_minus(format(value, self.readout_format))


@dataclass(frozen=True)
class Choice:
    """A control with a few named options.

    Parameters
    ----------
    name : str
        Keyword argument of the state function.
    label : str
        What the reader sees.
    options : sequence
        The values passed to the state function.
    default
        One of ``options``.
    option_labels : sequence of str, optional
        How each option is shown (default: ``str(option)``).
    description : str, optional
        What the control sets, in words, for screen readers (default: ``label``).

    Examples
    --------
    >>> Choice("optimizer", "optimizer", ("SGD", "Adam"), "Adam").values()
    ('SGD', 'Adam')
    """

    name: str
    label: str
    options: Sequence[Any]
    default: Any
    option_labels: Sequence[str] | None = None
    description: str | None = None

    def __post_init__(self) -> None:
        if self.default not in tuple(self.options):
            raise ValueError(f"{self.name}: default {self.default!r} is not one of the options")
        if self.option_labels is not None and len(self.option_labels) != len(self.options):
            raise ValueError(f"{self.name}: expected one label per option")

    def values(self) -> tuple[Any, ...]:
        """Every option, in order."""
        return tuple(self.options)

    def show(self, value: Any) -> str:
        """The option as the reader sees it."""
        labels = self.option_labels or [str(option) for option in self.options]
        return labels[tuple(self.options).index(value)]


Control = Slider | Choice


@dataclass(frozen=True)
class WidgetSpec:
    """Controls, a pure state function and a drawing function: one widget.

    Parameters
    ----------
    name : str
        Identifier (letters, digits, hyphens), unique on a page.
    title : str
        A short caption shown above the controls.
    controls : sequence of Slider or Choice
        In display order; their names are the state function's keywords.
    state : callable
        ``state(**values)``: pure, from control values to what is shown.
    draw : callable
        ``draw(state)``: a new Matplotlib figure showing the state.
    readout : callable, optional
        ``readout(state)``: one line of plain text under the figure.
    presets : mapping of str to mapping, optional
        Named settings (label -> {control name: value}) offered as buttons in
        both versions; each must use values the HTML version offers.
    columns : int, optional
        Controls per row; by default as many as there are controls, at most 3.
    colours : int
        Colours of each frame's palette (64 keeps pages light; a colour scale with
        many steps, as chapter 6's heatmap, needs 256).
    """

    name: str
    title: str
    controls: Sequence[Control]
    state: Callable[..., Any]
    draw: Callable[[Any], Any]
    readout: Callable[[Any], str] | None = None
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    columns: int | None = None
    colours: int = 64

    def __post_init__(self) -> None:
        names = [control.name for control in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: control names must be distinct; got {names}")
        if self.columns is not None and (not isinstance(self.columns, int) or self.columns < 1):
            raise ValueError(f"columns must be a positive integer; got {self.columns!r}")
        if not isinstance(self.colours, int) or not 2 <= self.colours <= 256:
            raise ValueError(f"colours must be an integer from 2 to 256; got {self.colours!r}")

        for label, preset in self.presets.items():
            unknown = set(preset) - set(names)
            if unknown:
                raise ValueError(f"preset {label!r} names unknown controls {sorted(unknown)}")
            for control in self.controls:
                value = preset.get(control.name, control.default)
                if value not in control.values():
                    raise ValueError(
                        f"preset {label!r}: {control.name}={value!r} is not a value the "
                        f"HTML version offers {control.values()}"
                    )

    @property
    def columns_shown(self) -> int:
        """The number of controls per row (``columns``, or one per control up to 3)."""
        return self.columns or min(len(self.controls), 3)

    def defaults(self) -> dict[str, Any]:
        """Every control at its default."""
        return {control.name: control.default for control in self.controls}

    def settings(self) -> list[dict[str, Any]]:
        """Every combination of the values the HTML version offers, defaults first.

        Examples
        --------
        >>> spec = WidgetSpec(
        ...     "demo", "demo",
        ...     [Slider("a", "a", 0, 1, 0.5, 0, static_values=[0, 1]),
        ...      Slider("b", "b", 0, 1, 0.5, 1, static_values=[0, 1])],
        ...     state=lambda a, b: a + b, draw=None)
        >>> spec.settings()
        [{'a': 0.0, 'b': 1.0}, {'a': 0.0, 'b': 0.0}, {'a': 1.0, 'b': 0.0}, {'a': 1.0, 'b': 1.0}]
        """
        defaults = self.defaults()
        grid = itertools.product(*(control.values() for control in self.controls))
        found = [defaults, *(dict(zip(defaults, values, strict=True)) for values in grid)]
        unique: list[dict[str, Any]] = []
        for setting in found:
            normal = {
                c.name: float(setting[c.name]) if isinstance(c, Slider) else setting[c.name]
                for c in self.controls
            }
            if normal not in unique:
                unique.append(normal)
        return unique

    def evaluate(self, **values: Any) -> tuple[Any, Any, str]:
        """State, figure and readout for one setting (defaults for missing controls).

        A setting the state function refuses (``ValueError``, e.g. a zero vector)
        gives ``None``, a figure saying why, and the message as the readout.
        """
        try:
            state = self.state(**{**self.defaults(), **values})
        except ValueError as error:
            message = f"Not a valid setting: {error}"
            return None, _message_figure(message), message
        figure = self.draw(state)
        _typeset_figure(figure)
        return state, figure, typeset_minus(self.readout(state)) if self.readout else ""


def _message_figure(message: str) -> Any:
    """A small figure that only says ``message`` (for settings with nothing to draw)."""
    import textwrap

    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(8.0, 1.2))
    figure.text(0.02, 0.5, "\n".join(textwrap.wrap(message, 110)), va="center", fontsize=10)
    return figure


def _figure_png(figure: Any, dpi: float = FRAME_DPI, *, fast: bool = False) -> bytes:
    """The figure as PNG bytes (and closed); ``fast`` trades size for encoding time."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    # Fixed metadata: the bytes depend only on the drawing, not on the date or version.
    # No tight bounding box: it would draw the figure twice.
    figure.savefig(
        buffer,
        format="png",
        dpi=dpi,
        metadata={"Software": None},
        pil_kwargs={"compress_level": 1} if fast else None,
    )
    plt.close(figure)
    return buffer.getvalue()


def _display_size(figure: Any) -> tuple[int, int]:
    """Width and height in CSS pixels at which a frame of ``figure`` is shown."""
    width, height = figure.get_size_inches()
    return round(width * FRAME_DPI), round(height * FRAME_DPI)


def _smallest_text(figure: Any) -> float:
    """Size in CSS pixels, at the frame's display size, of the smallest text ``figure`` shows.

    Counts every visible, non-empty text (titles, labels, tick labels, legends,
    annotations) of a drawn figure; a hidden one may be counted too, which only errs
    on the small side.
    """
    from matplotlib.text import Text

    sizes = [
        text.get_fontsize()
        for text in figure.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]
    return min(sizes, default=np.inf) / 72 * FRAME_DPI


def _frame(figure: Any, colours: int = 64) -> tuple[bytes, int, int]:
    """A frame of the HTML version: palette PNG at ``FRAME_SCALE`` times its display size.

    Returns the PNG and the display width and height in CSS pixels. 64 colours,
    chosen from the image without dithering, keep text and lines crisp at about a
    quarter of a full-colour PNG's size.
    """
    from PIL import Image

    width, height = _display_size(figure)
    rgba = Image.open(io.BytesIO(_figure_png(figure, FRAME_DPI * FRAME_SCALE)))
    palette = rgba.convert("RGB").quantize(colours, method=Image.Quantize.MEDIANCUT, dither=0)
    buffer = io.BytesIO()
    palette.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue(), width, height


def _indices(spec: WidgetSpec, setting: Mapping[str, Any]) -> str:
    """Frame key: the index of each control's value among the values it offers."""
    return ",".join(str(control.values().index(setting[control.name])) for control in spec.controls)


# Inline script of the HTML version: controls hold indices into each control's values;
# moving one control looks up the frame of the new setting (every combination has one).
_SCRIPT = """(function () {
  var root = document.getElementById(%(id)s);
  var data = JSON.parse(root.querySelector("script.lgc-frames").textContent);
  var controls = root.querySelectorAll(".lgc-control");
  var image = root.querySelector("img.lgc-frame");
  var readout = root.querySelector(".lgc-readout");
  function key() {
    return Array.prototype.map.call(controls, function (c) { return c.value; }).join(",");
  }
  function show() {
    var frame = data.frames[key()];
    image.src = data.images[frame.image];
    image.alt = data.alt + " (" + frame.label + ")";
    readout.textContent = frame.readout;
    Array.prototype.forEach.call(controls, function (c, i) {
      var value = root.querySelector('.lgc-value[data-control="' + i + '"]');
      if (value) value.textContent = data.labels[i][c.value];
      if (c.type === "range") c.setAttribute("aria-valuetext", data.labels[i][c.value]);
    });
    root.setAttribute("data-frame", key());
  }
  function setAll(indices) {
    Array.prototype.forEach.call(controls, function (c, i) { c.value = indices[i]; });
    show();
  }
  Array.prototype.forEach.call(controls, function (control) {
    control.addEventListener("input", show);
  });
  Array.prototype.forEach.call(root.querySelectorAll(".lgc-preset"), function (button) {
    button.addEventListener("click", function () {
      setAll(button.getAttribute("data-key").split(","));
    });
  });
})();"""


# The widget's own style: the theme's colours (light and dark), one row of
# ``--lgc-columns`` controls, slider handles large enough for a finger on touch screens.
_STYLE = (
    "<style>.lgc-widget{border:1px solid var(--pst-color-border,#ddd);border-radius:6px;"
    "padding:.6em;margin:1em 0;background:var(--pst-color-surface,transparent);"
    "color:var(--pst-color-text-base,inherit)}"
    ".lgc-controls{display:grid;grid-template-columns:repeat(var(--lgc-columns),"
    "minmax(0,1fr));gap:.3em 1.2em}"
    "@media (max-width:600px){.lgc-controls{grid-template-columns:minmax(0,1fr)}}"
    ".lgc-row{display:flex;align-items:center;gap:.4em;font-size:.9em;min-width:0}"
    ".lgc-label{min-width:3.5em}.lgc-value{min-width:3em;font-family:monospace}"
    ".lgc-control{flex:1 1 auto;min-width:0;accent-color:var(--pst-color-primary,auto)}"
    "select.lgc-control{background:var(--pst-color-background,#fff);"
    "color:var(--pst-color-text-base,#000);border:1px solid var(--pst-color-border,#999)}"
    "@media (pointer:coarse){input.lgc-control{-webkit-appearance:none;appearance:none;"
    "height:1.75em;background:transparent}"
    "input.lgc-control::-webkit-slider-runnable-track{height:.4em;border-radius:.2em;"
    "background:var(--pst-color-border,#bbb)}"
    "input.lgc-control::-webkit-slider-thumb{-webkit-appearance:none;appearance:none;"
    "width:1.75em;height:1.75em;margin-top:-.675em;border-radius:50%;"
    "background:var(--pst-color-primary,#1f5fa8)}"
    "input.lgc-control::-moz-range-thumb{width:1.75em;height:1.75em;border-radius:50%;"
    "background:var(--pst-color-primary,#1f5fa8)}"
    "select.lgc-control{min-height:2.75em}}"
    ".lgc-frame{max-width:100%;height:auto;display:block;margin-top:.5em;background:#fff}"
    ".lgc-readout{font-family:monospace;font-size:.85em;white-space:pre-wrap}"
    ".lgc-preset{margin:.3em .4em 0 0;color:var(--pst-color-text-base,inherit);"
    "background:var(--pst-color-background,#fff);border:1px solid var(--pst-color-border,#999);"
    "border-radius:4px;padding:.15em .5em}</style>"
)


def _control_html(control: Control, position: int, default: Any) -> str:
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
    """The kernel-free HTML version of a widget: frames plus a few lines of inline JavaScript.

    Every frame is what ``spec.draw(spec.state(**setting))`` draws for a setting of
    :meth:`WidgetSpec.settings`, as an inline palette PNG at twice its display size;
    identical frames are stored once. The element ids derive from the content, so
    the output is the same on every run.

    Parameters
    ----------
    spec : WidgetSpec

    Returns
    -------
    str
        One ``<div class="lgc-widget">`` with its controls, image, readout (announced
        to screen readers as it changes), frame data
        (``<script type="application/json" class="lgc-frames">``) and script. Its
        ``data-smallest-text`` is the size in CSS pixels of the smallest text of any
        frame at display size (the browser tests check it as the frame is shown).
    """
    images: list[str] = []
    image_index: dict[str, int] = {}
    frames: dict[str, dict[str, Any]] = {}
    size = (0, 0)
    smallest_text = np.inf
    for setting in spec.settings():
        _, figure, readout = spec.evaluate(**setting)
        png, width, height = _frame(figure, spec.colours)
        # After drawing: tick labels get their text when the figure is drawn.
        smallest_text = min(smallest_text, _smallest_text(figure))
        if not frames:
            size = (width, height)  # the default setting comes first
        encoded = "data:image/png;base64," + base64.b64encode(png).decode()
        if encoded not in image_index:
            image_index[encoded] = len(images)
            images.append(encoded)
        label = ", ".join(f"{c.label} = {c.show(setting[c.name])}" for c in spec.controls)
        frames[_indices(spec, setting)] = {
            "image": image_index[encoded],
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
    presets = "".join(
        f'<button type="button" class="lgc-preset" '
        f'data-key="{_indices(spec, {**defaults, **preset})}">{html.escape(label)}</button>'
        for label, preset in spec.presets.items()
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
        + (f'<div class="lgc-presets">{presets}</div>' if presets else "")
        + f'<img class="lgc-frame" src="{images[first["image"]]}" width="{size[0]}" '
        f'height="{size[1]}" alt="{html.escape(spec.title)} ({html.escape(first["label"])})">'
        f'<div class="lgc-readout" aria-live="polite">{html.escape(first["readout"])}</div>'
        f'<script type="application/json" class="lgc-frames">{data}</script>'
        f"<script>{_SCRIPT % {'id': json.dumps(element_id)}}</script></div>"
    )


def default_frame_png(spec: WidgetSpec) -> tuple[bytes, int, int]:
    """The default setting's frame as a full-colour PNG (for the PDF and notebook viewers).

    Returns the PNG, drawn at ``FRAME_SCALE`` times its display size, and that display
    width and height in pixels.
    """
    _, figure, _ = spec.evaluate(**spec.defaults())
    width, height = _display_size(figure)
    return _figure_png(figure, FRAME_DPI * FRAME_SCALE), width, height


def kernel_widget(spec: WidgetSpec) -> Any:
    """The live ipywidgets version: the spec's controls, redrawing through the kernel.

    Sliders offer the same values as the HTML version.

    Returns
    -------
    ipywidgets.VBox
        Title, controls, preset buttons and an output area with the figure and readout.
    """
    import ipywidgets as widgets
    from IPython.display import Image

    inputs: dict[str, Any] = {}
    for control in spec.controls:
        if isinstance(control, Slider):
            # The values the HTML version offers, no others: what the chapter says of
            # the widget then holds in both versions.
            inputs[control.name] = widgets.SelectionSlider(
                options=[(control.show(v), v) for v in control.values()],
                value=float(control.default),
                description=control.label,
                continuous_update=False,
                style={"description_width": "60px"},
                layout=widgets.Layout(width="260px"),
            )
        else:
            inputs[control.name] = widgets.Dropdown(
                options=[(control.show(v), v) for v in control.values()],
                value=control.default,
                description=control.label,
                style={"description_width": "60px"},
                layout=widgets.Layout(width="260px"),
            )
    output = widgets.Output()

    def redraw(_change: object = None) -> None:
        values = {name: widget.value for name, widget in inputs.items()}
        _, figure, readout = spec.evaluate(**values)
        # Filled directly, not with `with output:`: without a frontend (nbconvert,
        # nbval) captured output would otherwise land in the cell's own output.
        output.outputs = ()
        # One PNG at the figure's own resolution, drawn once (the inline backend's
        # tight bounding box would draw it twice, doubling the update time).
        output.append_display_data(Image(_figure_png(figure, dpi=figure.dpi, fast=True)))
        if readout:
            output.append_stdout(readout + "\n")

    def apply(preset: Mapping[str, Any]) -> Callable[[object], None]:
        def on_click(_button: object) -> None:
            for name, value in {**spec.defaults(), **preset}.items():
                inputs[name].unobserve(redraw, names="value")
                inputs[name].value = value
                inputs[name].observe(redraw, names="value")
            redraw()

        return on_click

    for widget in inputs.values():
        widget.observe(redraw, names="value")
    buttons = []
    for label, preset in spec.presets.items():
        button = widgets.Button(description=label, layout=widgets.Layout(width="auto"))
        button.on_click(apply(preset))
        buttons.append(button)
    redraw()
    controls = widgets.GridBox(
        list(inputs.values()),
        layout=widgets.Layout(grid_template_columns=f"repeat({spec.columns_shown}, 270px)"),
    )
    parts = [widgets.HTML(f"<b>{html.escape(spec.title)}</b>"), controls]
    if buttons:
        parts.append(widgets.HBox(buttons))
    return widgets.VBox([*parts, output])


class LiveWidget:
    """A widget for both readers: the ipywidget in a kernel, the static HTML in the book.

    Displaying it emits one output with both representations; JupyterLab renders
    the live widget, and the HTML book renders ``text/html`` (see
    ``nb_mime_priority_overrides`` in ``_config.yml``).

    Parameters
    ----------
    spec : WidgetSpec
    """

    def __init__(self, spec: WidgetSpec) -> None:
        self.spec = spec
        self.widget: Any = None  # the ipywidget of the last display

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.widget = kernel_widget(self.spec)
        bundle = self.widget._repr_mimebundle_()
        data = dict(bundle[0]) if isinstance(bundle, tuple) else dict(bundle)
        data["text/html"] = static_html(self.spec)
        png, width, height = default_frame_png(self.spec)
        data["image/png"] = base64.b64encode(png).decode()
        data["text/plain"] = f"<{self.spec.title}: interactive widget>"
        # Shown at its display size: the PNG has twice the pixels (sharp on any screen).
        return data, {"image/png": {"width": width, "height": height}}

    def __repr__(self) -> str:
        return f"LiveWidget({self.spec.name!r})"
