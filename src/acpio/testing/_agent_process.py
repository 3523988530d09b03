"""An agent run as a subprocess for the mock client: started, watched, always stopped.

How this works: the command runs in its own process group with pipes for
stdin, stdout and stderr; the mock client speaks ACP over stdin/stdout. A task
reads stderr as it comes, keeping only the last ``stderr_limit`` bytes (and
the total count), so a chatty agent cannot fill the pipe and stall. Stopping
is bounded and escalates: the agent gets ``exit_timeout`` seconds to exit on
its own once its stdin is closed, then SIGTERM and the same time again, then
SIGKILL for its whole process group (its own children included).
The agent's session store (``acpio.run()`` keeps sessions in a file) follows
``ACPIO_STATE_DIR``/``ACPIO_SESSION_STORE`` of this process, even with a custom
``env``; with neither set, the agent gets a temporary state directory of its
own, removed when it stops: a test never writes the user's sessions.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import anyio
import anyio.abc

from .._rpc.transport import StreamPair, process_streams
from .._store.store_paths import SESSION_STORE_ENV, STATE_DIR_ENV

__all__ = ("EXIT_TIMEOUT", "STDERR_GRACE", "STDERR_LIMIT", "AgentProcess")

EXIT_TIMEOUT: Final = 5.0
"""Seconds the agent gets to exit after its input ends, and again after SIGTERM."""
STDERR_GRACE: Final = 1.0
"""Seconds to wait for the rest of stderr (or the exit code) once the agent is gone."""
STDERR_LIMIT: Final = 64 * 1024
"""How many bytes of the agent's stderr are kept (the last ones)."""


class AgentProcess:
    """One agent command run as a subprocess (see the module docstring)."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stderr_limit: int = STDERR_LIMIT,
        exit_timeout: float = EXIT_TIMEOUT,
    ) -> None:
        self.command: list[str] = list(command)
        """The command line."""
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._state_dir: str | None = None
        self._stderr_limit = stderr_limit
        self._exit_timeout = exit_timeout
        self._process: anyio.abc.Process | None = None
        self._stderr = bytearray()
        self.stderr_total: int = 0
        """How many bytes the agent wrote to stderr in all (more than are kept)."""
        self._stderr_done: anyio.Event | None = None

    @property
    def stderr(self) -> bytes:
        """The last ``stderr_limit`` bytes the agent wrote to stderr."""
        return bytes(self._stderr)

    @property
    def pid(self) -> int | None:
        """The process id once started."""
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The return code once the process exited (negative: killed by that signal)."""
        return self._process.returncode if self._process is not None else None

    async def start(self, group: anyio.abc.TaskGroup, on_output: Callable[[], None]) -> StreamPair:
        """Start the process; its stderr is read in ``group``, calling ``on_output`` after
        each chunk. Returns the streams to speak ACP over.

        :raises OSError: when the command cannot be started.
        """
        self._stderr_done = anyio.Event()
        env = self._agent_env()
        try:
            process = await self._open(env)
        except BaseException:
            if self._state_dir is not None:
                shutil.rmtree(self._state_dir, ignore_errors=True)
                self._state_dir = None
            raise
        self._process = process
        assert process.stderr is not None
        group.start_soon(self._pump_stderr, process.stderr, on_output)
        return process_streams(process)

    async def _open(self, env: dict[str, str]) -> anyio.abc.Process:
        return await anyio.open_process(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self._cwd,
            env=env,
            start_new_session=True,
        )

    def _agent_env(self) -> dict[str, str]:
        """The agent's environment. Where it keeps sessions (``acpio.run()``'s store)
        follows this process's ``ACPIO_STATE_DIR``/``ACPIO_SESSION_STORE`` even with a
        custom ``env``; with neither set anywhere, a temporary directory removed when
        the agent stops, so an agent under test never writes the user's sessions."""
        env = dict(os.environ) if self._env is None else dict(self._env)
        for name in (STATE_DIR_ENV, SESSION_STORE_ENV):
            if name in os.environ and name not in env:
                env[name] = os.environ[name]
        if STATE_DIR_ENV not in env and SESSION_STORE_ENV not in env:
            self._state_dir = tempfile.mkdtemp(prefix="acpio-agent-state-")
            env[STATE_DIR_ENV] = self._state_dir
        return env

    async def _pump_stderr(
        self, stream: anyio.abc.ByteReceiveStream, on_output: Callable[[], None]
    ) -> None:
        try:
            async for chunk in stream:
                self.stderr_total += len(chunk)
                self._stderr += chunk
                if len(self._stderr) > self._stderr_limit:
                    del self._stderr[: len(self._stderr) - self._stderr_limit]
                on_output()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            assert self._stderr_done is not None
            self._stderr_done.set()

    async def settle(self) -> None:
        """Give an agent that closed its stdout a moment to exit and finish its stderr, so a
        report shows its return code and last words."""
        if self._process is not None and self._process.returncode is None:
            with anyio.move_on_after(STDERR_GRACE):
                await self._process.wait()
        if self._stderr_done is not None:
            with anyio.move_on_after(STDERR_GRACE):
                await self._stderr_done.wait()

    async def stop(self) -> None:
        """Stop the process: wait for it to exit, then SIGTERM, then SIGKILL (never raises,
        always bounded). Its stdin must have been closed first."""
        process = self._process
        if process is None:
            return
        with anyio.move_on_after(self._exit_timeout):
            await process.wait()
        # Signals go out with os.kill/os.killpg, never process.terminate()/kill(): those
        # poll the child first (Popen.send_signal), and a poll that reaps a child which
        # just died steals it from asyncio's child watcher, which then reports 255
        # instead of the real exit status.
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
            with anyio.move_on_after(self._exit_timeout):
                await process.wait()
        if process.returncode is None:
            try:
                # The agent's own children go too: it was started in its own group.
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)
            await process.wait()
        # A grandchild may still hold stderr open; do not wait for it forever.
        if self._stderr_done is not None:
            with anyio.move_on_after(STDERR_GRACE):
                await self._stderr_done.wait()
        with contextlib.suppress(Exception):
            await process.aclose()
        if self._state_dir is not None:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            self._state_dir = None
