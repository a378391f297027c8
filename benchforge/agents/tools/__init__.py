"""Tools agents act through, as typed functions (``tool``), grouped into toolsets by name
(``toolsets``). Every command runs in the trial's sandbox."""

from benchforge.agents.tools.tool import Tool, ToolError, ToolOutcome, tool
from benchforge.agents.tools.toolsets import Toolset, register_toolset, toolset

__all__ = ["Tool", "ToolError", "ToolOutcome", "Toolset", "register_toolset", "tool", "toolset"]
