"""A file whose name starts with '-' given bare on a command line: argparse takes it for an option, so its error
would name only the missing argument; the line says which word was taken so and how to give it as a file."""

from __future__ import annotations

import pytest

from harness import cli

MATRIX = ('fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, warmup_steps: 0, steps: 1, context: 64}\n'
          "axes: {adapter: [lora, rslora]}\n")


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], said: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1 and said in err, err
    return err


TAKEN = "'-x.yaml' starts with '-', so it was read as an option: give it as ./-x.yaml (or after --)"


@pytest.fixture
def dashed(tmp_path, monkeypatch):
    (tmp_path / "-x.yaml").write_text(MATRIX)
    monkeypatch.chdir(tmp_path)


def test_a_dashed_file_for_a_required_argument_is_named_with_how_to_give_it(dashed, capsys):  # t10-118
    err = refused(["validate", "-x.yaml"], capsys, TAKEN)
    assert "the following arguments are required: matrix" in err, err


def test_a_dashed_file_for_an_optional_argument_is_named_with_how_to_give_it(dashed, capsys):
    err = refused(["estimate", "-x.yaml"], capsys, TAKEN)
    assert "unrecognized arguments: -x.yaml" in err, err


def test_an_unknown_option_that_names_no_file_gets_no_such_word(dashed, capsys):
    err = refused(["validate", "--bogus"], capsys, "the following arguments are required: matrix")
    assert "starts with '-'" not in err, err
