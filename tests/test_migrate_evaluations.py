"""`vramlab migrate` moves a result of an older budget spelling to its cell's id with its evaluations, or not at
all: where the new id's evaluations folder is taken, moving the result alone would leave its evaluations without
their result, so it stays where it is, said in one line (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

from harness import cli
from harness.spec.cells import cell_id_of
from harness.spec.settings import defaults
from tests.conftest import REPO


def old_spelling(folder: Path) -> tuple[str, str]:
    """A committed smoke result as written with another spelling of its budget, with one evaluation: (its id then,
    its id now)."""
    data = json.loads(sorted((REPO / "results" / "smoke").glob("*.json"))[0].read_text())
    config = {**data["config"], "budget": "16384MiB"}
    old = cell_id_of({**defaults(), **config})
    (folder / "evaluations" / old).mkdir(parents=True)
    (folder / f"{old}.json").write_text(json.dumps({**data, "config": config, "cell_id": old}))
    evaluation = {"kind": "evaluation", "schema_version": 1, "cell_id": old, "name": data["name"], "matrix": "smoke",
                  "task": "t", "status": "skipped", "reason": "r"}
    (folder / "evaluations" / old / "t.json").write_text(json.dumps(evaluation))
    return old, data["cell_id"]


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_migrate_never_leaves_evaluations_without_their_result(tmp_path, capsys):
    folder = tmp_path / "results" / "smoke"
    old, new = old_spelling(folder)
    (folder / "evaluations" / new).mkdir()
    (folder / "evaluations" / new / "t.json").write_text((folder / "evaluations" / old / "t.json").read_text()
                                                         .replace(old, new))
    before = files(folder)
    assert cli.main(["migrate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert f"kept {folder / old}.json" in err and f"{folder / 'evaluations' / new}/ already holds evaluations" in err
    assert files(folder) == before


def test_migrate_moves_a_result_with_its_evaluations(tmp_path, capsys):
    folder = tmp_path / "results" / "smoke"
    _, new = old_spelling(folder)
    assert cli.main(["migrate", str(folder)]) == 0, capsys.readouterr().err
    assert sorted(files(folder)) == [f"{new}.json", f"evaluations/{new}/t.json"]
