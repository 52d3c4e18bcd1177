"""The size and shape of ``cosine_book``, printed (``make size``).

Lines per module, the share of lines that are docstrings, the public names (a
module's ``__all__``, or its names without a leading underscore) and which of them
no chapter, README or other module uses. The targets are those of the lean package:
at most 5,000 lines in all, no module over 600 lines, docstrings at most 35 % of the
lines, at most 80 public names.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "code" / "cosine_book"
TARGETS = {"lines": 5_000, "module_lines": 600, "docstring_share": 0.35, "public_names": 80}


@dataclass
class Module:
    path: Path
    lines: int
    docstring_lines: int
    public: list[str]


def docstring_lines(tree: ast.Module) -> int:
    """Lines taken by the docstrings of the module, its classes and functions."""
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    total += body[0].end_lineno - body[0].lineno + 1
    return total


def public_names(tree: ast.Module) -> list[str]:
    """The names in ``__all__`` (every assignment and ``+=`` to it), or those without a "_"."""
    names: list[str] = []
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            names += [elt.value for elt in node.value.elts]  # type: ignore[attr-defined]
    if names:
        return names
    # No __all__: the module-level functions, classes and constants without a "_".
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return [name for name in names if not name.startswith("_")]


def read_module(path: Path) -> Module:
    text = path.read_text()
    tree = ast.parse(text)
    return Module(path, len(text.splitlines()), docstring_lines(tree), public_names(tree))


def code_of_chapters() -> str:
    """The code cells of every chapter notebook, and the Markdown chapters and README."""
    parts = [(ROOT / "README.md").read_text()]
    for notebook in sorted((ROOT / "chapters").glob("*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        parts += ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
    return "\n".join(parts)


def main() -> int:
    modules = [read_module(p) for p in sorted(PACKAGE.rglob("*.py"))]
    lines = sum(m.lines for m in modules)
    docs = sum(m.docstring_lines for m in modules)
    public = [(m, name) for m in modules for name in m.public if not m.path.stem.startswith("_")]
    chapters = code_of_chapters()
    sources = {m.path: m.path.read_text() for m in modules}
    print(f"{'module':<34}{'lines':>7}{'docstrings':>12}{'public':>8}")
    for m in sorted(modules, key=lambda m: -m.lines):
        share = m.docstring_lines / m.lines if m.lines else 0.0
        print(f"{str(m.path.relative_to(PACKAGE)):<34}{m.lines:>7}{share:>11.0%}{len(m.public):>8}")
    unused = []
    for m, name in public:
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        elsewhere = any(pattern.search(text) for path, text in sources.items() if path != m.path)
        if not pattern.search(chapters) and not elsewhere:
            unused.append(f"{m.path.stem}.{name}")
    largest = max(modules, key=lambda m: m.lines)
    measured = {
        "lines": lines,
        "module_lines": largest.lines,
        "docstring_share": docs / lines,
        "public_names": len(public),
    }
    print(
        f"\ntotal {lines:,} lines in {len(modules)} files; largest {largest.path.name} "
        f"({largest.lines}); docstrings {docs / lines:.0%}; {len(public)} public names, "
        f"{len(unused)} used by no chapter, README or other module"
    )
    if unused:
        print("  " + ", ".join(unused))
    missed = [k for k, v in measured.items() if v > TARGETS[k]]
    for key in missed:
        print(f"target missed: {key} {measured[key]:,.2f} > {TARGETS[key]:,}")
    print("targets met" if not missed else "TARGETS MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
