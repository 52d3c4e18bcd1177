r"""Fixes for the PDF edition of the book (Sphinx's LaTeX builder, ``make pdf``).

Three things, all for LaTeX only; the HTML book is unchanged.

**Theorem labels.** sphinx-proof writes each theorem's LaTeX label as
``<docname>:<label>``, and finds the document by walking up to a section whose name
equals the page title. Docutils keeps the title's straight apostrophe in the section
name while Sphinx's page title has the typographic one, so in "Simpson's paradox" the
walk finds nothing: the chapter's theorems were labelled ``None:...``, printed without
their number, and every reference to them came out as "??". Here the document is the
nearest enclosing node that names one: when the LaTeX builder merges the pages into one
doctree, it marks each page's sections (and the ``start_of_file`` node around them) with
the page's ``docname``; a node outside any marked one belongs to the root document.
sphinx-proof calls this lookup only when it writes LaTeX.

**Proofs.** sphinx-proof writes a proof as an admonition with no title; LaTeX then
takes the first paragraph's start as the title and draws an empty title bar above
every proof. In the PDF a proof is set as amsthm's ``proof`` (an italic "Proof." and
a box at the end of its last line; ``amsthm`` is loaded in ``latex_elements`` in ``_config.yml``).

**Chinese text.** Two references have Chinese titles, which the text font (FreeSerif)
lacks. XeTeX does not fall back to another font by itself, so each run of CJK
characters in the text (not in code) is set in ``\cjkfont`` (WenQuanYi Micro Hei,
declared in ``latex_elements``), inside a group of its own.

Jupyter Book loads this extension through ``sphinx: local_extensions`` in
``_config.yml``.

Examples
--------
>>> from types import SimpleNamespace
>>> from docutils import nodes
>>> from sphinx import addnodes
>>> env = SimpleNamespace(config=SimpleNamespace(root_doc="chapters/intro"))
>>> theorem = nodes.container()
>>> page = nodes.section("", nodes.paragraph("", "", theorem), docname="chapters/05_simpson")
>>> inlined = addnodes.start_of_file(docname="chapters/05_simpson")
>>> inlined += page
>>> including_document(env, theorem)
'chapters/05_simpson'
>>> including_document(env, nodes.container())
'chapters/intro'
>>> [node.astext() for node in cjk_runs_in_latex("Su. 局部余弦，一定吗？ [Is it?]")]
['Su. ', '{\\cjkfont 局部余弦，一定吗？}', ' [Is it?]']
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["LatexCJK", "LatexProofs", "cjk_runs_in_latex", "including_document", "setup"]

# CJK radicals, symbols and punctuation, kana, unified ideographs (and extension A),
# compatibility ideographs and forms, and full-width forms; none is special to TeX.
CJK_RUN = re.compile(
    "[\u2e80-\u2fdf\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]+"
)
# Nodes whose text is not set in the text font.
NOT_TEXT = (nodes.literal_block, nodes.literal, nodes.raw, nodes.math, nodes.math_block)

# sphinx-proof starts the proof's first paragraph with this.
PROOF_PREFIX = "Proof. "


def including_document(env: Any, node: nodes.Node, parent_tag: str = "section") -> str:
    """The document a node of the LaTeX builder's single doctree comes from.

    The signature is that of ``sphinx_proof.nodes.find_parent``, which this replaces;
    ``parent_tag`` is not needed.
    """
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.Element) and parent.get("docname"):
            return parent["docname"]
        parent = parent.parent
    return env.config.root_doc


def cjk_runs_in_latex(text: str) -> list[nodes.Node]:
    """``text`` as Text nodes, each run of CJK characters as raw LaTeX in the CJK font."""
    parts: list[nodes.Node] = []
    start = 0
    for run in CJK_RUN.finditer(text):
        if run.start() > start:
            parts.append(nodes.Text(text[start : run.start()]))
        parts.append(nodes.raw("", "{\\cjkfont " + run.group() + "}", format="latex"))
        start = run.end()
    if start < len(text):
        parts.append(nodes.Text(text[start:]))
    return parts


class LatexCJK(SphinxPostTransform):
    """Set runs of CJK characters in the text in the CJK font of the LaTeX output."""

    builders = ("latex",)
    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        """Replace each Text node holding CJK characters, outside code and maths."""
        for text in list(self.document.findall(nodes.Text)):
            parent = text.parent
            if parent is None or not CJK_RUN.search(text):
                continue
            ancestor, in_code = parent, False
            while ancestor is not None and not in_code:
                in_code = isinstance(ancestor, NOT_TEXT)
                ancestor = ancestor.parent
            if not in_code:
                index = parent.index(text)
                parent[index : index + 1] = cjk_runs_in_latex(str(text))


class LatexProofs(SphinxPostTransform):
    """Set each proof as amsthm's ``proof`` environment in the LaTeX output."""

    builders = ("latex",)
    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        """Replace each proof node by its content inside a LaTeX ``proof`` environment."""
        from sphinx_proof.nodes import proof_node

        for proof in list(self.document.findall(proof_node)):
            body = proof
            if len(proof.children) == 1 and isinstance(proof[0], nodes.admonition):
                body = proof[0]
            content = list(body.children)
            first = content[0] if content else None
            if isinstance(first, nodes.paragraph) and first.children:
                text = first[0]
                if isinstance(text, nodes.Text) and text.startswith(PROOF_PREFIX):
                    first.replace(text, nodes.Text(text[len(PROOF_PREFIX) :]))
            begin = nodes.raw("", "\n\\begin{proof}\n", format="latex")
            end = nodes.raw("", "\n\\end{proof}\n", format="latex")
            if content and isinstance(content[-1], nodes.paragraph):
                # Inside the last paragraph, so that the box ends its last line.
                content[-1] += end
                proof.replace_self([begin, *content])
            else:
                proof.replace_self([begin, *content, end])


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point: the theorem labels' lookup, proofs and CJK text for LaTeX."""
    import sphinx_proof.nodes

    sphinx_proof.nodes.find_parent = including_document
    app.add_post_transform(LatexProofs)
    app.add_post_transform(LatexCJK)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
