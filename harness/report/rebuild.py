"""`vramlab report --all`: every committed matrix's tables, report, methods and charts rebuilt from the committed
result files, byte for byte what is committed (tests/test_readme.py holds them to it). A matrix whose committed
tables list pending cells was measured over several sessions and is aggregated as partial, as it was made. A
ceiling report (reports/<matrix>/ceiling.csv) is rebuilt from its kept probes; a probe is never run here. The
memory estimate's calibration (reports/estimate/) is rebuilt from the result folders its calibration.md names; the
claims report (reports/claims/, harness/report/claims/) from the results it reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.core.errors import UsageError, one_line
from harness.report.aggregate import aggregate
from harness.report.build import build_report
from harness.report.calibration import rebuild_calibration
from harness.report.ceiling import settled_search
from harness.report.ceiling_report import write_report
from harness.report.claims import build as claims
from harness.results.ceiling import ProbeMissing
from harness.results.lock import result_lock
from harness.spec.matrix import ceiling_spec, expand, matrix_path, results_folder_owner
from harness.spec.owners import owner_file


def committed_matrices(reports_dir: Path) -> list[str]:
    """The matrices with a report: a folder of reports_dir with a cells.csv."""
    return sorted(path.parent.name for path in reports_dir.glob("*/cells.csv"))


def partial(reports_dir: Path, matrix: str) -> bool:
    """Whether the matrix's committed tables hold cells not run yet (then it is aggregated as partial)."""
    return bool(pd.read_csv(reports_dir / matrix / "cells.csv")["status"].eq("pending").any())


def rebuild(matrix: str, results_dir: Path, reports_dir: Path, out_dir: Path) -> list[Path]:
    """One matrix's tables and report, from results_dir, into out_dir/<matrix>/ (out_dir may be reports_dir)."""
    aggregate(matrix, results_dir, out_dir, partial=partial(reports_dir, matrix))
    written = build_report(out_dir / matrix)
    # a chart the data no longer call for (a loss chart of random weights, say) is not left behind, stale; a file
    # being written (its temporary name is hidden) is no chart yet
    for chart in [*(out_dir / matrix).glob("[!.]*.pdf"), *(out_dir / matrix).glob("[!.]*.png")]:
        if chart not in written:
            chart.unlink()
    return written


def ceiling_matrices(reports_dir: Path) -> list[str]:
    return sorted(path.parent.name for path in reports_dir.glob("*/ceiling.csv"))


def rebuild_ceiling(matrix: str, results_dir: Path, out_dir: Path) -> list[Path]:
    spec = ceiling_spec(matrix)
    cells = expand(matrix)
    return write_report(cells[0].matrix, [settled_search(matrix, cell, spec, results_dir) for cell in cells], out_dir)


def source_matrix(matrix: str, results_dir: Path) -> str:
    """The matrix file of reports/<matrix>/: the one of that name under ablations/, or the one its results folder's
    owner file names (a matrix run from a path elsewhere)."""
    marker = results_dir / matrix / ".matrix"
    if matrix_path(matrix).is_file() or not marker.is_file():
        return matrix
    return str(owner_file(results_folder_owner(marker), results_dir))


def rebuild_all(results_dir: Path, reports_dir: Path, out_dir: Path | None = None,
                matrices: list[str] | None = None, skipped: list[str] | None = None) -> list[Path]:
    """Every report rebuilt. With `skipped`, a report that cannot be rebuilt is one line there and the others are
    rebuilt all the same; without it, the first such stops the rebuild."""
    out = out_dir or reports_dir
    published = [*committed_matrices(reports_dir), *ceiling_matrices(reports_dir),
                 *(["claims"] if (reports_dir / "claims" / "claims.md").is_file() else [])]
    if matrices is None and not published:  # else nothing is rebuilt, and the silence reads as a rebuild
        raise UsageError(f"--reports-dir {reports_dir} holds no report to rebuild (no <matrix>/cells.csv, ceiling.csv "
                         "or claims/claims.md in it); give the reports folder of a checkout (default: reports)")

    def another_run(holder: str, lock: Path) -> None:
        raise UsageError(f"another `vramlab report --all` is writing into {out}/ ({holder}; lock {lock}); run this one "
                         "again once it has ended")

    with result_lock(out / ".report-all", another_run):  # one rebuild at a time: each removes the charts it has not
        return _rebuild_all(results_dir, reports_dir, out, matrices, skipped)


def _rebuild_all(results_dir: Path, reports_dir: Path, out: Path, matrices: list[str] | None,
                 skipped: list[str] | None) -> list[Path]:
    # each named by the folder it is rebuilt from, --reports-dir as given
    jobs = [(f"{reports_dir / m}/", lambda m=m: rebuild(source_matrix(m, results_dir), results_dir, reports_dir, out))
            for m in matrices or committed_matrices(reports_dir)]
    if matrices is None:
        jobs += [(f"{reports_dir / m}/ceiling", lambda m=m: rebuild_ceiling(m, results_dir, out))
                 for m in ceiling_matrices(reports_dir)]
        jobs.append((f"{reports_dir / 'estimate'}/", lambda: rebuild_calibration(results_dir, reports_dir, out)))
        if (reports_dir / "claims" / "claims.md").is_file():  # the published claims beside their measurements
            jobs.append((f"{reports_dir / 'claims'}/", lambda: claims.write(results_dir, out)))
    paths: list[Path] = []
    for what, job in jobs:
        try:
            paths += job()
        except (UsageError, ProbeMissing) as err:
            if skipped is None:
                raise
            skipped.append(f"{what}: {one_line(err)}; not rebuilt")
    return paths
