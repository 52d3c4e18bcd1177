r"""The book's references list in the style of its author-year citations.

The chapters cite with ``bibtex_reference_style: author_year``, so the text reads
"Su (2024)" or "(Steck *et al.*, 2024)". This Sphinx extension registers a pybtex
formatting style, ``author_year``, whose list labels say the same thing ("Su, 2024",
"Eckart and Young, 1936", "Steck et al., 2024"; a letter is appended when two
entries would share a label) and which sorts the list by the authors' last names,
then year, then title, with LaTeX accents and braces decoded first ("Hernán",
"Migdał", a corporate author in braces). Entries are otherwise formatted as pybtex's
``unsrt`` (the ``plain`` style) formats them, with the URL and the DOI link of every
entry that has one.

Jupyter Book loads it through ``sphinx: local_extensions`` in ``_config.yml``, and
``bibtex_default_style: author_year`` selects the style.

Examples
--------
>>> from pybtex.database import parse_string
>>> bib = parse_string(
...     "@misc{b, author = {Eckart, Carl and Young, Gale}, year = {1936}}"
...     "@misc{a, author = {Migda{\\l}, Piotr}, year = {2025}}"
...     "@misc{c, author = {Pearl, J. and Ekanadham, C. and Kallus, N.}, year = {2014}}"
...     "@misc{d, author = {Pearl, Judea}, year = {2009}, title = {B}}"
...     "@misc{e, author = {Pearl, Judea}, year = {2009}, title = {A}}",
...     "bibtex",
... )
>>> style = AuthorYearStyle()
>>> entries = style.sort(bib.entries.values())
>>> [entry.key for entry in entries]
['b', 'a', 'e', 'd', 'c']
>>> list(style.format_labels(entries))
['Eckart and Young, 1936', 'Migdał, 2025', 'Pearl, 2009a', 'Pearl, 2009b', 'Pearl et al., 2014']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from string import ascii_lowercase
from typing import Any

from pybtex.database import Entry, Person
from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle

__all__ = ["AuthorYearLabelStyle", "AuthorYearSortingStyle", "AuthorYearStyle", "setup"]


def _plain(latex: str) -> str:
    """``latex`` as plain text: accents decoded, braces dropped."""
    return Text.from_latex(latex).render_as("text")


def _last_name(person: Person) -> str:
    return _plain(" ".join(person.prelast_names + person.last_names))


def _people(entry: Entry) -> list[Person]:
    return list(entry.persons.get("author") or entry.persons.get("editor") or [])


def _author_text(entry: Entry) -> str:
    """The names as the in-text citations give them: one, two, or the first et al."""
    names = [_last_name(person) for person in _people(entry)]
    if not names:
        return _plain(entry.fields.get("key", entry.key))
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Author, year", made unique by a letter after the year."""

    def format_labels(self, sorted_entries: Iterable[Entry]) -> Iterator[str]:
        """One label per entry, in the order given (the sorted order)."""
        labels = [
            f"{_author_text(entry)}, {entry.fields.get('year', 'n.d.')}" for entry in sorted_entries
        ]
        counts, seen = Counter(labels), Counter[str]()
        for label in labels:
            if counts[label] == 1:
                yield label
            else:
                yield label + ascii_lowercase[seen[label]]
                seen[label] += 1


class AuthorYearSortingStyle(BaseSortingStyle):
    """Sort by the authors' (or editors') last and first names, then year, then title."""

    def sorting_key(self, entry: Entry) -> tuple[Any, ...]:
        """Last names, year, title, first names: plain text, case-folded.

        A sole author sorts before the same first author with others.
        """
        people = _people(entry)
        last = tuple(_last_name(person).casefold() for person in people)
        first = tuple(
            _plain(" ".join(person.first_names + person.middle_names)).casefold()
            for person in people
        )
        title = _plain(entry.fields.get("title", "")).casefold()
        return (last, entry.fields.get("year", ""), title, first)


class AuthorYearStyle(UnsrtStyle):
    """pybtex's ``unsrt`` entries with author-year labels, sorted by author and year."""

    default_label_style = "author_year"
    default_sorting_style = "author_year_plain"


# Registered on import, so that the style also works outside Sphinx (the doctest).
register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle, force=True)
register_plugin("pybtex.style.sorting", "author_year_plain", AuthorYearSortingStyle, force=True)
register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle, force=True)


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point: the styles are registered with pybtex on import."""
    return {"parallel_read_safe": True, "parallel_write_safe": True}
