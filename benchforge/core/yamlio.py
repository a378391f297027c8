"""YAML reading shared by every spec format (domain specs, task specs, mutation catalogues)."""

from __future__ import annotations

import re
from typing import Any

import yaml


class _SpecYamlLoader(yaml.SafeLoader):
    """YAML 1.1 reads ``on``/``off``/``yes``/``no`` as booleans; specs mean the words."""


_SpecYamlLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SpecYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def read_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_SpecYamlLoader)
