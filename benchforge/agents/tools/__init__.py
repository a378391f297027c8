"""Tools agents act through. Every command runs in the trial's sandbox."""

from benchforge.agents.tools.de import DE_TOOLS, DeToolbox, ToolOutcome, sandbox_request

__all__ = ["DE_TOOLS", "DeToolbox", "ToolOutcome", "sandbox_request"]
