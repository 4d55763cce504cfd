"""The request side of a grammar: the tools, the tool choice, and where a tool call's name and
arguments sit in what the model writes.

* `tool_specs` reads tools in the `apply_chat_template(tools=...)` format (JSON-schema dicts
  or Python functions) into `ToolSpec`s.
* `ToolChoice` is ``tool_choice`` and ``parallel_tool_calls`` as a request gives them.
* `call_shape` reads a tool field's `transform` backwards: which named group or which key
  of the parsed body must hold the function name, and which the arguments, so that the
  field's value is ``{"type": "function", "function": {"name": ..., "arguments": {...}}}``.
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, field
from typing import Any

from ..template import FieldSpec


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name and its parameters' JSON Schema (an object schema, closed: keys outside
    ``properties`` are not written unless ``additionalProperties`` says otherwise)."""

    name: str
    parameters: dict


def tool_specs(tools: list | None) -> list[ToolSpec]:
    """`tools` (JSON-schema dicts, ``{"type": "function", "function": {...}}`` or the bare
    function dict, or Python functions with type hints and docstrings) as `ToolSpec`s.

    Raises:
        ValueError: a tool is neither a dict nor a function, has no string ``name``, its
            ``parameters`` is not an object, or two tools share a name.
    """
    specs: list[ToolSpec] = []
    for index, tool in enumerate(tools or []):
        if inspect.isfunction(tool) or inspect.ismethod(tool):
            from transformers.utils import get_json_schema

            tool = get_json_schema(tool)
        if not isinstance(tool, dict):
            raise ValueError(f"tools[{index}]: must be a JSON schema dict or a function")
        function = tool.get("function", tool)
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"tools[{index}]: has no function name")
        parameters = function.get("parameters")
        if parameters is None:
            parameters = {"type": "object", "properties": {}}
        if not isinstance(parameters, dict):
            raise ValueError(f"tools[{index}] ({name}): 'parameters' must be a JSON Schema object")
        parameters = copy.deepcopy(parameters)
        parameters.setdefault("type", "object")
        parameters.setdefault("properties", {})
        parameters.setdefault("additionalProperties", False)
        if any(spec.name == name for spec in specs):
            raise ValueError(f"tools[{index}]: a second tool named {name!r}")
        specs.append(ToolSpec(name, parameters))
    return specs


@dataclass(frozen=True)
class ToolChoice:
    """What the request asks of tool calls.

    Attributes:
        mode: ``"auto"`` (calls or text), ``"required"`` (at least one call), ``"none"`` (no
            call) or ``"named"`` (only calls of `function`).
        function: the one function allowed in ``"named"`` mode.
        parallel: False when at most one call may be made (``parallel_tool_calls=false``).
    """

    mode: str = "auto"
    function: str | None = None
    parallel: bool = True

    @classmethod
    def read(cls, tool_choice: Any = "auto", parallel_tool_calls: bool = True) -> "ToolChoice":
        """From a request's ``tool_choice`` (``"auto"``, ``"required"``, ``"none"``, a function
        name, or ``{"type": "function", "function": {"name": ...}}``) and ``parallel_tool_calls``.

        Raises:
            ValueError: `tool_choice` is none of these.
        """
        if tool_choice is None:
            tool_choice = "auto"
        if isinstance(tool_choice, dict):
            function = tool_choice.get("function")
            name = function.get("name") if isinstance(function, dict) else tool_choice.get("name")
            if not isinstance(name, str) or not name:
                raise ValueError(f"tool_choice: no function name in {tool_choice!r}")
            return cls("named", name, bool(parallel_tool_calls))
        if not isinstance(tool_choice, str) or not tool_choice:
            raise ValueError(
                f"tool_choice must be 'auto', 'required', 'none' or a function name, got {tool_choice!r}"
            )
        if tool_choice in ("auto", "required", "none"):
            return cls(tool_choice, None, bool(parallel_tool_calls))
        return cls("named", tool_choice, bool(parallel_tool_calls))

    @property
    def label(self) -> str:
        """``auto``, ``required``, ``none`` or the function name, plus ``, no parallel``."""
        base = self.function if self.mode == "named" else self.mode
        return base if self.parallel or self.mode == "none" else f"{base}, no parallel"


class _Role:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NAME = _Role("NAME")  # the function name
ARGUMENTS = _Role("ARGUMENTS")  # the arguments object
ANY = _Role("ANY")  # any value (the transform reads it, the message does not need it)
# What a tool field's value must be; the transform is read against it.
_CALL = {"type": "function", "function": {"name": NAME, "arguments": ARGUMENTS}}


@dataclass
class CallShape:
    """Where a tool call's parts come from.

    Attributes:
        groups: named group -> role (`NAME` or `ANY`).
        content: the parsed body's shape: a role, or key -> shape (nested dicts); None when the
            transform does not read the body. With `each`, the shape of each list element.
        each: True for `transform_each` (the body is a list, one element per call).
        problem: why no call can be written, or None.
    """

    groups: dict[str, Any] = field(default_factory=dict)
    content: Any = None
    each: bool = False
    problem: str | None = None


