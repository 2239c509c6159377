"""How to cite the tool (CITATION.cff) and what it runs (references.bib): both parse, and say what they should."""

from __future__ import annotations

import re
import tomllib

import yaml

from tests.conftest import REPO

# the libraries and methods vramlab runs -> their key in references.bib
CITED = {"PyTorch": "paszke2019pytorch", "Transformers": "wolf2020transformers", "PEFT": "peft",
         "TRL": "vonwerra2022trl", "bitsandbytes": "dettmers2022optimizers", "QLoRA": "dettmers2023qlora",
         "LoRA": "hu2022lora", "rsLoRA": "kalajdzievski2023rslora", "FlashAttention-2": "dao2024flashattention2",
         "Unsloth": "unsloth", "Liger-Kernel": "hsu2024liger", "lm-evaluation-harness": "eval-harness",
         "Snakemake": "molder2021snakemake"}


def test_citation_cff_names_the_tool_its_version_and_license_and_no_person():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["message"]
    assert cff["title"] == project["name"] == "vramlab"
    assert cff["version"] == project["version"]
    assert cff["license"] == project["license"] == "Apache-2.0"
    assert cff["authors"] == [{"name": "vramlab contributors"}]


def _entries(text: str) -> dict[str, tuple[str, str]]:
    """key -> (entry type, body), for a BibTeX file whose entries start at a line's start and close it with '}'."""
    found = {}
    for match in re.finditer(r"^@(\w+)\{([^,\s]+),\n(.*?)^\}$", text, flags=re.M | re.S):
        kind, key, body = match.groups()
        assert key not in found, f"{key} twice"
        found[key] = (kind.lower(), body)
    return found


def test_references_bib_has_an_entry_for_each_library_and_method():
    text = (REPO / "references.bib").read_text()
    entries = _entries(text)
    assert text.count("\n@") == len(entries)  # every entry parsed
    assert set(CITED.values()) <= set(entries)
    for key, (kind, body) in entries.items():
        assert kind in {"article", "inproceedings", "misc"}, key
        assert body.count("{") == body.count("}"), key
        fields = dict(re.findall(r"^\s+(\w+)\s*=\s*(.+?),?$", body, flags=re.M))
        assert {"title", "author", "year"} <= set(fields), key
        assert re.fullmatch(r"\{\d{4}\}", fields["year"]), key
        assert kind != "article" or "journal" in fields, key
        assert kind != "inproceedings" or "booktitle" in fields, key
