r"""The one plain-text table of the reports and commands (``freeprob verify``'s table, the
readout comparisons, ``freeprob sweep show``, ``freeprob moments``/``table``/``density``).

Standard library only; it imports nothing from freeprob.

Source: this project's output formats (issue #16: one function per job).
"""
from __future__ import annotations

__all__ = ["text_table"]


def text_table(header, rows, *, align="l", rule=False, strip=True, pad_last=True) -> str:
    r"""Columns separated by two spaces, each as wide as its widest cell (header included).

    Parameters
    ----------
    header : sequence
        The column titles (``str()`` of each).
    rows : sequence of sequences
        The cells (``str()`` of each), as many per row as ``header``.
    align : str
        ``"l"`` (left) or ``"r"`` (right) per column; the last letter repeats for the
        remaining columns (``"llr"``: two left-aligned columns, then right-aligned ones).
    rule : bool
        A line of dashes under the header.
    strip : bool
        Remove trailing spaces from each line.
    pad_last : bool
        Pad the last column to its width (else it is written as it is).

    Returns
    -------
    str
        The lines joined by newlines (no final newline).

    Raises
    ------
    Nothing itself.

    >>> print(text_table(["n", "m_n"], [[0, 1], [1, "1/2"]], align="r"))
    n  m_n
    0    1
    1  1/2
    """
    header = [str(c) for c in header]
    body = [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    last = len(widths) - 1

    def line(cells):
        out = []
        for i, (c, w) in enumerate(zip(cells, widths)):
            if i == last and not pad_last:
                out.append(c)
            else:
                out.append(c.rjust(w) if align[min(i, len(align) - 1)] == "r" else c.ljust(w))
        text = "  ".join(out)
        return text.rstrip() if strip else text

    lines = [line(header)]
    if rule:
        lines.append(line(["-" * w for w in widths]))
    return "\n".join(lines + [line(r) for r in body])
