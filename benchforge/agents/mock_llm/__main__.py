"""``python -m benchforge.agents.mock_llm --port 8765``: the mock LLM server in the foreground."""

from benchforge.agents.mock_llm.server import main

raise SystemExit(main())
