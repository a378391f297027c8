"""The judges' mock-server fixtures, for the lake judges' tests."""

from tests.evaluation.judges.conftest import make_judge, mock_server

__all__ = ["make_judge", "mock_server"]
