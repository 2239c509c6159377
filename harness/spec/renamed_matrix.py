"""Results are kept per matrix (results/<matrix>/, keyed by cell id), so a matrix file renamed gets a new, empty
results folder and all its cells are planned again. That is said, not guessed at: where the matrix has no
results folder yet and another folder, whose owner file (.matrix) names a matrix file that is gone, holds some of
its cells, the run names that folder and the `mv` that keeps its results."""

from __future__ import annotations

from pathlib import Path

from harness.spec.matrix import MatrixError, results_folder_owner
from harness.spec.owners import owner_file


def orphaned_results_hint(results_dir: Path, name: str, ids: list[str]) -> str | None:
    """One line naming a folder of results of this matrix's cells left by a renamed matrix file, or None."""
    results_dir = Path(results_dir)
    if (results_dir / name).exists() or not results_dir.is_dir():
        return None
    for folder in sorted(p for p in results_dir.iterdir() if (p / ".matrix").is_file()):
        try:
            owner = results_folder_owner(folder / ".matrix")
        except MatrixError:
            continue  # another folder's damaged owner file is said when that folder's matrix runs, not here
        held = [i for i in ids if (folder / f"{i}.json").is_file()]
        if held and not owner_file(owner, results_dir).is_file():
            return (f"{folder}/ holds {len(held)} of the {len(ids)} cells of '{name}', measured under the matrix "
                    f"file {owner}, which is gone; if '{name}' is that file renamed, keep them with `mv {folder} "
                    f"{results_dir / name} && rm {results_dir / name}/.matrix` (otherwise they are measured again)")
    return None
