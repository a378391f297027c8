"""A local OpenAI-compatible mock LLM server for tests and the offline demo.

    with run_server(config=MockServerConfig(faults=FaultConfig(rate_429=0.1))) as mock:
        LlmConfig(role="agent", model="mock-echo", base_url=mock.url, api_key="mock")

Models choose the policy (``mock-echo``, ``mock-script:<name>``, ``mock-scripted``); faults
are set at start and per request with the ``x-mock-fault`` header (see ``faults``).

Scripts come from ``agents/mock_llm/scripts/*.yaml`` (shipped, loaded by default: e.g.
``mock-script:react-de-mini-solve``), ``MockServerConfig.scripts_dir`` and
``MockServerConfig.scripts``; script files may embed other files with ``{$file: path}`` (see
``config``).
"""

from benchforge.agents.mock_llm.app import (
    MOCK_FINGERPRINT,
    MOCK_HEADER,
    MockState,
    MockStats,
    create_app,
)
from benchforge.agents.mock_llm.config import (
    BUILTIN_SCRIPTS_DIR,
    PROJECT_ROOT,
    FaultConfig,
    KeyedReply,
    KeyedScript,
    MockServerConfig,
    ScriptCatalog,
    ScriptedReply,
    ScriptedScript,
    ScriptedToolCall,
    ScriptFileError,
    ToolSequenceScript,
    load_builtin_scripts,
    load_script,
    load_scripts_dir,
)
from benchforge.agents.mock_llm.faults import (
    FAULT_HEADER,
    FaultDecision,
    FaultPlanner,
    parse_fault_header,
)
from benchforge.agents.mock_llm.policies import (
    EchoPolicy,
    Policy,
    PolicyError,
    PolicyReply,
    PolicyRequest,
    PolicyResolver,
    PolicyToolCall,
    ScriptedPolicy,
    ToolSequencePolicy,
)
from benchforge.agents.mock_llm.server import (
    MockServerHandle,
    add_arguments,
    config_from_args,
    main,
    run_server,
    serve,
)

__all__ = [
    "BUILTIN_SCRIPTS_DIR",
    "FAULT_HEADER",
    "MOCK_FINGERPRINT",
    "MOCK_HEADER",
    "PROJECT_ROOT",
    "EchoPolicy",
    "FaultConfig",
    "FaultDecision",
    "FaultPlanner",
    "KeyedReply",
    "KeyedScript",
    "MockServerConfig",
    "MockServerHandle",
    "MockState",
    "MockStats",
    "Policy",
    "PolicyError",
    "PolicyReply",
    "PolicyRequest",
    "PolicyResolver",
    "PolicyToolCall",
    "ScriptCatalog",
    "ScriptFileError",
    "ScriptedPolicy",
    "ScriptedReply",
    "ScriptedScript",
    "ScriptedToolCall",
    "ToolSequencePolicy",
    "ToolSequenceScript",
    "add_arguments",
    "config_from_args",
    "create_app",
    "load_builtin_scripts",
    "load_script",
    "load_scripts_dir",
    "main",
    "parse_fault_header",
    "run_server",
    "serve",
]