def call_shape(spec: FieldSpec) -> CallShape:
    """Read `spec`'s transform backwards (see the module docstring)."""
    transform = spec.transform if spec.transform is not None else "{content}"
    assignments: list[tuple[str, tuple[str, ...], Any]] = []
    _walk(transform, _CALL, assignments)
    shape = CallShape(each=spec.transform_each)
    roles = [role for _, _, role in assignments]
    if not any(_holds(role, NAME) for role in roles):
        shape.problem = f"{spec.path}.transform: gives no function name"
        return shape
    if not any(_holds(role, ARGUMENTS) for role in roles):
        shape.problem = f"{spec.path}.transform: gives no arguments"
        return shape
    scope: dict[str, Any] = {}
    for variable, path, role in assignments:
        if not path:
            if variable in scope:
                shape.problem = f"{spec.path}.transform: reads {variable!r} twice"
                return shape
            scope[variable] = role
            continue
        node = scope.setdefault(variable, {})
        if not isinstance(node, dict):
            shape.problem = f"{spec.path}.transform: reads {variable!r} both whole and by key"
            return shape
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = role
    if spec.transform_each:
        shape.content = {key: value for key, value in scope.items() if key != "content"}
        if "content" in scope:
            shape.problem = f"{spec.path}.transform: reads 'content' in transform_each"
        return shape
    shape.content = scope.pop("content", None)
    shape.groups = scope
    return shape


def _holds(role: Any, wanted: _Role) -> bool:
    if role is wanted:
        return True
    return isinstance(role, dict) and any(_holds(value, wanted) for value in role.values())


def _walk(transform: Any, expected: Any, out: list) -> None:
    """Collect `(variable, path, role)` for each placeholder of `transform` placed where the
    message needs `expected`."""
    if isinstance(transform, str) and transform.startswith("{") and transform.endswith("}"):
        variable, *path = transform[1:-1].split(".")
        out.append((variable, tuple(path), _role_of(expected)))
        return
    if isinstance(transform, dict):
        for key, value in transform.items():
            inner = expected.get(key, ANY) if isinstance(expected, dict) else ANY
            _walk(value, inner, out)
    elif isinstance(transform, list):
        for value in transform:
            _walk(value, ANY, out)


def _role_of(expected: Any) -> Any:
    if isinstance(expected, dict):
        return {key: _role_of(value) for key, value in expected.items() if key != "type"}
    if isinstance(expected, _Role):
        return expected
    return ANY


def shape_schema(shape: Any, tool: ToolSpec, definitions: dict | None = None) -> dict:
    """The JSON Schema a value of `shape` must follow for a call of `tool`.

    The tool's parameters may sit inside a larger schema (the call object, a list of calls), so
    their root definitions (``$defs``, ``definitions``) move into `definitions` under names
    that start with the tool's name, and their local ``$ref`` s are rewritten to match: the
    caller puts `definitions` at the root as ``$defs``. Without `definitions` the parameters
    are returned as they are."""
    if shape is NAME:
        return {"type": "string", "enum": [tool.name]}
    if shape is ARGUMENTS:
        return tool.parameters if definitions is None else _hoisted(tool, definitions)
    if isinstance(shape, dict):
        return {
            "type": "object",
            "properties": {
                key: shape_schema(value, tool, definitions) for key, value in shape.items()
            },
            "required": list(shape),
            "additionalProperties": False,
        }
    return {"type": "string"}


def _hoisted(tool: ToolSpec, definitions: dict) -> dict:
    """`tool`'s parameters with their root definitions moved into `definitions` and every
    local ``$ref`` rewritten to point there (a reference to anything else in the parameters
    points into a copy of them kept there too)."""
    stem = tool.name.replace("~", "_").replace("/", "_")
    parameters = copy.deepcopy(tool.parameters)
    own = {}
    for key in ("$defs", "definitions"):
        if isinstance(parameters.get(key), dict):
            own[key] = parameters.pop(key)
    whole = [False]

    def target(ref: str) -> str:
        for key in own:
            lead = f"#/{key}/"
            if ref.startswith(lead):
                name, _, rest = ref[len(lead) :].partition("/")
                return f"#/$defs/{stem}.{name}" + (f"/{rest}" if rest else "")
        whole[0] = True
        return f"#/$defs/{stem}" + ref[1:]

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: target(value)
                if key == "$ref" and isinstance(value, str) and value.startswith("#")
                else rewrite(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    parameters = rewrite(parameters)
    for key, table in own.items():
        for name, schema in table.items():
            definitions[f"{stem}.{name}"] = rewrite(schema)
    if whole[0]:
        definitions[stem] = parameters
    return parameters
