"""Packaging: every package folder is listed in pyproject.toml, so wheels contain them all."""

from __future__ import annotations

from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = {"harness": "harness", **config["package-dir"]}
    listed = set(config["packages"])
    for name, folder in mapping.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder).parts
            assert ".".join((name, *relative)) in listed, f"{init.parent} is not in [tool.setuptools] packages"


def test_every_builtin_entry_point_module_exists():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for name, module in project["entry-points"]["harness"].items():
        top, *rest = module.split(".")
        folder = {"harness_tasks": "tasks", "harness_models": "models"}.get(top, top)
        assert (REPO / folder / Path(*rest) / "__init__.py").is_file() or (REPO / folder / Path(*rest)).with_suffix(
            ".py"
        ).is_file(), name
