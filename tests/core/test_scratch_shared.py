"""A run's scratch folder is shared by every process running that run id at once (a nightly
and its resume, two backfills): the first to finish used to remove it under the others, which
then failed writing their task's workspace (CI: FileNotFoundError on ``.materials/.../TASK.md``).
The last holder out removes it; a crashed holder's lock goes with its process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from benchforge.core.scratch import shared_until_last


def test_the_last_holder_out_removes_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "workspaces" / "nightly"
    with shared_until_last(folder):
        with shared_until_last(folder):
            (folder / ".materials").mkdir(parents=True)
            (folder / ".materials" / "TASK.md").write_text("x")
        assert (folder / ".materials" / "TASK.md").read_text() == "x"  # still in use
    assert not folder.exists()


def test_a_holder_in_another_process_keeps_it_until_it_ends(tmp_path: Path) -> None:
    folder = tmp_path / "workspaces" / "nightly"
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                from pathlib import Path
                from benchforge.core.scratch import shared_until_last
                with shared_until_last(Path({str(folder)!r})):
                    print("holding", flush=True)
                    sys.stdin.readline()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "holding"
        with shared_until_last(folder):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "w").write_text("x")
        assert (folder / "w").exists()  # the other process still holds it
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
    assert not folder.exists()  # the child was the last out


def test_a_holder_that_died_does_not_keep_it(tmp_path: Path) -> None:
    folder = tmp_path / "workspaces" / "killed"
    script = (
        "import os\nfrom pathlib import Path\n"
        "from benchforge.core.scratch import shared_until_last\n"
        f"with shared_until_last(Path({str(folder)!r})):\n"
        "    Path(" + repr(str(folder)) + ").mkdir(parents=True)\n"
        "    os._exit(9)\n"
    )
    assert subprocess.run([sys.executable, "-c", script], check=False).returncode == 9
    assert folder.exists()  # left by the crash
    with shared_until_last(folder):
        pass
    assert not folder.exists()  # the next run of the id, alone, removes it
