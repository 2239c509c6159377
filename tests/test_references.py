"""references.bib as a paper uses it: every key the generated methods cite (Markdown [@key], LaTeX \\cite{key}) is an
entry, the models, methods, data and claim sources the study rests on each have one, BibTeX reads every entry
without a warning, and CITATION.cff says when the release was made."""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess

import pytest
import yaml

from harness.report.methods import CITES
from tests.conftest import REPO
from tests.test_citation import _entries

BIB = REPO / "references.bib"
# what the study rests on beyond the libraries tests/test_citation.py names -> its key
RESTS_ON = {"Qwen2.5-Coder": "hui2024qwen25coder", "Qwen3": "yang2025qwen3", "Llama 3": "grattafiori2024llama3",
            "SmolLM2": "allal2025smollm2", "gradient checkpointing": "chen2016checkpointing",
            "Cut Cross-Entropy": "wijmans2025cce", "RULER": "hsieh2024ruler",
            "llama.cpp and GGUF": "gerganov2023llamacpp",
            "accelerate": "gugger2022accelerate", "datasets": "lhoest2021datasets", "GIMP manual": "gimphelp2023",
            "Debian manual pages": "manpagesl10n", "the seed blog": "inlab2026seed",
            "the VRAMfarm guide": "vramfarm2026guide", "Unsloth's blog": "unsloth2024llama33"}


def cited_keys() -> dict[str, set[str]]:
    """Every key each committed methods file cites."""
    found = {}
    for path in sorted((REPO / "reports").glob("*/methods.*")):
        text = path.read_text()
        keys = {k.strip().lstrip("@") for group in re.findall(r"\[(@[^\]]+)\]", text) for k in group.split(";")}
        keys |= {k.strip() for group in re.findall(r"\\cite\{([^}]+)\}", text) for k in group.split(",")}
        found[str(path.relative_to(REPO))] = keys
    return found


def test_every_key_the_methods_cite_is_an_entry():
    entries = set(_entries(BIB.read_text()))
    cited = cited_keys()
    assert any(cited.values())  # the methods do cite
    for path, keys in cited.items():
        assert keys <= entries, (path, keys - entries)
    assert set(CITES.values()) <= entries


def test_the_models_methods_data_and_claim_sources_each_have_an_entry():
    entries = _entries(BIB.read_text())
    assert set(RESTS_ON.values()) <= set(entries), set(RESTS_ON.values()) - set(entries)
    for key in ("gimphelp2023", "manpagesl10n"):  # the corpora's texts are not under vramlab's licence
        assert "GFDL" in entries[key][1] or "GPL" in entries[key][1], key
    assert "0.4.13" in entries["eval-harness"][1]  # the version that ran


def test_citation_cff_says_when_it_was_released():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    released = cff["date-released"]
    released = released if isinstance(released, datetime.date) else datetime.date.fromisoformat(released)
    assert released.year >= 2026


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bibtex") is None or shutil.which("pdflatex") is None,
                    reason="bibtex is not installed (apt-get install texlive-latex-recommended)")
def test_bibtex_reads_every_entry_without_a_warning(tmp_path):
    shutil.copy(BIB, tmp_path / "references.bib")
    (tmp_path / "paper.tex").write_text("\\documentclass{article}\n\\usepackage{url}\n\\begin{document}\n"
                                        "\\nocite{*}\n\\bibliographystyle{plain}\n\\bibliography{references}\n"
                                        "\\end{document}\n")
    for command in (["pdflatex", "-interaction=nonstopmode", "paper.tex"], ["bibtex", "paper"]):
        run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout[-2000:]
    log = (tmp_path / "paper.blg").read_text()
    assert "Warning" not in log and "error" not in log.lower(), log
    assert (tmp_path / "paper.bbl").read_text().count("\\bibitem") == len(_entries(BIB.read_text()))
