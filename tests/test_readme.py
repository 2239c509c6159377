from tests.conftest import REPO


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    test_lines = [line for line in readme.splitlines() if "pip install -e '.[test]'" in line]
    assert len(test_lines) == 1 and test_lines[0].endswith("pytest")
    assert "pip install -e '.[test]'" in ci  # .ci/run takes that very line from the README


def test_readme_main_command_ends_with_the_default_job():
    readme = (REPO / "README.md").read_text()
    assert any(line.startswith("python3 -m venv") and line.endswith("snakemake --cores 1")
               for line in readme.splitlines())
