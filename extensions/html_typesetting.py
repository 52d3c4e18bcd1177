r"""Keep punctuation with the formula or link it belongs to (the HTML book only).

A browser may break a line between an inline formula and the comma after it, so a
line starts with ", and"; or between an opening parenthesis and the formula inside
it. Here, in the HTML output, an inline element (formula, link, code, emphasis)
and the punctuation written against it (no space between) go into one
``<span class="lgc-nobr">``, which ``_css/book.css`` keeps on one line. Words and
spaces stay outside it, so lines still break everywhere else; an element with a
space in its text (a link of several words) is left alone, since keeping it whole
could push it past a phone's screen.

Jupyter Book loads this extension through ``sphinx: local_extensions`` in
``_config.yml``.

Examples
--------
>>> from docutils import nodes
>>> paragraph = nodes.paragraph(
...     "", "", nodes.Text("since ("), nodes.math("", "x"), nodes.Text("), so")
... )
>>> keep_punctuation_with_inline_elements(paragraph)
2
>>> [(type(node).__name__, node.astext()) for node in paragraph.children]
[('Text', 'since '), ('inline', '(x),'), ('Text', ' so')]
>>> paragraph[1]["classes"]
['lgc-nobr']
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["KeepPunctuation", "keep_punctuation_with_inline_elements", "setup"]

NOBR = "lgc-nobr"
# Longest one-word element kept whole with its punctuation (characters).
LONGEST_KEPT = 24
# Punctuation that closes onto what precedes it, and that opens onto what follows.
CLOSING = re.compile(r"^[.,;:!?)\]\u2019\u201d\u2026]+")
OPENING = re.compile(r"[(\[\u2018\u201c]+$")
INLINE = (
    nodes.math,
    nodes.reference,
    nodes.literal,
    nodes.emphasis,
    nodes.strong,
    nodes.inline,
)


def _unbreakable(node: nodes.Node) -> bool:
    """Whether a browser would not break inside ``node`` anyway (a formula, one word).

    A long code name (a dotted path) is left alone: on a phone it must be free to
    break inside, which a no-break span would forbid.
    """
    if isinstance(node, nodes.math):
        return True
    text = node.astext()
    return not re.search(r"[ \t\n]", text) and len(text) <= LONGEST_KEPT


def _wrap(parent: nodes.Element, index: int) -> nodes.inline:
    """Put ``parent[index]`` into a new no-break span in its place and return the span."""
    child = parent[index]
    if isinstance(child, nodes.inline) and NOBR in child["classes"]:
        return child
    span = nodes.inline(classes=[NOBR])
    parent.replace(child, span)
    span += child
    return span


def keep_punctuation_with_inline_elements(parent: nodes.Element) -> int:
    """Move punctuation written against an inline child into a span with that child.

    Returns the number of punctuation runs moved.
    """
    moved = 0
    index = 0
    while index < len(parent):
        child = parent[index]
        if isinstance(child, INLINE) and _unbreakable(child):
            # Opening punctuation just before the element.
            if index > 0 and isinstance(parent[index - 1], nodes.Text):
                before = str(parent[index - 1])
                match = OPENING.search(before)
                if match:
                    span = _wrap(parent, index)
                    span.insert(0, nodes.Text(match.group()))
                    rest = before[: match.start()]
                    if rest:
                        parent.replace(parent[index - 1], nodes.Text(rest))
                    else:
                        parent.remove(parent[index - 1])
                        index -= 1
                    moved += 1
            # Closing punctuation just after it.
            if index + 1 < len(parent) and isinstance(parent[index + 1], nodes.Text):
                after = str(parent[index + 1])
                match = CLOSING.match(after)
                if match:
                    span = _wrap(parent, index)
                    span += nodes.Text(match.group())
                    rest = after[match.end() :]
                    if rest:
                        parent.replace(parent[index + 1], nodes.Text(rest))
                    else:
                        parent.remove(parent[index + 1])
                    moved += 1
        index += 1
    return moved


class KeepPunctuation(SphinxPostTransform):
    """Apply :func:`keep_punctuation_with_inline_elements` to every text element (HTML)."""

    default_priority = 900
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        """Wrap the punctuation in every paragraph, caption, title and inline element."""
        for element in list(self.document.findall(nodes.TextElement)):
            if not isinstance(element, nodes.FixedTextElement):
                keep_punctuation_with_inline_elements(element)


def setup(app: Any) -> dict[str, Any]:
    """Register the post-transform (Sphinx calls this when it loads the extension)."""
    app.add_post_transform(KeepPunctuation)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
