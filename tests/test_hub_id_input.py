"""A cell's model that is neither a local model nor a Hugging Face hub id (`org/name`): refused in one line naming
the place and what a hub id is, by vramlab's own words, from `validate` and from `estimate --set` alike, rather than
huggingface_hub's HFValidationError escaping from the cache lookup as a traceback."""

from __future__ import annotations

import pytest

from harness.stack.models.hub import hub_id_problem, is_hub_id
from tests.refusals import refused

MATRIX = ('fixed: {{model: "{model}", data: zipf, device: cpu, steps: 1, warmup_steps: 0, context: 64}}\n'
          "axes: {{adapter: [lora, rslora]}}\n")
NO_HUB_ID = [
    pytest.param("org/name/extra", "at most two parts, org/name, but this one has 3", id="t10-037-three-parts"),
    pytest.param("org/na me", "'na me' is no hub name", id="t10-041-space"),
    pytest.param("org/", "a part of it is empty", id="t10-042-empty-name"),
    pytest.param("org/a--b", "no '--' or '..'", id="double-dash"),
]


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize(("model", "said"), NO_HUB_ID)
def test_a_model_that_is_no_hub_id_is_refused_by_validate_in_one_line(tmp_path, capsys, model, said):
    path = tmp_path / "m.yaml"
    path.write_text(MATRIX.format(model=model))
    err = refused(["validate", str(path)], capsys, said)
    assert f"adapter=lora.model: {model!r} is neither a local model nor a Hugging Face hub id" in err, err
    assert "HFValidationError" not in err and "give org/name of the hub, or a local model" in err, err


def test_estimate_refuses_a_three_part_hub_id_in_one_line(capsys):  # t10-044
    err = refused(["estimate", "--set", "model=org/name/extra"], capsys, "at most two parts, org/name")
    assert "--set: cell.model: 'org/name/extra' is neither a local model nor a Hugging Face hub id" in err, err


@pytest.mark.parametrize("model", ["acme/tiny", "gpt2", "Qwen/Qwen2.5-0.5B", "org/name_v1.5", "org/_x"])
def test_a_well_formed_hub_id_is_one(model):
    assert hub_id_problem(model) is None and is_hub_id(model)
