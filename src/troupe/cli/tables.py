"""Tables that fit the terminal: long cells end in "…", columns worth least go first.

Every listing (``trace list``, ``sessions list``, ``secrets list``) describes
its columns as data: a header, how much the column is worth, and whether its
cells may be cut. :func:`fitted_table` then gives each column a fixed width
so the table is never wider than the console: a header is never narrower than
itself (no word of it is broken), ids, times and numbers are never cut, and
when even the narrowest layout is too wide the columns worth least are left
out. What a cut cell or a left-out column held is in the command's ``--json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from ..terminal_text import visible

SEPARATOR = 2
"""Columns between two columns: a right padding and SIMPLE_HEAD's blank divider."""


@dataclass(frozen=True)
class Column:
    """One column of a listing."""

    header: str
    worth: int
    """Higher is kept longer: at a narrow width the lowest goes first."""
    cut: bool = False
    """Cells may be cut to ``min_width`` with "…" (free text); otherwise shown whole."""
    min_width: int = 8
    """The narrowest a cut column gets (never narrower than its header)."""
    justify: Literal["left", "right"] = "left"


def _natural(column: Column, cells: Sequence[str]) -> int:
    return max([cell_len(column.header), *(cell_len(c) for c in cells)])


def _narrowest(column: Column, natural: int) -> int:
    if not column.cut:
        return natural
    return min(natural, max(column.min_width, cell_len(column.header)))


def column_widths(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> list[int | None]:
    """Each column's width (None: left out) so that the table fits ``width``."""
    naturals = [_natural(c, [row[i] for row in rows]) for i, c in enumerate(columns)]
    kept = list(range(len(columns)))

    def need(indexes: list[int], widths: list[int]) -> int:
        return sum(widths[i] for i in indexes) + SEPARATOR * (len(indexes) - 1)

    narrow = [_narrowest(c, n) for c, n in zip(columns, naturals, strict=True)]
    while len(kept) > 1 and need(kept, narrow) > width:
        kept.remove(min(kept, key=lambda i: columns[i].worth))
    widths = {i: narrow[i] for i in kept}
    # What is left goes to the cut columns, the most valuable first, up to their natural width.
    room = width - need(kept, narrow)
    for i in sorted((i for i in kept if columns[i].cut), key=lambda i: -columns[i].worth):
        grow = min(room, naturals[i] - widths[i])
        widths[i] += max(grow, 0)
        room -= max(grow, 0)
    return [widths.get(i) for i in range(len(columns))]


def fitted_table(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> Table:
    """A Rich table of ``rows`` no wider than ``width``.

    Cells are text from people, models and stores: each is shown on one line,
    as written (never read as markup), with control characters made visible.
    """
    cells = [[" ".join(visible(cell).split()) for cell in row] for row in rows]
    widths = column_widths(columns, cells, width)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    kept = [i for i, w in enumerate(widths) if w is not None]
    for i in kept:
        column = columns[i]
        table.add_column(
            column.header,
            justify=column.justify,
            width=widths[i],
            no_wrap=True,
            overflow="ellipsis",
        )
    for row in cells:
        table.add_row(*(Text(row[i]) for i in kept))
    return table
