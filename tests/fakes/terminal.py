"""``troupe chat`` at a pseudo-terminal: keys typed as a person types them."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path


class Terminal:
    """``troupe chat`` at a pseudo-terminal, 80 columns wide."""

    def __init__(
        self,
        workspace: Path,
        data_dir: Path,
        *args: str,
        env: dict[str, str] | None = None,
        unset: tuple[str, ...] = (),
    ) -> None:
        master, slave = pty.openpty()
        # 80x24, as a terminal window opens.
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {
            **{k: v for k, v in os.environ.items() if k not in unset},
            "TERM": "xterm",
            "COLUMNS": "80",
            "TROUPE_MODEL": "offline",
            "TROUPE_ROUTER": "off",
            "TROUPE_DATA_DIR": str(data_dir),
            **(env or {}),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "troupe", "chat", "--workspace", str(workspace), *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            # The pty becomes the session's controlling terminal, so Ctrl-C typed
            # at it is a SIGINT to troupe, as at a real terminal.
            preexec_fn=_take_the_terminal,
        )
        os.close(slave)
        self.master = master
        self.seen = b""

    def expect(self, text: bytes, count: int = 1, within: float = 120.0) -> None:
        """Read until ``text`` has been printed ``count`` times in all."""
        deadline = time.monotonic() + within
        while self.seen.count(text) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"never saw {text!r} x{count}; got {self.seen[-2000:]!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:  # the program ended
                    raise AssertionError(
                        f"ended before {text!r}; got {self.seen[-2000:]!r}"
                    ) from None

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait_until_idle(self, within: float = 30.0) -> None:
        """Wait until troupe's main thread sleeps waiting for a key, as a prompt a
        person looks at does. readline acts on a Ctrl-C only while it waits for
        a key: one that lands while it still draws the line is taken at the next
        key. The kernel names what the thread waits in (``/proc/<pid>/wchan``);
        where it does not say, a short pause stands in."""
        wchan = Path(f"/proc/{self.proc.pid}/wchan")
        deadline = time.monotonic() + within
        waiting = 0
        while waiting < 3:  # three looks in a row: not a pass through the wait
            try:
                where = wchan.read_text()
            except OSError:
                time.sleep(0.3)
                return
            waiting = waiting + 1 if "poll" in where or "select" in where else 0
            if time.monotonic() > deadline:
                raise AssertionError(f"troupe never waited for a key (last in {where!r})")
            time.sleep(0.05)

    def exit_code(self, within: float = 60.0) -> int:
        """Wait for the program to end, reading what it prints; its exit code."""
        deadline = time.monotonic() + within
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:
                    break
        return self.proc.wait(timeout=max(deadline - time.monotonic(), 1.0))

    def close(self) -> None:
        try:
            self.type("/exit\r")
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


def chat_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace holding notes.txt, and a data directory beside it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    return workspace, tmp_path / "data"


def _take_the_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    # An interactive shell starts its foreground job with Ctrl-C's signals at their
    # defaults; the test runner may have inherited them ignored (a background job
    # of a script), and Python keeps an ignored SIGINT ignored.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
