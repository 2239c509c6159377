"""YAML 1.1's number forms that do not read as written (`1:30` base 60, `0x10` hexadecimal, `010` octal, `0b10`
binary, `1_6` without its underscore): refused where a matrix file is read, and in `estimate --set`, naming the key,
the line, the form and the number it would be, instead of a cell of a number the file does not show."""

from __future__ import annotations

import pytest

from harness.spec.matrix import MatrixError, expand, set_value
from tests.refusals import refused

MATRIX = ('fixed: {{model: "arch:tiny-llama", data: zipf, device: cpu, warmup_steps: 0, context: 64, {setting}}}\n'
          "axes: {{adapter: [lora, rslora]}}\n")
TRAPS = [
    pytest.param("lora_rank: 1:30", "lora_rank: YAML 1.1 reads 1:30 as base 60", "90", id="t10-105-sexagesimal"),
    pytest.param("lora_rank: 0x10", "lora_rank: YAML 1.1 reads 0x10 as hexadecimal", "16", id="t10-106-hex"),
    pytest.param("lora_rank: 1_6", "lora_rank: YAML 1.1 reads 1_6 as a number without its underscores", "16",
                 id="t10-107-underscore"),
    pytest.param("steps: 1:30", "steps: YAML 1.1 reads 1:30 as base 60", "90", id="t10-119-steps-sexagesimal"),
    pytest.param("lora_rank: 010", "lora_rank: YAML 1.1 reads 010 as octal", "8", id="octal"),
    pytest.param("lora_rank: 0b10", "lora_rank: YAML 1.1 reads 0b10 as binary", "2", id="binary"),
    pytest.param("learning_rate: 1_0.5e-5", "learning_rate: YAML 1.1 reads 1_0.5e-5 as a number without", "0.000105",
                 id="underscored-float"),
]


@pytest.mark.parametrize(("setting", "said", "number"), TRAPS)
def test_a_yaml_11_number_form_is_refused_naming_the_number_it_would_be(tmp_path, capsys, setting, said, number):
    path = tmp_path / "m.yaml"
    path.write_text(MATRIX.format(setting=setting))
    err = refused(["validate", str(path)], capsys, said)
    assert f"{path}: line 1: " in err and f": {number}; write {number} if that number is meant" in err, err


def test_a_yaml_11_number_form_in_an_axis_is_refused_with_its_line(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text('fixed: {model: "arch:tiny-llama", device: cpu}\naxes:\n  lora_rank: [8, 0x10]\n')
    with pytest.raises(MatrixError, match=r"line 3: lora_rank: YAML 1.1 reads 0x10 as hexadecimal: 16"):
        expand(str(path), check_model=False)


def test_estimate_set_refuses_a_yaml_11_number_form(capsys):
    refused(["estimate", "--set", "model=arch:tiny-llama", "--set", "lora_rank=0x10"], capsys,
            "--set lora_rank=0x10: YAML 1.1 reads 0x10 as hexadecimal: 16; write 16")


@pytest.mark.parametrize("text", ["16", "-3", "0", "+5", "2e-4", "2.0e-4", "0.5", ".inf", "'0x10'", '"1:30"'])
def test_plain_decimals_and_quoted_text_read_as_written(text):
    assert set_value("k", text) is not None
