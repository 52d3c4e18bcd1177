"""What a notebook printed: the claims tests read the stored outputs of the chapters.

Pytest puts this folder on ``sys.path`` for the test files beside it, so they import it
as ``notebook_outputs``.
"""

from __future__ import annotations


def outputs_text(cell: dict) -> str:
    """The text a code cell printed or displayed (streams and ``text/plain``), in order."""
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append("".join(output["text"]))
        else:
            parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "".join(parts)
