"""A tool: a typed function an agent calls by name, with the JSON schema the model sees derived
from the function's signature.

    @tool
    async def bash(env: TaskEnvironment, command: str) -> ToolOutcome:
        \"\"\"Run a bash command in the workspace (no network).\"\"\"

The parameter typed ``TaskEnvironment`` (any name) is the trial the call acts on; it is passed
by the caller and is not part of the schema. Every other parameter becomes a field of the
tool's parameters model (pydantic): its type, its default, and its description, taken from
``Annotated[..., Field(description=...)]`` or else from the docstring's ``Args:`` section. The
tool's description is the docstring above ``Args:``, its lines joined.

The schema leaves out titles and defaults (a default worth telling the model is said in the
description) and shows an optional parameter (``x: str | None = None``) as its type: to the
model, leaving it out is how it is not given. Arguments that do not validate come back to the
agent as a tool error, as does any ``ToolError``, ``ValueError`` or ``OSError`` the tool raises
(a path outside the workspace, a file that cannot be written); other exceptions are bugs and
propagate.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import PydanticUndefined, core_schema

if TYPE_CHECKING:
    from benchforge.agents.protocol import TaskEnvironment

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what OpenAI-compatible APIs accept as a name


class ToolOutcome(BaseModel):
    """What one call returns to the agent (``output``) and records as its step."""

    output: str
    ok: bool
    exit_code: int | None = None
    timed_out: bool = False
    terminate: bool = False
    answer: str | None = None


class ToolError(ValueError):
    """A call the tool refuses (bad arguments, a missing file): its message goes back to the
    agent as ``error: <message>``."""


class ToolSchema(GenerateJsonSchema):
    """The parameters' JSON schema as a model is shown it: no titles, no defaults, and an
    optional parameter as its own type."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        generated = super().model_schema(schema)
        generated.pop("title", None)
        return generated

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        inner = schema["schema"]
        if schema.get("default", PydanticUndefined) is None and inner["type"] == "nullable":
            inner = inner["schema"]
        return self.generate_inner(inner)


@dataclass(frozen=True)
class Tool:
    """A tool as the model sees it (``name``, ``description``, ``parameters``) and what runs
    when it is called (``function``, given the trial's environment and the validated
    arguments)."""

    name: str
    description: str
    parameters: type[BaseModel]
    function: Callable[..., Any]
    env_parameter: str | None = None  # the function's TaskEnvironment parameter, if any

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters.model_json_schema(schema_generator=ToolSchema),
            },
        }

    async def call(self, env: TaskEnvironment, arguments: dict[str, Any]) -> ToolOutcome:
        try:
            validated = self.parameters.model_validate(arguments)
        except ValidationError as exc:
            return ToolOutcome(output=f"error: {validation_message(exc)}", ok=False)
        kwargs = {field: getattr(validated, field) for field in type(validated).model_fields}
        if self.env_parameter is not None:
            kwargs[self.env_parameter] = env
        try:
            result = self.function(**kwargs)
            if inspect.isawaitable(result):
                result = await result
        except (ValueError, OSError) as exc:  # ToolError included
            return ToolOutcome(output=f"error: {exc}", ok=False)
        return result if isinstance(result, ToolOutcome) else ToolOutcome(output=result, ok=True)


def validation_message(exc: ValidationError) -> str:
    """One line per error, each naming the argument: ``max_rows: Input should be ...``."""
    lines = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        message = "missing argument" if error["type"] == "missing" else error["msg"]
        lines.append(f"{where}: {message}")
    return "; ".join(lines)


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Makes a :class:`Tool` of ``function`` (used bare, ``@tool``, or with options,
    ``@tool(name=..., description=...)``); see the module docstring."""

    def make(target: Callable[..., Any]) -> Tool:
        return tool_from_function(target, name=name, description=description)

    return make(function) if function is not None else make


def tool_from_function(
    function: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> Tool:
    from benchforge.agents.protocol import TaskEnvironment  # the protocol imports this layer

    tool_name = name or function.__name__
    if not NAME.match(tool_name):
        raise ValueError(f"tool name {tool_name!r}: letters, digits, '_' or '-', at most 64")
    summary, argument_docs = parse_docstring(inspect.getdoc(function) or "")
    hints = get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    env_parameter = None
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name!r}: *args and **kwargs cannot be described")
        annotation = hints.get(parameter.name, Any)
        if annotation is TaskEnvironment:
            env_parameter = parameter.name
            continue
        if parameter.name in argument_docs and not _has_description(annotation):
            annotation = Annotated[annotation, Field(description=argument_docs[parameter.name])]
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    parameters = create_model(
        f"{tool_name}_parameters", __config__=ConfigDict(extra="ignore"), **fields
    )
    text = description if description is not None else summary
    if not text:
        raise ValueError(f"tool {tool_name!r} needs a description (a docstring)")
    return Tool(tool_name, text, parameters, function, env_parameter)


def _has_description(annotation: Any) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(m, FieldInfo) and m.description for m in get_args(annotation)[1:])


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):\s*$")
_ARGUMENT = re.compile(r"^(\*{0,2}\w+)(\s*\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (the text before the first section, each paragraph's lines joined by
    spaces) and the ``Args:`` descriptions by parameter name, of a Google-style docstring."""
    summary: list[str] = []
    arguments: dict[str, list[str]] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        heading = _SECTION.match(line)
        if heading:
            section, current = heading.group(1), None
            continue
        if section is None:
            summary.append(line.strip())
        elif section in ("Args", "Arguments", "Parameters") and line.strip():
            entry = _ARGUMENT.match(line.strip())
            if entry and not line.startswith((" " * 8, "\t\t")):
                current = entry.group(1).lstrip("*")
                arguments[current] = [entry.group(3)]
            elif current is not None:
                arguments[current].append(line.strip())
    paragraphs = "\n".join(summary).strip().split("\n\n")
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return text, {k: " ".join(" ".join(v).split()) for k, v in arguments.items()}
