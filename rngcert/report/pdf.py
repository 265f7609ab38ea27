"""report.pdf: the report's HTML, opened by a one-page certificate, printed by WeasyPrint.

WeasyPrint is an optional extra (``pip install 'rngcert[pdf]'``) and needs Pango's system
libraries (Debian: ``apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0``).
:func:`available` says whether both are there, with the reason when not, so that ``--pdf`` can
stop before a long certification rather than after it.
"""

from __future__ import annotations

from pathlib import Path

from rngcert.errors import RngcertError

INSTALL = (
    "install the pdf extra (pip install 'rngcert[pdf]') and Pango's system libraries "
    "(Debian/Ubuntu: apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0)"
)


class PdfUnavailable(RngcertError):
    """WeasyPrint or its system libraries are missing."""


def available() -> tuple[bool, str]:
    """(True, version) when WeasyPrint imports with its libraries; else (False, the reason)."""
    try:
        import weasyprint
    except ImportError as exc:
        return False, f"WeasyPrint is not installed ({exc}); {INSTALL}"
    except OSError as exc:  # the Python package is there, Pango is not
        return False, f"WeasyPrint cannot load its system libraries ({exc}); {INSTALL}"
    return True, weasyprint.__version__


def write_pdf(html: str, path: str | Path) -> Path:
    """Print ``html`` (self-contained: data-URI figures, inline CSS) to ``path`` as PDF.

    Raises
    ------
    PdfUnavailable
        WeasyPrint or Pango missing (the message says what to install).
    """
    ok, why = available()
    if not ok:
        raise PdfUnavailable(f"--pdf: {why}")
    import logging

    import weasyprint

    logging.getLogger("weasyprint").setLevel(logging.ERROR)  # unsupported-CSS chatter (screen-only rules)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    path = Path(path)
    weasyprint.HTML(string=html, base_url=str(path.parent)).write_pdf(str(path))
    return path
