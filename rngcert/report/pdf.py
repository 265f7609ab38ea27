"""report.pdf: the report's HTML, opened by a one-page certificate, printed by WeasyPrint.

WeasyPrint is an optional extra (``pip install 'rngcert[pdf]'``) and needs Pango's system
libraries (Debian: ``apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0``).
:func:`available` says whether both are there, with the reason when not, so that ``--pdf`` can
stop before a long certification rather than after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

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


def _weasyprint():
    """WeasyPrint, imported with its chatter quietened; :class:`PdfUnavailable` when it cannot load."""
    ok, why = available()
    if not ok:
        raise PdfUnavailable(f"--pdf: {why}")
    import logging

    import weasyprint

    logging.getLogger("weasyprint").setLevel(logging.ERROR)  # unsupported-CSS chatter (screen-only rules)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    return weasyprint


#: The anchors that end the certificate and begin the report (report.html.j2)
CERT_END, REPORT_START = "cert-end", "report-start"


def certificate_fits(document) -> bool:
    """Whether a rendered WeasyPrint document has the certificate's last block on page 1 and the
    report's first line on page 2 (a certificate-only document: one page)."""
    pages = document.pages
    if not pages or CERT_END not in pages[0].anchors:
        return False
    starts = [i for i, p in enumerate(pages) if REPORT_START in p.anchors]
    return starts == [1] or (not starts and len(pages) == 1)


def write_fitted(render: Callable[[int, bool], str], levels: int, path: str | Path) -> tuple[Path, int]:
    """Print the report with the fullest certificate that fits page one.

    Parameters
    ----------
    render : callable
        ``render(level, cert_only)``: the report's HTML with the certificate at compaction ``level``
        (0: everything; :mod:`rngcert.report.certificate`), or with ``cert_only`` the certificate alone.
    levels : int
        Number of levels; the last one is printed when none fits.
    path : str or Path
        The PDF to write.

    Returns
    -------
    (Path, int)
        The path and the level printed.

    Raises
    ------
    PdfUnavailable
        WeasyPrint or Pango missing (the message says what to install).
    """
    weasyprint = _weasyprint()
    path = Path(path)

    def doc(level: int, cert_only: bool):
        return weasyprint.HTML(string=render(level, cert_only), base_url=str(path.parent)).render()

    # the level from the certificate alone (one page, cheap), then the whole report checked once more: the page
    # numbers the certificate points to are known only there
    level = next((k for k in range(levels - 1) if certificate_fits(doc(k, True))), levels - 1)
    full = doc(level, False)
    while not certificate_fits(full) and level < levels - 1:
        level += 1
        full = doc(level, False)
    full.write_pdf(str(path))
    return path, level
