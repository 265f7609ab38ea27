"""rngcert: statistical certification of the randomness of casino gaming equipment.

Outcomes must be statistically independent, uniformly distributed over their range and
unpredictable. rngcert reads wheel results, shoe orders and raw RNG output, runs batteries of
tests filed under those three requirements, and writes certification reports.

From Python, :func:`certify_outcomes` certifies an array or a pandas Series of results, and
:mod:`rngcert.stats` holds the individual tests.
"""

__version__ = "0.3.0"

__all__ = ["__version__", "certify_outcomes"]


def certify_outcomes(outcomes, wheel="european", *, table=None, seed=None, alpha=0.01, n_resamples=9999, required_bias=None, power=0.9, figures=True):
    """Certify a sequence of wheel results, exactly as ``rngcert certify`` certifies a log.

    The results are written, one per line under a ``result`` header, to a temporary CSV file
    named after the table, and that file goes through the same reader and pipeline as the
    command: the same labels are accepted ("0"-"36", "00", symbols, "void"), the same battery
    runs, and the report is the same dictionary ``rngcert certify`` writes to report.json. The
    input's SHA-256 is that of the CSV text, so ``rngcert certify`` on a file with the same lines
    gives the same statistics.

    Parameters
    ----------
    outcomes : (n,) array_like or pandas.Series
        Results in spin order: pocket labels (ints or strings) or money-wheel symbols.
    wheel : str or Wheel
        Packaged wheel id (``european``, ``american``, ``money-wheel-52``, ``crazy-time``), a
        wheel TOML path, or a loaded :class:`rngcert.equipment.wheel.Wheel`.
    table : str, optional
        Table name; default the Series' name, else ``"outcomes"``.
    seed : int, optional
        Root seed of the Monte Carlo p-values (fresh entropy, recorded, when None).
    alpha, n_resamples, required_bias, power
        As the options of ``rngcert certify``.
    figures : bool
        Draw the report's figures (needed for :meth:`Certification.write` to include them).

    Returns
    -------
    rngcert.pipeline.certify_wheel.Certification
        ``.report`` (the report.json dictionary), ``.verdict``, ``.figures``; ``.write(dir)``
        writes the report folder; in Jupyter it shows the verdict and the summary.

    Raises
    ------
    rngcert.errors.InputError
        No outcome, or nothing readable (unknown labels are rejected rows, as in a log: the report's
        ``rejected_sample`` gives each one's ``index`` in ``outcomes``), or
        ``outcomes`` not one-dimensional (a DataFrame or a 2-D array: pass one column).

    Examples
    --------
    >>> import numpy as np
    >>> import rngcert
    >>> spins = np.random.default_rng(7).integers(0, 37, 7400)
    >>> cert = rngcert.certify_outcomes(spins, "european", seed=1, n_resamples=999, figures=False)
    >>> cert.verdict
    'PASS'
    >>> chi = [t for t in cert.report["tables"][0]["battery"]["tests"] if t["name"] == "pocket_chisquare"][0]
    >>> chi["df"], chi["n"]
    (36, 7400)
    """
    from pathlib import Path

    import numpy as np

    import rngcert.scratch as scratch
    from rngcert.equipment.wheel import Wheel, load_wheel
    from rngcert.errors import InputError
    from rngcert.pipeline.certify_wheel import certify_log
    from rngcert.pipeline.options import CertifyOptions

    # the options checked first, named as this function's (the same ranges as rngcert certify's options)
    CertifyOptions.of(where="certify_outcomes", alpha=alpha, seed=seed, n_resamples=n_resamples, required_bias=required_bias, power=power)
    w = wheel if isinstance(wheel, Wheel) else load_wheel(wheel)
    name = table or getattr(outcomes, "name", None) or "outcomes"
    values = outcomes.to_numpy() if hasattr(outcomes, "to_numpy") else np.asarray(outcomes)
    if values.ndim != 1:  # a DataFrame or a 2-D array was flattened row by row: its columns interleaved as spins
        raise InputError(f"certify_outcomes: outcomes must be one-dimensional (results in spin order), got shape {values.shape}"
                         + (" (a DataFrame: pass its result column, e.g. df['result'])" if hasattr(outcomes, "columns") else ""))
    if values.size == 0:
        raise InputError("certify_outcomes: no outcomes given")
    if values.dtype.kind == "f" and np.all(np.isfinite(values)) and np.all(values == np.round(values)):
        values = values.astype(np.int64)
    kind = "pandas Series" if hasattr(outcomes, "to_numpy") else "array"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name))[:60] or "outcomes"
    with scratch.folder("rngcert-") as d:
        p = Path(d) / f"{safe}.csv"
        p.write_text("result\n" + "\n".join(str(v) for v in values.tolist()) + "\n", encoding="utf-8")
        try:
            cert = certify_log(
                [p], w, alpha=alpha, seed=seed, n_resamples=n_resamples, required_bias=required_bias, power=power,
                command="", figures=figures, notes=[f"certified from a Python {kind} of {values.size} results (rngcert.certify_outcomes)"],
            )
        except InputError as e:  # named by the outcomes, not by the temporary file (gone when the caller reads it)
            raise type(e)(str(e).replace(str(p), f"certify_outcomes: {kind} {name!s}")) from e
    for f in cert.report["inputs"]:
        f["path"] = f"{kind} {name!s} ({values.size} values; SHA-256 of its CSV text, one result per line under 'result')"
        f["format"] = f"python {kind}"
    for r in cert.report.get("rejected_sample") or []:  # line 2 of the CSV text is outcomes[0]
        r.update(file=f"{kind} {name!s}", index=r["line"] - 2)
    cert.log.rejected = _Renamed(cert.log.rejected, f"{kind} {name!s}")  # rejects.csv of cert.write()
    cert.report.pop("rerun", None)  # the temporary file is gone: verify --rerun needs a log
    return cert


class _Renamed:
    """A log's rejected rows with ``file`` replaced by ``label``, made as they are read (rejects.csv of
    :func:`certify_outcomes`: its temporary file is gone; ``line`` is the line of the CSV text whose
    SHA-256 the report records, ``outcomes[line - 2]``)."""

    def __init__(self, rows, label: str):
        self.rows, self.label = rows, label

    def _one(self, r):
        from dataclasses import replace

        return replace(r, file=self.label)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):
        got = self.rows[i]
        return [self._one(r) for r in got] if isinstance(i, slice) else self._one(got)

    def __iter__(self):
        return (self._one(r) for r in self.rows)

